#!/usr/bin/env python3
"""Sums up a diag-fp8-trace CSV (the zyfa command under ZYFA_FP8_TRACE_OUT): CTA 0's tiles in order, where
each consumer warpgroup's time goes at the tile boundary, in key-block periods of its own key loop.

Consumer points (asmgen/fp8_kernel_params.h): p1 Q arrived, p2 block 0's scores and softmax done, p3 the key
loop done, p4 the last P V folded, p5 the later rows' blocks drained, p6 the tile stored, p7 its last key block
(a value). Producer (role 3): p0 before Q's empty wait, p1 Q's copy issued, p2 the tile's last K/V issued.

Usage: python3 bench/fp8_tile_trace.py TRACE.csv [--skip N]   (N: first tiles left out of the medians, default 1)
"""
import argparse
import csv
import math
import statistics

WRAP = 1 << 32


def signed(x, ref):
    """x - ref for 32-bit counters (SM clocks, %globaltimer_lo) that may wrap between them; a launch is far
    shorter than half a wrap (2^31 cycles or ns)."""
    return (x - ref + WRAP // 2) % WRAP - WRAP // 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--skip", type=int, default=1)
    args = ap.parse_args()
    rows = {}
    for r in csv.DictReader(open(args.trace)):
        rows[(int(r["job"]), int(r["slot"]), int(r["role"]))] = [int(r[f"p{i}"]) for i in range(8)]
    tiles = sorted({(j, s) for (j, s, _) in rows})
    consumers = sorted({r for (_, _, r) in rows if r < 3})
    # The first tile's first consumer's Q arrival: any stamp of the kernel serves, distances being signed.
    t0 = next(rows[(j, s, c)][1] for (j, s) in tiles for c in consumers if (j, s, c) in rows)

    def rel(x):
        return signed(x, t0)

    parts = {k: [] for k in ("q_wait", "first", "last_pv", "drain", "store", "boundary", "tile_over")}
    prev_stored = {}
    prev_tile_end = None
    print("tile (job,slot) | consumer: blocks, period, Q wait, block 0, last P V, drain, store (cycles) | "
          "tile time in periods over its longest consumer's blocks | producer: Q empty wait, Q issued -> arrived")
    for n, (j, s) in enumerate(tiles):
        line = []
        periods = []
        ends = []
        longest = 0
        for c in consumers:
            p = rows.get((j, s, c))
            if p is None:
                continue
            q, first, loop, fold, drained, stored = (rel(x) for x in p[1:7])
            blocks = p[7] + 1
            longest = max(longest, blocks)
            period = (loop - first) / (blocks - 1) if blocks > 1 else float("nan")
            periods.append(period)
            ends.append(stored)
            q_wait = q - prev_stored[c] if c in prev_stored else float("nan")
            prev_stored[c] = stored
            line.append(f"c{c}: {blocks} {period:.0f} {q_wait:.0f} {first - q} {fold - loop} {drained - fold} "
                        f"{stored - drained}")
            if n >= args.skip and blocks > 1:
                for key, v in (("q_wait", q_wait), ("first", first - q), ("last_pv", fold - loop),
                               ("drain", drained - fold), ("store", stored - drained)):
                    parts[key].append(v / period)
                parts["boundary"].append((q_wait + (first - q) + (fold - loop) + (drained - fold) +
                                          (stored - drained)) / period)
        measured = [x for x in periods if not math.isnan(x)]
        tile_period = statistics.median(measured) if measured else float("nan")
        tile_end = max(ends)
        over = (tile_end - prev_tile_end) / tile_period - longest if prev_tile_end is not None else float("nan")
        prev_tile_end = tile_end
        if n >= args.skip and not math.isnan(over):
            parts["tile_over"].append(over)
        prod = rows.get((j, s, 3))
        producer = ""
        if prod is not None:
            q_arrived = min(rel(rows[(j, s, c)][1]) for c in consumers if (j, s, c) in rows)
            producer = f"| Q empty wait {rel(prod[1]) - rel(prod[0])}, issued->arrived {q_arrived - rel(prod[1])}"
        print(f"({j},{s}) " + "  ".join(line) + f" | {over:.2f} " + producer)
    print(f"\nmedians over tiles {args.skip}.., in periods of the consumer's own key loop:")
    for key, v in parts.items():
        if v:
            print(f"  {key:9s} {statistics.median(v):6.2f}  (n = {len(v)})")
    print("  (boundary = Q wait + block 0 + last P V + drain + store; a tile of n blocks costs n - 1 periods in "
          "the loop plus that. tile_over = a tile's time from the previous tile's last store, in periods, "
          "minus its longest consumer's blocks: the per-tile cost c of bench/NOTES.md, item 31)")


if __name__ == "__main__":
    main()
