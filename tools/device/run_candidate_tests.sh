#!/usr/bin/env bash
# On the device: the GPU tests of several candidate builds in one call, each from its own carry
# (tools/device/prepare.sh in the branch's worktree, then its .carry copied to /work/main/.carry-NAME), each
# with its own gtest filter, logs under $OUT/NAME/. Exit 1 if any build fails.
# Usage: bash tools/device/run_candidate_tests.sh NAME=FILTER [NAME=FILTER ...]
#   e.g. bash tools/device/run_candidate_tests.sh 'bf16turn=*Bf16*:*Determinism*' 'fp8turn=*Fp8*:*Determinism*'
set -uo pipefail
readonly OUTROOT="${OUT:-$PWD/device-out}"
status=0
for spec in "$@"; do
  name="${spec%%=*}"
  filter="${spec#*=}"
  echo "=== $name ($(cat ".carry-$name/COMMIT")): $filter"
  mkdir -p "$OUTROOT/$name"
  OUT="$OUTROOT/$name" CARRY=".carry-$name" TEST_TIMEOUT="${TEST_TIMEOUT:-200}" \
    bash tools/device/run_gpu_tests.sh "$filter" > "$OUTROOT/$name/run.log" 2>&1
  rc=$?
  # The summary lines only; the whole log comes back in $OUT/NAME/.
  grep -E "^\[  (PASSED|FAILED) |tests? from .* ran|^PASS|^FAIL|: exit|^\[  FAILED" "$OUTROOT/$name/run.log"
  (( rc == 0 )) || { echo "=== $name: FAILED (exit $rc)"; status=1; }
done
exit $status
