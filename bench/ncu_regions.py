#!/usr/bin/env python3
"""How a kernel's warps spend their time, region by region of its SASS: an Nsight Compute SASS page summed
over address ranges that you name.

  python3 bench/ncu_regions.py NAME-sass.csv --region NAME:START:END [--region ...] [--blocks N] [--top 7]

NAME-sass.csv is what tools/device/run_ncu.sh writes (`ncu -i REPORT --page source --csv --print-source sass`).
START and END are hex offsets from the function's first instruction (cuobjdump -sass of the same build gives
them), END excluded. Per region: its share of all stall samples, the warp-instructions it executed (divided by
--blocks, e.g. the launch's key blocks times the warps that run them, to get instructions per block per warp),
the samples per executed instruction (a latency-bound stretch has several times an issue-bound one's), and its
largest stall reasons. Written for session 14's FP8 profile (bench/NOTES.md, session 14, item 3).
"""
import argparse
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_stalls import find_column, number, read_table  # noqa: E402

REASON = re.compile(r"^stall_(\w+)$")  # the per-reason columns; their "(Not Issued)" twins are left out


def parse_region(text):
    """'name:0x3ec0:0x4100' -> (name, 0x3ec0, 0x4100)."""
    name, start, end = text.rsplit(":", 2)
    lo, hi = int(start, 16), int(end, 16)
    if hi <= lo:
        raise ValueError(f"region {name}: END 0x{hi:x} is not after START 0x{lo:x}")
    return name, lo, hi


def summarize(lines, regions, blocks=None, top=7):
    header, rows = read_table(lines)
    address_col = find_column(header, r"address")
    samples_col = find_column(header, r"^warp stall sampling \(all")
    if address_col is None or samples_col is None:
        raise ValueError(f"no Address or 'Warp Stall Sampling (All Samples)' column among {header}")
    executed_col = find_column(header, r"^instructions executed$")
    reasons = [(i, REASON.match(h).group(1)) for i, h in enumerate(header) if REASON.match(h)]
    rows = [r for r in rows if len(r) > max(address_col, samples_col)]
    if not rows:
        raise ValueError("the page has no instructions")
    base = int(rows[0][address_col], 16)
    total = sum(number(r[samples_col]) for r in rows)
    out = ["| region | share of all samples | warp-instructions" + (" per block" if blocks else "") +
           " | samples per instruction | top stall reasons |", "| --- | ---: | ---: | ---: | --- |"]
    for name, lo, hi in regions:
        inside = [r for r in rows if lo <= int(r[address_col], 16) - base < hi]
        samples = sum(number(r[samples_col]) for r in inside)
        executed = sum(number(r[executed_col]) for r in inside) if executed_col is not None else 0.0
        why = Counter()
        for r in inside:
            for i, reason in reasons:
                why[reason] += number(r[i])
        why_total = sum(why.values())
        top_reasons = ", ".join(f"{reason} {100 * v / why_total:.0f}%" for reason, v in why.most_common(top)
                                if v > 0) if why_total else "-"
        per_block = executed / blocks if blocks else executed
        ratio = f"{samples / executed:.3g}" if executed else "-"
        share = 100 * samples / total if total else 0.0
        out.append(f"| {name} | {share:.1f}% | {per_block:.4g} | {ratio} | {top_reasons} |")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv")
    p.add_argument("--region", action="append", required=True, help="NAME:START:END, hex offsets")
    p.add_argument("--blocks", type=float, help="divide the executed instructions by this")
    p.add_argument("--top", type=int, default=7, help="stall reasons per region")
    args = p.parse_args()
    regions = [parse_region(r) for r in args.region]
    with open(args.csv, newline="") as f:
        print("\n".join(summarize(f, regions, args.blocks, args.top)))


if __name__ == "__main__":
    sys.exit(main())
