#!/usr/bin/env bash
# On the device: the Rust and Go bindings' tests, built here by tools/device/prepare_bindings.sh, against
# the carried libzyfa. ZYFA_REQUIRE_DEVICE=1 turns a device test's skip into a failure. Exit 1 if any
# program fails, or if the carry is missing or incomplete (nothing run is no pass). A failing program's
# whole log is printed, and every log lands in $OUT/bindings.log when OUT is set.
# Usage: [PROGRAM_TIMEOUT=120] bash tools/device/run_binding_tests.sh        carry: [".carry-bindings"]
set -uo pipefail
cd "$(dirname "$0")/../.."
readonly CARRY=.carry-bindings
readonly PROGRAM_TIMEOUT="${PROGRAM_TIMEOUT:-120}"
[[ -f $CARRY/COMMIT && -x $CARRY/zyfa_go.test && -x $CARRY/rust_zyfa_test_device.test ]] || {
  echo "run_binding_tests: $CARRY lacks COMMIT, zyfa_go.test or the Rust device tests: run prepare_bindings.sh here and carry it" >&2
  exit 1
}
echo "=== bindings at $(cat $CARRY/COMMIT)"
export LD_LIBRARY_PATH="$PWD/$CARRY${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ZYFA_REQUIRE_DEVICE=1 \
  ZYFA_ABI_PROBE="$PWD/$CARRY/zyfa_abi_probe"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0 ran=0
for program in "$CARRY"/zyfa_go.test "$CARRY"/rust_*.test; do
  case $program in
    *_go.test) args=(-test.count=1 -test.v) ;;
    *) args=(--test-threads=1) ;;
  esac
  log="$logs/$(basename "$program").log"
  # --foreground: a caller's own timeout (run_session.sh's step) still reaches the program.
  timeout --foreground "$PROGRAM_TIMEOUT" "$program" "${args[@]}" > "$log" 2>&1
  rc=$?
  ran=$((ran + 1))
  echo "--- $(basename "$program"): exit $rc"
  if (( rc == 0 )); then
    # The summary lines and the measured errors; a passing test's other chatter stays out.
    grep -E "^(--- SKIP|ok|PASS$|test result)" "$log" | head -20
    grep -E "relative RMS error" "$log" | head -20
  else
    cat "$log"  # the reasons, the seeds to replay them (ZYFA_TEST_SEED) and any crash
    status=1
  fi
done
# One file back: a device call returns at most 8 from $OUT.
if [[ -n ${OUT:-} ]]; then
  mkdir -p "$OUT" && for log in "$logs"/*.log; do echo "=== $(basename "$log")"; cat "$log"; done > "$OUT/bindings.log"
fi
echo "=== $ran programs ran"
exit $status
