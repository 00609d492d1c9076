#!/usr/bin/env bash
# Settles whose fault cuDNN FP8's illegal address at d_qk = 192, d_v = 128 is (bench/NOTES.md, 2026-11-29: every
# plan timed faulted, so zyfa_bench refuses the shape). Runs zyfa_bench's own cuDNN FP8 graph for that shape
# in processes of its own: first under compute-sanitizer memcheck at a small S, whose report names the
# faulting kernel and how far outside which allocation it read or wrote, then plain at the benchmark's S.
# Carry a bench carry (tools/device/prepare_bench.sh or prepare_candidate.sh): CARRY=.carry-bench-NAME.
# Output: $OUT/cudnn-d192-*.log and the records of the runs that finished ($OUT/cudnn-d192-*.json).
set -uo pipefail
readonly CARRY="${CARRY:-.carry-bench}"
readonly OUTDIR="${OUT:-$PWD/probe-out}"
readonly SMALL_S="${SMALL_S:-1024}"
readonly SEQLENS="${SEQLENS:-4096 16384}"
readonly STEP_TIMEOUT="${STEP_TIMEOUT:-150}"
mkdir -p "$OUTDIR"
source tools/device/bench_env.sh > /dev/null
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/compute-sanitizer/compute-sanitizer)"
export ZYFA_BENCH_TRY_CUDNN_FP8_DQK_NE_DV=1
readonly BENCH=("$CARRY/zyfa_bench" --mode=kernel --impls=cudnn --dtypes=fp8 --repeats=1)

for family in mha-d192 gqa-d192; do
  log="$OUTDIR/cudnn-d192-$family-memcheck-s$SMALL_S.log"
  timeout -k 5 "$STEP_TIMEOUT" "$sanitizer" --tool memcheck --print-limit 10 "${BENCH[@]}" --families="$family" \
    --seqlens="$SMALL_S" --json="$OUTDIR/cudnn-d192-$family-memcheck-s$SMALL_S.json" > "$log" 2>&1
  echo "$family memcheck S=$SMALL_S: rc $? ($(grep -c 'Invalid' "$log") invalid accesses reported)"
  grep -m 6 -E "Invalid|is out of bounds|bytes (before|after)|Address .* is|========= +(Host|Device) Frame|plan" "$log"
  for s in $SEQLENS; do
    log="$OUTDIR/cudnn-d192-$family-s$s.log"
    timeout -k 5 "$STEP_TIMEOUT" "${BENCH[@]}" --families="$family" --seqlens="$s" \
      --json="$OUTDIR/cudnn-d192-$family-s$s.json" > "$log" 2>&1
    echo "$family S=$s: rc $?"
    grep -E "plan|context lost|illegal|TFLOP|error" "$log" | tail -8
  done
done
