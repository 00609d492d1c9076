#!/usr/bin/env bash
# On the device: the Rust and Go bindings' tests, built here by tools/device/prepare_bindings.sh, against
# the carried libzyfa. ZYFA_REQUIRE_DEVICE=1 turns a device test's skip into a failure. Exit 1 if any fails.
# Usage: bash tools/device/run_binding_tests.sh        carry: [".carry-bindings"]
set -uo pipefail
cd "$(dirname "$0")/../.."
readonly CARRY=.carry-bindings
echo "=== bindings at $(cat $CARRY/COMMIT)"
export LD_LIBRARY_PATH="$PWD/$CARRY${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ZYFA_REQUIRE_DEVICE=1 \
  ZYFA_ABI_PROBE="$PWD/$CARRY/zyfa_abi_probe"
status=0
for program in "$CARRY"/zyfa_go.test "$CARRY"/rust_*.test; do
  [[ -x $program ]] || continue
  case $program in
    *_go.test) args=(-test.count=1 -test.v) ;;
    *) args=(--test-threads=1) ;;
  esac
  # The summary lines and every failure; a passing test's chatter stays out.
  timeout 300 "$program" "${args[@]}" > run.log 2>&1
  rc=$?
  echo "--- $(basename "$program"): exit $rc"
  grep -E "^(--- (FAIL|SKIP)|ok|FAIL|PASS$|test result|test .* FAILED|thread .* panicked)" run.log | head -40
  grep -E "relative RMS error" run.log | head -20
  (( rc == 0 )) || grep -E "ZYFA_TEST_SEED" run.log | head -20  # to replay a failure
  (( rc == 0 )) || status=1
done
rm -f run.log
exit $status
