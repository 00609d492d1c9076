#!/usr/bin/env python3
"""Where a key block's time goes in a kernel's key loop: sums up the timeline stamps that a trace build of the
zyfa command writes (bench/candidates/diag-bf16-trace.patch: ZYFA_TRACE_OUT=FILE), per consumer warpgroup.

  python3 bench/trace_summary.py trace.csv [--skip 8]

Input: CSV rows "consumer,block,P1,P2,...,Pn", SM clock stamps of the points P1..Pn of one key block in the
order the warp passes them; or "consumer,tile,P1,...,Pn", the same for one query tile's boundaries (the trace
build's FILE.tiles.csv: before the Q wait, Q there, the first turn and its S, the first softmax, the last P V's
turn started, acquired and waited, the store done; its gap is the store to the next tile's Q wait). Output, per consumer, in cycles: each stage Pi -> Pi+1, named after its end point
(the BF16 trace's points start, turn, issued, scores, softmax, done give the stages turn, issued (the K and V
waits and the wgmma issue), scores (the S wait), softmax and done (the P V wait and the rescale)), then gap
(the last point of one block to the first of the next: a tile's epilogue and first block where it is large)
and period (first point to first point).
"""
import argparse
import csv
import statistics
import sys


def read_blocks(lines):
    reader = csv.reader(lines)
    header = next(reader)
    if header[0] != "consumer" or header[1] not in ("block", "tile") or len(header) < 4:
        raise ValueError(f"not a trace: header {header}")
    points = header[2:]
    blocks = {}
    for row in reader:
        if not row:
            continue
        values = [int(v) for v in row]
        blocks.setdefault(values[0], []).append((values[1], values[2:]))
    for c in blocks:
        blocks[c].sort()
    return points, blocks


def summarize(points, blocks, skip):
    """{consumer: {stage: [cycles per block]}} over the blocks after the first `skip`."""
    out = {}
    for c, rows in sorted(blocks.items()):
        stamps = [s for _, s in rows[skip:]]
        if len(stamps) < 2:
            continue
        stages = {}
        for i in range(1, len(points)):
            stages[points[i]] = [s[i] - s[i - 1] for s in stamps]
        stages["gap"] = [n[0] - p[-1] for p, n in zip(stamps, stamps[1:])]
        stages["period"] = [n[0] - p[0] for p, n in zip(stamps, stamps[1:])]
        out[c] = stages
    return out


def table(summary):
    lines = ["| consumer | stage | median | mean | p10 | p90 | share of the mean period |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for c, stages in summary.items():
        period = statistics.mean(stages["period"])
        for name, values in stages.items():
            q = statistics.quantiles(values, n=10) if len(values) >= 10 else [min(values)] * 8 + [max(values)]
            share = "" if name == "period" else f"{100 * statistics.mean(values) / period:.1f}%"
            lines.append(f"| {c} | {name} | {statistics.median(values):.0f} | {statistics.mean(values):.0f} | "
                         f"{q[0]:.0f} | {q[-1]:.0f} | {share} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--skip", type=int, default=8, help="first key blocks left out (the pipeline filling)")
    args = ap.parse_args(argv)
    with open(args.csv, newline="") as f:
        points, blocks = read_blocks(f)
    summary = summarize(points, blocks, args.skip)
    if not summary:
        print("trace_summary: fewer than two key blocks after --skip", file=sys.stderr)
        return 1
    print("\n".join(table(summary)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
