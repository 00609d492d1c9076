#!/usr/bin/env bash
# On the device, from a build made here (tools/device/prepare.sh, carry [".carry"]): the whole GPU test
# suite, the SASS check of the kernels, and the zyfa command on a few shapes. Logs go to $OUT.
# Usage: [CARRY=.carry-NAME] bash tools/device/run_gpu_tests.sh [GTEST_FILTER] (default: every test)
# (CARRY: the folder of another build, default .carry)
set -uo pipefail
readonly FILTER="${1:-*}"
readonly OUTDIR="${OUT:-$PWD/device-out}"
readonly CARRY="${CARRY:-.carry}"
mkdir -p "$OUTDIR"
export PATH="/usr/local/cuda/bin:$PATH"  # cuobjdump for the SASS check
exec > >(tee -a "$OUTDIR/gpu_tests.log") 2>&1
echo "commit $(cat "$CARRY"/COMMIT)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
status=0
# Tests time out one by one rather than the whole call: a hang shows which test it was. The whole suite took
# 252 s on the H200 (2026-12-01), 78 s of it the three cases at 32767 keys.
timeout -k 5 "${TEST_TIMEOUT:-360}" "$CARRY"/zyfa_gpu_tests --gtest_brief=1 --gtest_filter="$FILTER" \
  --gtest_output="json:$OUTDIR/gpu_tests.json" || status=1
if [[ -x tools/check_sass.sh ]]; then bash tools/check_sass.sh "$CARRY"/libzyfa.so || status=1; fi
# The FP8 kernels' code objects (carried beside their manifest by prepare.sh): QGMMA, no local memory, lean P's
# key loop without a MUFU.EX2 per score.
cuobjdump_path=$(bash tools/find_cuobjdump.sh)
if [[ -z "$cuobjdump_path" ]]; then
  echo "run_gpu_tests: FAIL: no cuobjdump on this machine, so the FP8 SASS check cannot run"; status=1
else
  bash tools/check_fp8_sass.sh "$cuobjdump_path" "$CARRY"/asmgen/manifest.txt || status=1
fi
# The main job on the GPU: one call per kernel family, checked against fp64 (exit 1 over tolerance).
for args in "--dtype bf16 --d 128" "--dtype bf16 --d 192" "--dtype fp8 --d 128" "--dtype fp8 --d 192"; do
  # shellcheck disable=SC2086
  timeout -k 5 60 "$CARRY"/zyfa $args --seqlen 4096 --heads 32 --heads-k 8 --iters 20 || status=1
done
echo "run_gpu_tests: exit $status"
exit $status
