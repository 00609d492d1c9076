#!/usr/bin/env bash
# Checks cuDNN FP8 at d_qk = 192, d_v = 128, where plan eng2_k24=32 hit illegal addresses (bench/NOTES.md,
# 2026-11-29) and, under compute-sanitizer, writes outside its own shared memory (2026-12-06), as "eng2"
# (engine 2's default knobs) faults, so zyfa_bench times only the plans seen clean there (eng2_k24=7). Runs
# zyfa_bench's cuDNN FP8 graph for the shape in processes of its own: under memcheck at a small S with every
# plan (ZYFA_BENCH_TRY_CUDNN_FP8_DQK_NE_DV=1 puts the others back; memcheck's report names each faulting
# kernel), then plain at the benchmark's S as zyfa_bench tunes it.
# Carry a bench carry (tools/device/prepare_bench.sh or prepare_candidate.sh): CARRY=.carry-bench-NAME.
# Output: $OUT/cudnn-d192-*.log and the records of the runs that finished ($OUT/cudnn-d192-*.json).
set -uo pipefail
readonly CARRY="${CARRY:-.carry-bench}"
readonly OUTDIR="${OUT:-$PWD/probe-out}"
readonly SMALL_S="${SMALL_S:-1024}"  # memcheck's S: 1024 offers eng2_k24=7 and =32, 4096 also eng2
readonly FAMILIES="${FAMILIES:-mha-d192 gqa-d192}"
readonly SEQLENS="${SEQLENS-4096 16384}"  # empty: memcheck only
readonly STEP_TIMEOUT="${STEP_TIMEOUT:-150}"
mkdir -p "$OUTDIR"
source tools/device/bench_env.sh > /dev/null
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/compute-sanitizer/compute-sanitizer)"
readonly BENCH=("$CARRY/zyfa_bench" --mode=kernel --impls=cudnn --dtypes=fp8 --repeats=1)

for family in $FAMILIES; do
  log="$OUTDIR/cudnn-d192-$family-memcheck-s$SMALL_S.log"
  ZYFA_BENCH_TRY_CUDNN_FP8_DQK_NE_DV=1 timeout -k 5 "$STEP_TIMEOUT" \
    "$sanitizer" --tool memcheck --print-limit 100 "${BENCH[@]}" --families="$family" \
    --seqlens="$SMALL_S" --json="$OUTDIR/cudnn-d192-$family-memcheck-s$SMALL_S.json" > "$log" 2>&1
  echo "$family memcheck S=$SMALL_S: rc $? ($(grep -c 'Invalid' "$log") invalid accesses reported)"
  grep -E "^cudnn |Invalid|out of bounds" "$log" | sort | uniq -c | head -12
  grep -E "^=========     at " "$log" | sort | uniq -c
  for s in $SEQLENS; do
    log="$OUTDIR/cudnn-d192-$family-s$s.log"
    timeout -k 5 "$STEP_TIMEOUT" "${BENCH[@]}" --families="$family" --seqlens="$s" \
      --json="$OUTDIR/cudnn-d192-$family-s$s.json" > "$log" 2>&1
    echo "$family S=$s: rc $?"
    grep -E "plan|context lost|illegal|TFLOP|error" "$log" | tail -8
  done
done
