#!/usr/bin/env bash
# On the device, from a build made here (tools/device/prepare.sh, carry [".carry"]): compute-sanitizer's
# memcheck, racecheck, synccheck and initcheck over the GPU tests at small shapes, for each kernel: the
# fallback, the BF16 kernel, the emitted FP8 kernels (lean P at d_qk = 192 and the V^T workspace's pre-pass and
# kernels included), the quantizer, and the public API's dispatch over odd sequence lengths. Every tool's output goes to $OUT/sanitizers.log with its summary line; exit 1 if any
# tool reports an error or a test fails under it.
# Usage: [TOOLS="synccheck ..."] [TOOL_TIMEOUT=s] [CARRY=.carry-NAME] bash tools/device/run_sanitizers.sh [GTEST_FILTER]
# (CARRY: the folder holding the zyfa_gpu_tests to check, for another build; default .carry)
set -uo pipefail
# Small shapes only: the tools slow kernels down 10 to 100 times. Tests that fault on purpose (the sticky
# error), spawn children or fill device memory are not in the list.
patterns=(
  'Shapes/FallbackAccuracy.*_s1_*' 'Shapes/FallbackAccuracy.*_s7_*' 'Shapes/FallbackAccuracy.*_s129_*'
  'Shapes/Bf16Accuracy.*_s1_*' 'Shapes/Bf16Accuracy.*_s7_*' 'Shapes/Bf16Accuracy.*_s129_*'
  'Shapes/Bf16Accuracy.*_s300_*'
  'Shapes/Fp8AsmAccuracy.*_s1_*' 'Shapes/Fp8AsmAccuracy.*_s7_*' 'Shapes/Fp8AsmAccuracy.*_s128_*'
  'Shapes/Fp8AsmAccuracy.*_s129_*'
  # Lean P at d_qk = 192 (session 18's code objects) and the V^T workspace (the pre-pass, then the kernels
  # that copy V^T by TMA): their smallest cases, which need (nheads / nheads_k) * seqlen >= 8K keys.
  'Shapes/Fp8AsmAccuracy.*_s1000_*leanp*' 'Shapes/Fp8AsmAccuracy.*leanp*mmasync' 'Shapes/Fp8VtWorkspace.*_s4097_*' 'Shapes/Fp8VtWorkspace.*_s4100_*'
  'Shapes/Fp8VtWorkspace.*_s6000_*'
  'Shapes/QuantizeGpu.*'
  'Seqlens/ReliabilityOddShapes.*_s1_*' 'Seqlens/ReliabilityOddShapes.*_s2_*'
  'Seqlens/ReliabilityOddShapes.*_s127_*' 'Seqlens/ReliabilityOddShapes.*_s129_*'
  'Seqlens/ReliabilityOddShapes.*_s257_*'
)
readonly FILTER="${1:-$(IFS=:; echo "${patterns[*]}")}"
readonly OUTDIR="${OUT:-$PWD/device-out}"
readonly LOG="$OUTDIR/sanitizers.log"
readonly CARRY="${CARRY:-.carry}"
mkdir -p "$OUTDIR"
export PATH="/usr/local/cuda/bin:$PATH"
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/compute-sanitizer/compute-sanitizer)"
echo "commit $(cat "$CARRY"/COMMIT 2>/dev/null || echo unknown); $("$sanitizer" --version | tail -1)" | tee -a "$LOG"
echo "filter: $FILTER" | tee -a "$LOG"

status=0
for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
  start=$(date +%s)
  echo "=== compute-sanitizer --tool $tool" >> "$LOG"
  timeout -k 5 "${TOOL_TIMEOUT:-120}" "$sanitizer" --tool "$tool" --error-exitcode 1 --print-limit 50 \
    "$CARRY"/zyfa_gpu_tests --gtest_brief=1 --gtest_filter="$FILTER" >> "$LOG" 2>&1
  rc=$?
  summary="$(grep -E '(ERROR|RACECHECK) SUMMARY' "$LOG" | tail -1)"
  tests="$(grep -E '^\[  (PASSED|FAILED)  \]' "$LOG" | tail -2 | tr '\n' ' ')"
  echo "$tool: exit $rc in $(( $(date +%s) - start )) s: $summary; $tests" | tee -a "$LOG"
  [[ $rc -eq 0 ]] || status=1
done
echo "run_sanitizers: exit $status"
exit $status
