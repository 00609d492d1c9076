#!/usr/bin/env python3
"""Where the warps of one kernel launch wait: sums up the SASS page of an Nsight Compute report.

  python3 bench/ncu_stalls.py NAME-sass.csv [--top 30]

Input: `ncu -i REPORT --page source --csv --print-source sass` (tools/device/run_ncu.sh writes it). Output: the
total of the warp-stall samples, their share per opcode, and the instructions that hold the most samples, each
with the instruction before it (a wait is charged to the instruction that could not issue, so the one before
tells which mbarrier, wgmma or named barrier it waits behind).
"""
import argparse
import csv
import re
import sys
from collections import Counter


def number(text):
    text = (text or "").replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return 0.0


def find_column(header, *patterns):
    for pattern in patterns:
        for i, name in enumerate(header):
            if re.search(pattern, name, re.IGNORECASE):
                return i
    return None


def read_table(lines):
    """(header, rows) of the SASS page: the header is the first row with a Source column (ncu writes a
    preamble line before it)."""
    rows = list(csv.reader(lines))
    for start, header in enumerate(rows):
        if find_column(header, r"^source$") is not None:
            return header, rows[start + 1:]
    raise ValueError("no header with a Source column: is this ncu's --page source --csv output?")


def read_sass(lines):
    """[(address, instruction, samples)] from the CSV's rows, in program order."""
    header, rows = read_table(lines)
    source = find_column(header, r"^source$")
    address = find_column(header, r"address")
    samples = find_column(header, r"stall sampling \(all", r"stall sampling", r"sampl")
    if samples is None:
        raise ValueError(f"no stall-sampling column among {header}")
    out = []
    for row in rows:
        if len(row) <= max(source, samples):
            continue
        out.append((row[address] if address is not None else "", row[source].strip(), number(row[samples])))
    return out


def opcode(instruction):
    """The mnemonic without its predicate: '@!P0 BRA 0x10' -> 'BRA'; 'SYNCS.PHASECHK.TRANS64.TRYWAIT ...' whole."""
    words = instruction.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].rstrip(";") if words else "?"


def summarize(sass, top):
    total = sum(s for _, _, s in sass)
    lines = [f"{len(sass)} instructions, {total:.0f} stall samples"]
    if total <= 0:
        return lines
    by_opcode = Counter()
    for _, ins, s in sass:
        by_opcode[opcode(ins)] += s
    lines.append("by opcode:")
    for op, s in by_opcode.most_common(15):
        lines.append(f"  {100 * s / total:5.1f}%  {op}")
    lines.append(f"top {top} instructions (the one before each in brackets):")
    ranked = sorted(range(len(sass)), key=lambda i: -sass[i][2])[:top]
    for i in ranked:
        addr, ins, s = sass[i]
        before = sass[i - 1][1] if i > 0 else ""
        lines.append(f"  {100 * s / total:5.1f}%  {addr:>8}  {ins}    [{before}]")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv")
    p.add_argument("--top", type=int, default=30)
    args = p.parse_args()
    with open(args.csv, newline="") as f:
        print("\n".join(summarize(read_sass(f), args.top)))


if __name__ == "__main__":
    sys.exit(main())
