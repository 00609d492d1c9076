#!/usr/bin/env bash
# On the device: zyfa_bench from several builds, interleaved round by round over the same shapes, for an
# A/B of kernel speed in one call on one warm GPU (the bench binary times kernels only; the zyfa command
# of run_ab.sh also checks against fp64, which costs about 30 s per run at 16K).
# Here, per build: tools/device/prepare_bench.sh BUILD_DIR, then copy .carry-bench to .carry-bench-NAME
# (ignored by git); carry them all (about 4.4 MB each).
# Usage: ROUNDS=2 bash tools/device/run_bench_ab.sh "NAME NAME..." ZYFA_BENCH_FLAGS...
#   e.g. bash tools/device/run_bench_ab.sh "main stsm" --dtypes=fp8 --families=gqa-d128 --seqlens=2048,16384
# AB_PART=sustained times run_bench.sh's sustained part instead of its kernel part: each case 2 s idle, 1 s
# warm, >= 3 s timed back to back, so the GPU reaches its power cap, as a full run's records do over its many
# cases (an A/B's few short kernel-mode cases stay below it, at 1965 MHz on the H100s here); default S 16K.
# Prints per case each build's median TFLOP/s over every repeat of every round and its ratio to the first
# build's, then each build's SM clock and power under load (bench/ab_summary.py); exit 1 if a run fails.
# $OUT/bench_ab.txt also holds the same summary after each round but the last, and round 1's so far after
# each of its builds but the first and the last, so that a call cut by its time limit keeps what finished.
set -uo pipefail
read -r -a names <<< "${1:?usage: run_bench_ab.sh \"NAMES\" ZYFA_BENCH_FLAGS...}"
shift
readonly PART="${AB_PART:-kernel}"
[[ $PART == kernel || $PART == sustained ]] || { echo "run_bench_ab: AB_PART must be kernel or sustained" >&2; exit 2; }
readonly OUTDIR="${OUT:-$PWD/bench-out}"
mkdir -p "$OUTDIR"
readonly LOG="$OUTDIR/bench_ab.txt"
: > "$LOG"
status=0
# Each run's scratch, SCRATCH-NAME-ROUND: its log (.log) and run_bench.sh's part file (a folder), whose records
# and clocks the summary reads; this A/B's only.
readonly SCRATCH=/tmp/bench-ab
rm -rf "$SCRATCH"-*
# A summary of the builds named so far, into the log only: a call's time limit that cuts the A/B keeps these.
log_summary() {
  local label="$1"
  shift
  { echo "run_bench_ab: $label:"; python3 bench/ab_summary.py "$SCRATCH" "$@"; } >> "$LOG" 2>&1
}
for round in $(seq "${ROUNDS:-2}"); do
  # The builds' order rotates by round, so that drift (clocks, temperature) favours none of them.
  for i in "${!names[@]}"; do
    name="${names[$(( (i + round - 1) % ${#names[@]} ))]}"
    run="$SCRATCH-$name-$round"
    OUT="$run" CARRY=".carry-bench-$name" STEP_TIMEOUT="${STEP_TIMEOUT:-120}" \
      bash tools/device/run_bench.sh "$PART" --impls=zyfa "$@" > "$run.log" 2>&1 || status=1
    echo "run_bench_ab: round $round, $name: $(grep -c manual_time "$run.log") repeats timed" | tee -a "$LOG"
    # Round 1 so far (its builds run in the given order, the first one the baseline): session 48 lost a cut
    # sustained A/B's summary without it. After its last build the summary below (or the round's) says the same.
    if (( round == 1 && i > 0 && i < ${#names[@]} - 1 )); then log_summary "round 1 so far" "${names[@]:0:i+1}"; fi
  done
  if (( round < ${ROUNDS:-2} )); then log_summary "after round $round" "${names[@]}"; fi
done
# Every repeat's TFLOP/s comes from the part files (bench/ab_summary.py), failed repeats included as failures.
python3 bench/ab_summary.py "$SCRATCH" "${names[@]}" | tee -a "$LOG"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
exit $status
