#!/usr/bin/env python3
"""Sums up when each CTA's consumers finished, in a diag-fp8-trace run (bench/candidates/diag-fp8-trace-jn.patch
writes TRACE.csv.spans.csv beside CTA 0's stamps): each consumer warpgroup's exit from its job loop on the GPU's
one nanosecond clock (%globaltimer_lo), with its SM clock beside it.

It shows what the tile trace (bench/fp8_tile_trace.py, CTA 0 only) cannot:
  - the tail: how long CTAs sit idle at the end while the last ones finish (idle SMs, not slow tiles);
  - the spread of the consumers' exits within each CTA;
  - with --trace, CTA 0's own span in SM cycles from its first stamp to its last consumer's exit, and with --ms
    and --ghz its share of the call time (the rest: launch, the V^T pre-pass, Q's first copy, the tail).

Usage: python3 bench/fp8_cta_spans.py TRACE.csv.spans.csv [--ms MS_PER_CALL] [--trace TRACE.csv] [--ghz GHZ]
"""
import argparse
import csv
import statistics

WRAP = 1 << 32


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spans")
    ap.add_argument("--ms", type=float, help="the call's time per call (ms)")
    ap.add_argument("--trace", help="CTA 0's tile stamps (the zyfa command's ZYFA_FP8_TRACE_OUT)")
    ap.add_argument("--ghz", type=float, help="the SM clock under load, for CTA 0's span in time")
    args = ap.parse_args()
    rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(open(args.spans))]
    if not rows:
        raise SystemExit("fp8_cta_spans: no spans")
    t0 = max(r["end_ns"] for r in rows)  # any stamp serves: distances are signed

    def rel(x):  # 32-bit nanoseconds as signed distances from t0 (a launch is far shorter than 2 s)
        return (x - t0 + WRAP // 2) % WRAP - WRAP // 2

    ctas = {}
    for r in rows:
        ctas.setdefault(r["cta"], []).append(rel(r["end_ns"]))
    last = max(max(e) for e in ctas.values())
    idle = [last - max(e) for e in ctas.values()]  # per CTA: from its last consumer's exit to the launch's last
    spread = [max(e) - min(e) for e in ctas.values()]
    us = 1e-3
    print(f"CTAs stamped: {len(ctas)}")
    print(f"idle at the tail per CTA: median {statistics.median(idle) * us:.1f} us, p90 {pct(idle, 0.9) * us:.1f} us, "
          f"max {max(idle) * us:.1f} us, mean {statistics.mean(idle) * us:.1f} us")
    print(f"consumers' exits within a CTA: median spread {statistics.median(spread) * us:.2f} us, "
          f"max {max(spread) * us:.2f} us")
    if args.ms:
        call = args.ms * 1e6
        print(f"call time {call * us:.1f} us; mean tail idle = {100 * statistics.mean(idle) / call:.1f}% of it")
    if args.trace and 0 in ctas:
        stamps = []
        for r in csv.DictReader(open(args.trace)):
            stamps += [int(r[f"p{i}"]) for i in range(7) if int(r[f"p{i}"]) != 0]  # p7 is a block count
        ends = [r["end_clock"] for r in rows if r["cta"] == 0]
        ref = ends[0]

        def crel(x):
            return (x - ref + WRAP // 2) % WRAP - WRAP // 2

        cycles = max(crel(e) for e in ends) - min(crel(s) for s in stamps)
        line = f"CTA 0: {cycles} cycles from its first stamp to its last consumer's exit"
        if args.ghz and args.ms:
            line += f" = {cycles / args.ghz * 1e-3:.1f} us at {args.ghz} GHz, {100 * cycles / args.ghz / call:.1f}% of the call"
        print(line)


if __name__ == "__main__":
    main()
