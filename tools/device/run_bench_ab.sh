#!/usr/bin/env bash
# On the device: zyfa_bench from several builds, interleaved round by round over the same shapes, for an
# A/B of kernel speed in one call on one warm GPU (the bench binary times kernels only; the zyfa command
# of run_ab.sh also checks against fp64, which costs about 30 s per run at 16K).
# Here, per build: tools/device/prepare_bench.sh BUILD_DIR, then copy .carry-bench to .carry-bench-NAME
# (ignored by git); carry them all (about 4.4 MB each).
# Usage: ROUNDS=2 bash tools/device/run_bench_ab.sh "NAME NAME..." ZYFA_BENCH_FLAGS...
#   e.g. bash tools/device/run_bench_ab.sh "main stsm" --dtypes=fp8 --families=gqa-d128 --seqlens=2048,16384
# Prints every repeat, then per (benchmark, build) the median TFLOP/s over all rounds and its ratio to the
# first build's, then each build's SM clock and power under load; exit 1 if a run fails.
set -uo pipefail
read -r -a names <<< "${1:?usage: run_bench_ab.sh \"NAMES\" ZYFA_BENCH_FLAGS...}"
shift
readonly OUTDIR="${OUT:-$PWD/bench-out}"
mkdir -p "$OUTDIR"
readonly LOG="$OUTDIR/bench_ab.txt"
: > "$LOG"
status=0
# Each run's scratch, SCRATCH-NAME-ROUND: its log (.log) and run_bench.sh's part file (a folder), whose clocks
# the summary reads; this A/B's only.
readonly SCRATCH=/tmp/bench-ab
rm -rf "$SCRATCH"-*
for round in $(seq "${ROUNDS:-2}"); do
  # The builds' order rotates by round, so that drift (clocks, temperature) favours none of them.
  for i in "${!names[@]}"; do
    name="${names[$(( (i + round - 1) % ${#names[@]} ))]}"
    run="$SCRATCH-$name-$round"
    OUT="$run" CARRY=".carry-bench-$name" STEP_TIMEOUT="${STEP_TIMEOUT:-120}" \
      bash tools/device/run_bench.sh kernel --impls=zyfa "$@" > "$run.log" 2>&1 || status=1
    # A repeat that failed (SkipWithError: "ERROR OCCURRED") is a failed run, not a line to parse.
    if grep manual_time "$run.log" | grep -q "ERROR OCCURRED"; then
      echo "run_bench_ab: $name round $round: a repeat failed (see $run.log)" | tee -a "$LOG"
      status=1
    fi
    grep manual_time "$run.log" | grep -v "ERROR OCCURRED" | awk -v n="$name" -v r="$round" \
      '{ sub(/\/rep[0-9]+\/iterations:1\/manual_time/, "", $1); print r, n, $1, $(NF-1) }' | tee -a "$LOG"
  done
done
python3 - "$LOG" "$SCRATCH" "${names[@]}" <<'PY'
import collections, glob, json, os, statistics, sys
log, scratch, names = sys.argv[1], sys.argv[2], sys.argv[3:]
tf = collections.defaultdict(list)
for line in open(log):
    if line.startswith("run_bench_ab:"):
        continue
    r, name, bench, value = line.split()
    # Google Benchmark prints counters of 1000 or more with a k: 1.10632k TFLOP/s.
    tf[(bench, name)].append(float(value[:-1]) * 1e3 if value.endswith("k") else float(value))
# Every build must have timed every benchmark equally often: a build that lost cases is not compared on fewer.
counts = {bench: {n: len(tf.get((bench, n), [])) for n in names} for bench in {b for b, _ in tf}}
uneven = {b: c for b, c in counts.items() if len(set(c.values())) > 1}
for bench, c in sorted(uneven.items()):
    print(f"run_bench_ab: {bench}: samples per build differ {c}: not compared")
for bench in sorted({b for b, _ in tf} - set(uneven)):
    base = statistics.median(tf[(bench, names[0])]) if tf.get((bench, names[0])) else None
    cells = []
    for n in names:
        if (bench, n) in tf:
            med = statistics.median(tf[(bench, n)])
            cells.append(f"{n} {med:7.1f}" + (f" ({med / base:.3f}x)" if base else ""))
    print(f"{bench:60s} " + "  ".join(cells))
# The SM clock and power under load per build (run_bench.sh's samples, medians over the rounds): the GPU runs
# these kernels at its power cap, so a build that draws less power also clocks higher (session 15: a diagnostic
# whose V^T held stale bytes ran 15% faster, most of it from 1965 MHz against 1800-1860).
for n in names:
    runs = [d for d in glob.glob(f"{scratch}-{n}-*") if d[len(f"{scratch}-{n}-"):].isdigit()]  # not NAME-x's
    clocks = [json.load(open(f"{d}/part-kernel.json")).get("clocks_under_load") or {}
              for d in sorted(runs) if os.path.exists(f"{d}/part-kernel.json")]
    mhz = [c["sm_mhz_median"] for c in clocks if c.get("sm_mhz_median") is not None]
    watts = [c["power_w_median"] for c in clocks if c.get("power_w_median") is not None]
    if mhz:
        print(f"{n}: SM clock {statistics.median(mhz):.0f} MHz, power {statistics.median(watts):.0f} W under load"
              f" (medians of {len(mhz)} rounds)")
sys.exit(1 if uneven else 0)
PY
[[ $? -eq 0 ]] || status=1
exit $status
