#!/usr/bin/env python3
"""Summarizes an A/B of zyfa builds timed round by round (tools/device/run_bench_ab.sh), from the part files
run_bench.sh wrote for each run (SCRATCH-NAME-ROUND/part-kernel.json, or part-sustained.json for an A/B in
sustained mode, AB_PART=sustained, where the GPU sits at its power cap as in the 16K-32K records):

  python3 bench/ab_summary.py SCRATCH NAME [NAME...]

Per case, each build's median TFLOP/s over every repeat of every round and its ratio to the first build's;
then each build's SM clock and power under load. Exit 1 where a case failed or the builds timed it unequally
often (a build that lost repeats is not compared on fewer).
"""
import collections
import glob
import json
import os
import statistics
import sys

# run_bench.sh's parts that time zyfa (each record's mode is its part's name).
TIMED_PARTS = ("kernel", "sustained")


def case_name(r):
    """One case of the A/B: what zyfa_bench timed, without the build."""
    name = f"{r['dtype']}/{r['family']}/S{r['seqlen']}/{r['inputs']}/std{r.get('input_std') or 0:g}"
    if r.get("mode") != "kernel":
        name = f"{r.get('mode')}/{name}"
    return name + (f"/{r['p_rounding']}-P" if r.get("p_rounding") else "")


def runs_of(scratch, name):
    """The part files of one build's rounds, in round order (SCRATCH-NAME-ROUND, not another build's
    SCRATCH-NAME-x-ROUND)."""
    prefix = f"{scratch}-{name}-"
    rounds = sorted((int(d[len(prefix):]), d) for d in glob.glob(prefix + "*") if d[len(prefix):].isdigit())
    return [json.load(open(f"{d}/part-{part}.json")) for _, d in rounds for part in TIMED_PARTS
            if os.path.exists(f"{d}/part-{part}.json")]


def summarize(scratch, names, out=sys.stdout):
    """Prints the summary; returns False where a case failed or was timed unequally often."""
    ok = True
    tflops = collections.defaultdict(list)  # (case, build) -> every repeat's TFLOP/s
    parts = {n: runs_of(scratch, n) for n in names}
    for n in names:
        for part in parts[n]:
            for r in part["records"]:
                if r.get("impl") != "zyfa" or r.get("mode") not in TIMED_PARTS:
                    continue
                repeats = r.get("tflops_repeats") or []
                if r.get("tflops") is None or not repeats or any(x is None for x in repeats):
                    print(f"ab_summary: {n}: {case_name(r)}: a repeat failed: {r.get('error', 'no time')}", file=out)
                    ok = False
                    continue
                tflops[(case_name(r), n)].extend(repeats)
    cases = sorted({c for c, _ in tflops})
    if not cases:
        print("ab_summary: no case was timed", file=out)
        return False
    for case in cases:
        counts = {n: len(tflops.get((case, n), [])) for n in names}
        if len(set(counts.values())) > 1:
            print(f"ab_summary: {case}: repeats per build differ {counts}: not compared", file=out)
            ok = False
            continue
        base = statistics.median(tflops[(case, names[0])])
        cells = []
        for n in names:
            med = statistics.median(tflops[(case, n)])
            cells.append(f"{n} {med:7.1f} ({med / base:.3f}x)")
        print(f"{case:50s} " + "  ".join(cells), file=out)
    # The GPU runs these kernels at its power cap, so a build that draws less power also clocks higher
    # (session 15: a diagnostic whose V^T held stale bytes ran 15% faster, most of it from 1965 MHz against
    # 1800-1860): each build's SM clock and power under load, medians over its rounds.
    for n in names:
        clocks = [p.get("clocks_under_load") or {} for p in parts[n]]
        mhz = [c["sm_mhz_median"] for c in clocks if c.get("sm_mhz_median") is not None]
        watts = [c["power_w_median"] for c in clocks if c.get("power_w_median") is not None]
        if mhz:
            print(f"{n}: SM clock {statistics.median(mhz):.0f} MHz, power {statistics.median(watts):.0f} W under load"
                  f" (medians of {len(mhz)} rounds)", file=out)
    return ok


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(0 if summarize(sys.argv[1], sys.argv[2:]) else 1)
