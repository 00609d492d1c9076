#!/usr/bin/env bash
# On the device, for a build with one of bench/candidates/diag-fp8-trace*.patch only (diag-fp8-trace on main,
# -q2 after fp8-q2.patch, -jn after fp8-q2.patch and fp8-q2-jobnext.patch; bench/candidates/README.md): the
# FP8 kernels' tile-boundary stamps of CTA 0 at the protocol's short shapes, each summed up by
# bench/fp8_tile_trace.py: the medians print here, and $OUT/trace.tgz holds each shape's CSV, the zyfa
# command's log and the whole summary (one file: a device call brings back only a few).
# Here: tools/device/prepare_candidate.sh trace bench/candidates/diag-fp8-trace.patch; there, carrying .carry-trace:
#   OUT=$OUT/main CARRY=.carry-trace bash tools/device/run_fp8_trace.sh
set -uo pipefail
readonly OUTDIR="${OUT:-$PWD/trace-out}"
readonly CARRY="${CARRY:-.carry-trace}"
readonly WORK="$(mktemp -d)"
mkdir -p "$OUTDIR"
export LD_LIBRARY_PATH="$PWD/$CARRY${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
# name: zyfa command arguments (gaussian std 0.1 as zyfa_bench's kernel mode)
shapes=(
  "gqa-d128-4k:--seqlen 4096 --heads 64 --heads-k 16"
  "llama-4k:--seqlen 4096 --heads 64 --heads-k 8"
  "llama-8k:--seqlen 8192 --heads 64 --heads-k 8"
  "gqa-d128-16k:--seqlen 16384 --heads 16 --heads-k 4"
  "mha-d192-8k:--seqlen 8192 --heads 32 --heads-k 32 --d 192"
)
for s in "${shapes[@]}"; do
  name="${s%%:*}"
  read -r -a args <<< "${s#*:}"
  ZYFA_FP8_TRACE_OUT="$WORK/trace-$name.csv" timeout -k 5 60 "$CARRY"/zyfa --dtype fp8 --std 0.1 --iters 5 \
    "${args[@]}" > "$WORK/trace-$name.log" 2>&1 || status=1
  python3 bench/fp8_tile_trace.py "$WORK/trace-$name.csv" > "$WORK/trace-$name.txt" 2>&1 || status=1
  echo "== $name: $(tail -1 "$WORK/trace-$name.log")"
  sed -n '/^medians/,$p' "$WORK/trace-$name.txt"
  # When every CTA's consumers finished (diag-fp8-trace-jn since session 44): the tail, the SM clock measured in
  # the kernel, and CTA 0's share of the call at it.
  if [[ -s "$WORK/trace-$name.csv.spans.csv" ]]; then
    ms="$(sed -n 's/^time \([0-9.]*\) ms\/call.*/\1/p' "$WORK/trace-$name.log")"
    python3 bench/fp8_cta_spans.py "$WORK/trace-$name.csv.spans.csv" --trace "$WORK/trace-$name.csv" \
      ${ms:+--ms "$ms"} \
      > "$WORK/spans-$name.txt" 2>&1 || status=1
    cat "$WORK/spans-$name.txt"
  fi
done
tar czf "$OUTDIR/trace.tgz" -C "$WORK" . || status=1
exit $status
