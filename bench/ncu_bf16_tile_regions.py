#!/usr/bin/env python3
"""Where the BF16 kernel's per-tile time goes: the stall samples of an Nsight Compute report of
bf16_attention_kernel<128>, summed per region of its SASS and split into per-tile and per-block work.

  python3 bench/ncu_bf16_tile_regions.py NAME-sass.csv TILES_PER_CTA BLOCKS_PER_TILE [NAME-details.csv]

The region table is the SASS of the build at c9fa02f (the zyfa command in .carry; cuobjdump -sass gives 1920
instructions): another build moves the offsets, and the script refuses to trust them when the anchor
instructions (EXPECT) are not where it expects. Written in session 6 for one measurement (bench/NOTES.md,
"Next session"): zyfa BF16 loses about 5 us per query tile that FlashAttention-3 does not.

TILES_PER_CTA = H * T / 132 (2K/4K/8K: 15.52, 16K: 31.03, 32K: 62.06); BLOCKS_PER_TILE = (T + 1) / 2 (2K: 8.5,
16K: 64.5). The per-tile overhead is the per-tile regions minus one ordinary block (block 0's S and softmax plus
the last PV are one block's work): tile - block / (BLOCKS_PER_TILE - 1).

Regions are SASS offsets from cuobjdump. Consumer samples are split into
per-tile regions and per-block regions; with the details CSV (Duration, SM Frequency) it prints cycles per
tile per consumer warp for each region: share * duration * clock / tiles_per_cta.
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_stalls import opcode, read_sass  # noqa: E402

REGIONS = [  # (start, end, name, kind)
    (0x0000, 0x0af0, 'setup (barrier init, setmaxnreg)', 'once'),
    (0x0af0, 0x0b90, 'consumer job LDG + R2UR', 'tile'),
    (0x0b90, 0x0ea0, 'tile start: q_full wait, turn, S_0, wait<0>', 'tile'),
    (0x0ea0, 0x18a0, 'block 0 diagonal mask (tile 0 only)', 'tile'),
    (0x18a0, 0x29d0, 'block 0 softmax (+ O/l zeroing)', 'tile'),
    (0x29d0, 0x2f00, 'loop: turn, S+PV issue, wait<1>', 'block'),
    (0x2f00, 0x38f0, 'loop: diagonal mask side path', 'tile'),
    (0x38f0, 0x4df0, 'loop: softmax, PV wait, rescale, round', 'block'),
    (0x4df0, 0x5180, 'last PV turn + wait<0>', 'tile'),
    (0x5180, 0x6590, 'store (O, LSE)', 'tile'),
    (0x6590, 0x6680, 'tile/job loop tail', 'tile'),
    (0x6680, 0x7220, 'producer', 'producer'),
    (0x7220, 0x7250, 'retry q_full (consumer tile start)', 'tile'),
    (0x7250, 0x7280, 'retry k_full block 0', 'tile'),
    (0x7280, 0x72b0, 'retry k_full loop', 'block'),
    (0x72b0, 0x72e0, 'retry v_full loop', 'block'),
    (0x72e0, 0x7310, 'retry v_full last PV', 'tile'),
    (0x7310, 0x7340, 'retry producer q_empty', 'producer'),
    (0x7340, 0x7370, 'retry producer k_empty', 'producer'),
    (0x7370, 0x73a0, 'retry producer v_empty', 'producer'),
    (0x73a0, 0x10000, 'rcp slow path', 'tile'),
]
EXPECT = {0x0b30: 'LDG.E.128', 0x0c20: 'BAR.SYNC.DEFER_BLOCKING', 0x29d0: 'BAR.SYNC.DEFER_BLOCKING',
          0x5680: 'STG.E', 0x6780: 'LDG.E.128', 0x6bb0: 'UTMALDG.4D'}

def offsets(sass):
    addrs = []
    for i, (a, ins, s) in enumerate(sass):
        try: addrs.append(int(a, 16))
        except ValueError: addrs.append(None)
    if None in addrs: return [16 * i for i in range(len(sass))]
    base = addrs[0]
    return [x - base for x in addrs]

def detail(path, pattern):
    with open(path, newline='') as f:
        for row in csv.reader(f):
            if any(re.fullmatch(pattern, c.strip()) for c in row):
                vals = [c for c in row[::-1] if re.fullmatch(r'[0-9.,]+', c.strip())]
                units = ' '.join(row)
                if vals:
                    v = float(vals[0].replace(',', ''))
                    if 'usecond' in units: v *= 1e3
                    if 'msecond' in units: v *= 1e6
                    if 'Ghz' in units or 'GHz' in units: v *= 1e3
                    return v, units
    return None, None

def main():
    sass = read_sass(open(sys.argv[1], newline=''))
    tiles = float(sys.argv[2])
    bpt = float(sys.argv[3])
    offs = offsets(sass)
    bad = [(hex(o), ins) for o, (_, ins, _) in zip(offs, sass) if o in EXPECT and opcode(ins) != EXPECT[o]]
    print(f'{len(sass)} instructions (cuobjdump: 1920); offset check: {"ok" if not bad else bad}')
    per = {}
    for o, (_, ins, s) in zip(offs, sass):
        for a, b, name, kind in REGIONS:
            if a <= o < b:
                per.setdefault((a, name, kind), [0.0, []])[0] += s
                per[(a, name, kind)][1].append((s, hex(o), ins))
                break
    consumer = sum(v[0] for k, v in per.items() if k[2] in ('tile', 'block', 'once'))
    scale = None
    if len(sys.argv) > 4:
        dur, _ = detail(sys.argv[4], r'Duration')            # ns after the unit fix
        mhz, _ = detail(sys.argv[4], r'SM Frequency')        # MHz
        if dur and mhz:
            scale = dur * 1e-9 * mhz * 1e6 / tiles            # cycles per tile
            print(f'duration {dur/1e3:.1f} us, SM clock {mhz:.0f} MHz: {scale:.0f} cycles per tile per CTA')
    kind_tot = {}
    for (a, name, kind), (s, _) in sorted(per.items()):
        kind_tot[kind] = kind_tot.get(kind, 0) + s
        share = s / consumer if kind != 'producer' else float('nan')
        cyc = f'{share * scale:7.0f} cyc/tile' if scale and kind != 'producer' else ''
        print(f'{kind:8s} {100 * share:6.2f}%  {cyc}  {name}')
    for kind, s in kind_tot.items():
        if kind != 'producer':
            print(f'total {kind}: {100 * s / consumer:.2f}% of consumer samples' +
                  (f' = {s / consumer * scale:.0f} cycles per tile' if scale else ''))
    t, b = kind_tot.get('tile', 0), kind_tot.get('block', 0)
    extra = (t - b / (bpt - 1)) / consumer
    print(f'per-tile overhead (tile - block/(blocks per tile - 1)): {100 * extra:.2f}% of consumer samples' +
          (f' = {extra * scale:.0f} cycles = {(bpt - 1) * extra / (b / consumer):.2f} loop iterations per tile' if scale else
           f' = {(bpt - 1) * extra / (b / consumer):.2f} loop iterations per tile'))
    print('top 3 instructions of each per-tile region:')
    for (a, name, kind), (s, rows) in sorted(per.items()):
        if kind == 'tile' and s > 0:
            top = sorted(rows, reverse=True)[:3]
            print(f'  {name}: ' + '; '.join(f'{100 * x / consumer:.2f}% {o} {i}' for x, o, i in top))

if __name__ == '__main__':
    main()
