#!/usr/bin/env bash
# On the device: Nsight Compute over one launch of a zyfa kernel, run by the zyfa command, or of a peer's kernel,
# run by bench/peers.py, with the warp-state statistics and per-instruction stall sampling, so that one call
# shows where the warps wait (which mbarrier wait, which wgmma wait, which named barrier) instead of only how
# busy the pipes are. Clocks are left alone (--clock-control none). Writes $OUT/NAME.ncu-rep,
# $OUT/NAME-details.csv and $OUT/NAME-sass.csv (the SASS with its samples); here, bench/ncu_stalls.py
# NAME-sass.csv sums them up and bench/ncu_compare.py A-details.csv B-details.csv sets two launches side by side.
# Usage: [CARRY=.carry-NAME] bash tools/device/run_ncu.sh NAME "ZYFA ARGS" [KERNEL_REGEX]
#        RUNNER=peers [CARRY=.carry-bench] bash tools/device/run_ncu.sh NAME "PEERS ARGS" KERNEL_REGEX
# KERNEL_REGEX: zyfa_ (default) matches the emitted FP8 kernels (zyfa_<variant>_attention); bf16_attention the
# BF16 kernel; fallback_attention the fallback; FlashAttnFwdSm90 FlashAttention-3's forward kernel.
# RUNNER=peers runs bench/peers.py (kernel mode, one repeat) with the bench carry's zyfa_bench writing the inputs;
# carry the wheels (.whl) too.
# NCU_METRICS: extra metrics, comma-separated (the details page lists them under "Command line profiler
# metrics"), e.g. the tensor pipe's busy share, which no section's details page holds:
#   NCU_METRICS=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
# e.g.   bash tools/device/run_ncu.sh fp8-2k "--dtype fp8 --d 128 --seqlen 2048 --heads 128 --heads-k 32"
#        RUNNER=peers bash tools/device/run_ncu.sh fa3-bf16-16k "--impls=fa3 --dtypes=bf16 --families=gqa-d128
#          --seqlens=16384" FlashAttnFwdSm90
set -uo pipefail
readonly NAME="${1:?usage: run_ncu.sh NAME \"ZYFA ARGS\" [KERNEL_REGEX]}"
readonly ARGS="${2:?usage: run_ncu.sh NAME \"ZYFA ARGS\" [KERNEL_REGEX]}"
readonly REGEX="${3:-zyfa_}"
readonly OUTDIR="${OUT:-$PWD/device-out}"
readonly RUNNER="${RUNNER:-zyfa}"
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p "$OUTDIR"
if [[ "$RUNNER" == peers ]]; then
  [[ $# -ge 3 ]] || { echo "run_ncu: RUNNER=peers needs the peer's KERNEL_REGEX"; exit 2; }
  readonly CARRY="${CARRY:-.carry-bench}"
  source tools/device/bench_env.sh
  # peers.py warms a peer up (at least 3 calls, in batches 1, 2, 4, ...) before it times: skip its first launches.
  # shellcheck disable=SC2206
  command=(python3 bench/peers.py --bench "$CARRY/zyfa_bench" --mode=kernel --repeats=1 --idle-s=0 $ARGS
           --json "$OUTDIR/$NAME-peers.json")
  skip=5
else
  readonly CARRY="${CARRY:-.carry}"
  # The zyfa command launches the kernel once to check it, then times --iters launches: profile a timed one.
  # shellcheck disable=SC2206
  command=("$CARRY/zyfa" $ARGS --iters 3)
  skip=2
fi
ncu --clock-control none --kernel-name-base demangled --kernel-name "regex:$REGEX" --launch-skip "$skip" --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section InstructionStats --section SourceCounters --section LaunchStats --section Occupancy \
  ${NCU_METRICS:+--metrics "$NCU_METRICS"} -f -o "$OUTDIR/$NAME" "${command[@]}" || exit 1
# ncu exits 0 when no kernel matched, and writes no report then.
[[ -s "$OUTDIR/$NAME.ncu-rep" ]] || { echo "run_ncu: no kernel matched regex:$REGEX"; exit 1; }
# Base units, so that bench/ncu_compare.py sees two reports' values in one unit whatever their magnitudes.
ncu -i "$OUTDIR/$NAME.ncu-rep" --page details --csv --print-units base > "$OUTDIR/$NAME-details.csv" || exit 1
ncu -i "$OUTDIR/$NAME.ncu-rep" --page source --csv --print-source sass > "$OUTDIR/$NAME-sass.csv" || exit 1
echo "run_ncu: $NAME: $(wc -l < "$OUTDIR/$NAME-sass.csv") SASS lines, report $(du -h "$OUTDIR/$NAME.ncu-rep" | cut -f1)"
