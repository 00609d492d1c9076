#!/usr/bin/env python3
"""A host study for the lazy-rescale thresholds (numerics.h, kLazyRescale*): how often each threshold makes a
warp rescale O, on the benchmark's own inputs.

  python3 bench/lazy_rescale_study.py --bench build/bench/zyfa_bench [--dtypes bf16,fp8] [--seqlens 4096]
      [--inputs gaussian,outlier,structured] [--input-stds 0.1,1] [--heads 4] [--taus 0.125,0.5,1,2,4,8]

The kernels keep a reference max m per row and rescale O and l by alpha = 2^(m - m_new) only when a key
block's max bmax exceeds m + tau. The rescale is 66 FMULs per thread, taken by a whole warp (16 query rows)
when any of its rows needs it (a warp vote), and it sits in the softmax phase that the other warpgroup's
products must hide. A larger tau rescales less often; P then reaches 2^tau before its rounding. FP8 P is
scaled from each block's own max (numerics.h; the threshold moves only its unscale), and O and l stay far from
fp32's range, but bf16 P rounds the heaviest keys of a row, which a fresh m would give P = 1 exactly: on peaked
(structured) rows that costs accuracy, and BF16 keeps tau at 4 (numerics.h, kBf16LazyRescaleThreshold).
(Until 2026-11-30 lean P's codes were anchored at m, and a larger tau did cost them accuracy: bench/NOTES-fp8.md,
"Lean P anchored at each block's own max".)

The inputs come from zyfa_bench --mode=dump (the generator the benchmarks and the accuracy study share), so
the counts are those of the benchmark's cases. For a few query heads per case, every query tile's scores
are formed block by block (fp32, causal), each row's reference max is scanned as the kernels do (BF16:
m = bmax; FP8: m = ceil(8 bmax) / 8), and a warp-block counts as rescaled when any of its 16 rows needs it.
Block 0 of a tile is left out (it sets m from -inf in every kernel). Prints the rescaled fraction per tau.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

QUERY_TILE = 128  # numerics::kQueryTile
KEY_BLOCK = 128   # numerics::kKeyBlock
WARP_ROWS = 16    # rows of one warp's accumulator fragment (m64 wgmma: 4 warps x 16 rows)
LOG2E = 1.4426950408889634


def e4m3_table():
    """float32 value of each e4m3 code (sign included); code 0x7f / 0xff (NaN) never occur in the inputs."""
    vals = np.zeros(256, np.float32)
    for code in range(256):
        s, e, m = code >> 7, (code >> 3) & 15, code & 7
        v = m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        vals[code] = -v if s else v
    return vals


def load(case_dir, name, meta, heads):
    raw = np.fromfile(os.path.join(case_dir, name + ".bin"), np.uint8)
    if meta["dtype"] == "fp8":
        x = e4m3_table()[raw]
    else:  # bf16: the high half of a float32
        x = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    dim = meta["d_qk"]
    return x.reshape(meta["batch"], meta["seqlen"], heads, dim)[0]


def block_maxes(q, k, c):
    """(tiles) list of arrays (rows_in_tile, blocks) of c * max score per row and key block (causal)."""
    seqlen = q.shape[0]
    out = []
    for t in range((seqlen + QUERY_TILE - 1) // QUERY_TILE):
        r0, r1 = t * QUERY_TILE, min(seqlen, (t + 1) * QUERY_TILE)
        keys = r1  # causal: keys up to the tile's last row
        s = q[r0:r1] @ k[:keys].T  # fp32
        rows = np.arange(r0, r1)[:, None]
        s = np.where(np.arange(keys)[None, :] <= rows, s, -np.inf)
        blocks = (keys + KEY_BLOCK - 1) // KEY_BLOCK
        pad = blocks * KEY_BLOCK - keys
        s = np.pad(s, ((0, 0), (0, pad)), constant_values=-np.inf)
        out.append(c * s.reshape(r1 - r0, blocks, KEY_BLOCK).max(axis=2))
    return out


def rescaled_fraction(maxes, tau, fp8):
    """Fraction of (warp, key block >= 1) pairs in which some row of the warp rescales."""
    hit = total = 0
    for bm in maxes:
        rows, blocks = bm.shape
        m = bm[:, 0].copy()
        if fp8:
            m = np.ceil(8 * m) / 8
        warps = (rows + WARP_ROWS - 1) // WARP_ROWS
        for kb in range(1, blocks):
            b = bm[:, kb]
            need = b > m + tau
            m = np.where(need, np.ceil(8 * b) / 8 if fp8 else b, m)
            per_warp = np.pad(need, (0, warps * WARP_ROWS - rows)).reshape(warps, WARP_ROWS).any(axis=1)
            hit += int(per_warp.sum())
            total += warps
    return hit / total if total else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench", required=True, help="zyfa_bench (its dump mode writes the inputs)")
    p.add_argument("--dtypes", default="bf16,fp8")
    p.add_argument("--families", default="gqa-d128,mha-d192")
    p.add_argument("--seqlens", default="4096")
    p.add_argument("--inputs", default="gaussian,outlier,structured")
    p.add_argument("--input-stds", default="0.1,1", help="Gaussian std (the kernel protocol's 0.1, the accuracy study's 1)")
    p.add_argument("--heads", type=int, default=4, help="query heads studied per case (spread over the head range)")
    p.add_argument("--taus", default="0.125,0.5,1,2,4,8")
    args = p.parse_args()
    taus = [float(t) for t in args.taus.split(",")]
    print(f"{'case':52} {'std':>4} " + " ".join(f"tau={t:<6g}" for t in taus))
    with tempfile.TemporaryDirectory() as tmp:
        for std in args.input_stds.split(","):
            for inputs in args.inputs.split(","):
                if inputs != "gaussian" and std != args.input_stds.split(",")[-1]:
                    continue  # outlier and structured inputs do not take the Gaussian std: once is enough
                dump = os.path.join(tmp, f"std{std}")
                subprocess.run([args.bench, "--mode=dump", f"--dtypes={args.dtypes}", f"--families={args.families}",
                                f"--seqlens={args.seqlens}", f"--inputs={inputs}", f"--input-std={std}",
                                f"--dump-dir={dump}"], check=True, stdout=subprocess.DEVNULL)
                for case in sorted(os.listdir(dump)):
                    case_dir = os.path.join(dump, case)
                    meta = json.load(open(os.path.join(case_dir, "meta.json")))
                    if meta["inputs"] != inputs:
                        continue
                    fp8 = meta["dtype"] == "fp8"
                    c = np.float32(meta["softmax_scale"] * LOG2E * meta["q_descale"] * meta["k_descale"])
                    q = load(case_dir, "q", meta, meta["nheads"])
                    k = load(case_dir, "k", meta, meta["nheads_k"])
                    group = meta["nheads"] // meta["nheads_k"]
                    heads = np.linspace(0, meta["nheads"] - 1, args.heads).round().astype(int)
                    maxes = []
                    for h in heads:
                        maxes += block_maxes(np.ascontiguousarray(q[:, h]), np.ascontiguousarray(k[:, h // group]), c)
                    fractions = [rescaled_fraction(maxes, t, fp8) for t in taus]
                    print(f"{meta['case']:52} {std if inputs == 'gaussian' else '-':>4} "
                          + " ".join(f"{f:<10.4f}" for f in fractions), flush=True)
                shutil.rmtree(dump)  # one input kind at a time on disk


if __name__ == "__main__":
    main()
