#!/usr/bin/env bash
# On the device: Nsight Compute over one launch of a zyfa kernel, run by the zyfa command, with the warp-state
# statistics and per-instruction stall sampling, so that one call shows where the warps wait (which mbarrier
# wait, which wgmma wait, which named barrier) instead of only how busy the pipes are. Clocks are left alone
# (--clock-control none). Writes $OUT/NAME.ncu-rep, $OUT/NAME-details.csv and $OUT/NAME-sass.csv (the SASS with
# its samples); here, bench/ncu_stalls.py NAME-sass.csv sums them up.
# Usage: [CARRY=.carry-NAME] bash tools/device/run_ncu.sh NAME "ZYFA ARGS" [KERNEL_REGEX]
# KERNEL_REGEX: zyfa_ (default) matches the emitted FP8 kernels (zyfa_<variant>_attention); bf16_attention the
# BF16 kernel; fallback_attention the fallback.
# e.g.   bash tools/device/run_ncu.sh fp8-2k "--dtype fp8 --d 128 --seqlen 2048 --heads 128 --heads-k 32"
set -uo pipefail
readonly NAME="${1:?usage: run_ncu.sh NAME \"ZYFA ARGS\" [KERNEL_REGEX]}"
readonly ARGS="${2:?usage: run_ncu.sh NAME \"ZYFA ARGS\" [KERNEL_REGEX]}"
readonly REGEX="${3:-zyfa_}"
readonly OUTDIR="${OUT:-$PWD/device-out}"
readonly CARRY="${CARRY:-.carry}"
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p "$OUTDIR"
# The zyfa command launches the kernel once to check it, then times --iters launches: profile a timed one.
# shellcheck disable=SC2086
ncu --clock-control none --kernel-name "regex:$REGEX" --launch-skip 2 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section SourceCounters --section LaunchStats --section Occupancy \
  -f -o "$OUTDIR/$NAME" "$CARRY/zyfa" $ARGS --iters 3 || exit 1
# ncu exits 0 when no kernel matched, and writes no report then.
[[ -s "$OUTDIR/$NAME.ncu-rep" ]] || { echo "run_ncu: no kernel matched regex:$REGEX"; exit 1; }
ncu -i "$OUTDIR/$NAME.ncu-rep" --page details --csv > "$OUTDIR/$NAME-details.csv" || exit 1
ncu -i "$OUTDIR/$NAME.ncu-rep" --page source --csv --print-source sass > "$OUTDIR/$NAME-sass.csv" || exit 1
echo "run_ncu: $NAME: $(wc -l < "$OUTDIR/$NAME-sass.csv") SASS lines, report $(du -h "$OUTDIR/$NAME.ncu-rep" | cut -f1)"
