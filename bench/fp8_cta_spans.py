#!/usr/bin/env python3
"""Sums up when each CTA's consumers finished, in a diag-fp8-trace run (bench/candidates/diag-fp8-trace-jn.patch
writes TRACE.csv.spans.csv beside CTA 0's stamps): each consumer warpgroup's exit from its job loop on the GPU's
one nanosecond clock (%globaltimer_lo), with its SM clock beside it.

It shows what the tile trace (bench/fp8_tile_trace.py, CTA 0 only) cannot:
  - the tail: how long CTAs sit idle at the end while the last ones finish (idle SMs, not slow tiles);
  - the spread of the consumers' exits within each CTA;
  - the SM clock the kernel ran at, measured in the kernel: within one CTA (one SM), the clock cycles between its
    consumers' first and last exit over the nanoseconds between them. nvidia-smi's 200 ms samples said 1965 MHz
    while this said 1.80 GHz on the same H100 (session 45), so the trace does not take the clock from outside;
  - with --trace, CTA 0's own span in SM cycles from its first stamp to its last consumer's exit, and with --ms
    its share of the call time at that clock, and what comes before its first stamp (the launch, the V^T
    pre-pass, the CTA's setup, Q's first copy): the call less the span and CTA 0's tail.

Usage: python3 bench/fp8_cta_spans.py TRACE.csv.spans.csv [--ms MS_PER_CALL] [--trace TRACE.csv]
"""
import argparse
import csv
import statistics

from fp8_tile_trace import signed


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def read_spans(lines):
    return [{k: int(v) for k, v in r.items()} for r in csv.DictReader(lines)]


def read_trace_stamps(lines):
    """CTA 0's clock stamps of a diag-fp8-trace CSV (p7 is a block count, not a clock; 0 is no stamp)."""
    stamps = []
    for r in csv.DictReader(lines):
        stamps += [int(r[f"p{i}"]) for i in range(7) if int(r[f"p{i}"]) != 0]
    return stamps


# A CTA's exits must lie this far apart for its clock estimate (%globaltimer_lo moves in steps of tens of ns).
MIN_CLOCK_SPAN_NS = 1000


def summarize(rows, trace_stamps=None):
    """idle: per CTA, ns from its last consumer's exit to the launch's last exit; spread: per CTA, ns between its
    consumers' first and last exit; ghz: the median over CTAs of their exits' clock cycles per ns (None where no
    CTA's exits lie MIN_CLOCK_SPAN_NS apart); cta0_cycles: CTA 0's first trace stamp to its last exit (None
    without)."""
    if not rows:
        raise ValueError("no spans")
    ref = rows[0]["end_ns"]
    exits = {}  # per CTA: (ns from ref, SM clock) of each consumer's exit
    for r in rows:
        exits.setdefault(r["cta"], []).append((signed(r["end_ns"], ref), r["end_clock"]))
    last = max(max(e) for e in exits.values())[0]
    rates = []
    for ends in exits.values():  # SM clocks differ between SMs: only a CTA's own exits are compared
        (ns0, clock0), (ns1, clock1) = min(ends), max(ends)
        if ns1 - ns0 >= MIN_CLOCK_SPAN_NS:
            rates.append(signed(clock1, clock0) / (ns1 - ns0))
    out = {
        "ctas": len(exits),
        "idle": [last - max(e)[0] for e in exits.values()],
        "spread": [max(e)[0] - min(e)[0] for e in exits.values()],
        "ghz": statistics.median(rates) if rates else None,
        "cta0_idle": last - max(exits[0])[0] if 0 in exits else None,
        "cta0_cycles": None,
    }
    if trace_stamps and 0 in exits:
        clock_ref = exits[0][0][1]
        out["cta0_cycles"] = (max(signed(c, clock_ref) for _, c in exits[0]) -
                              min(signed(t, clock_ref) for t in trace_stamps))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spans")
    ap.add_argument("--ms", type=float, help="the call's time per call (ms)")
    ap.add_argument("--trace", help="CTA 0's tile stamps (the zyfa command's ZYFA_FP8_TRACE_OUT)")
    args = ap.parse_args()
    try:
        s = summarize(read_spans(open(args.spans)), read_trace_stamps(open(args.trace)) if args.trace else None)
    except ValueError as e:
        raise SystemExit(f"fp8_cta_spans: {e}")
    idle, spread = s["idle"], s["spread"]
    us = 1e-3
    print(f"CTAs stamped: {s['ctas']}")
    print(f"idle at the tail per CTA: median {statistics.median(idle) * us:.1f} us, p90 {pct(idle, 0.9) * us:.1f} us, "
          f"max {max(idle) * us:.1f} us, mean {statistics.mean(idle) * us:.1f} us")
    print(f"consumers' exits within a CTA: median spread {statistics.median(spread) * us:.2f} us, "
          f"max {max(spread) * us:.2f} us")
    ghz = s["ghz"]
    print(f"SM clock in the kernel: {ghz:.3f} GHz" if ghz else "SM clock in the kernel: no CTA's exits far enough apart")
    if args.ms:
        print(f"call time {args.ms * 1e3:.1f} us; mean tail idle = {100 * statistics.mean(idle) / (args.ms * 1e6):.1f}% of it")
    if s["cta0_cycles"] is not None:
        cycles = s["cta0_cycles"]
        line = f"CTA 0: {cycles} cycles from its first stamp to its last consumer's exit"
        if ghz and args.ms:
            ns, call = cycles / ghz, args.ms * 1e6
            line += (f" = {ns * us:.1f} us, {100 * ns / call:.1f}% of the call; before its first stamp "
                     f"{(call - ns - s['cta0_idle']) * us:.1f} us, its tail {s['cta0_idle'] * us:.1f} us")
        print(line)


if __name__ == "__main__":
    main()
