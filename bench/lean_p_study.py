#!/usr/bin/env python3
"""A numerical study, on the host: how much of FP8 attention's error each way of rounding P adds.

  python3 bench/lean_p_study.py [--seqlen 1000] [--trials 3]
  python3 bench/lean_p_study.py --anchors build/bench/zyfa_bench [--seqlen 2048] [--inputs structured,...]

Causal attention of std-1 Gaussian q, k, v (d = 128), in float64 except for P, which is rounded to e4m3
after scaling each row's largest probability to 2^8 (numerics.h's headroom; one scale per row here, where
the kernels scale per key block, which changes little for a row's largest weights):
  exact   e4m3(2^x), round to nearest (the MUFU path)
  lean    the code rint(8 x) + const, read as e4m3: Mitchell's 2^f ~ 1 + f within a binade (zyfa's lean P)
  lean16  the code from rint(16 x): the binade, then the mantissa through a 16-entry table of
          rint(8 (2^(q/16) - 1)), so the mantissa follows 2^f instead of 1 + f (a candidate, not in the kernels)
  split   exact P plus its rounding residual as a second e4m3 term: a second P V product per key block
          (a candidate for issue 5's 0.6x-of-FA3 goal; not in the kernels)
  bf16    P rounded to bf16: a P V product in BF16, at half the FP8 rate (for scale)
Prints each one's relative RMS error against float64 attention. Measured 2026-11-29 (S = 1000, 3 trials):
exact 1.95e-2, lean 2.87e-2, lean16 2.14e-2 (the CPU backend, with per-block scaling: exact 1.87e-2, lean
2.76e-2 at S = 1000); split 4.59e-4 and bf16 1.23e-3 (session 5; at S = 4096, 1 trial: exact 2.04e-2, lean
2.95e-2, split 4.80e-4, bf16 1.28e-3). So a second e4m3 term removes P's rounding from FP8's error budget
(the rest is S's FP8 tensor-core sums and the bf16 output); its price is a second P V product per block.

--anchors: where lean P puts each key block's max, on the benchmark's own FP8 inputs (zyfa_bench --mode=dump,
gqa-d128, two query heads), with the kernels' block recurrence (128 keys, lazy rescale at tau = 8, reference
max rounded up to 1/8) in float64, against float64 attention of the same e4m3 inputs:
  m-anchored   ZYFA's lean P and zyfa's until 2026-11-30: an integer shift puts the block max anywhere in
               (112, 120] below the lazy reference m, so its Mitchell error and rounding are arbitrary
  code C       the block max at code C exactly (numerics::kLeanPTopCode; a fractional offset, which the
               kernels round to 2^-16 of a code)
  exact        exact P (MUFU), for scale
  run C        no per-block scale: every code anchored at the row's exact running max at code C, O and l
               rescaled at each rise, which would let P V accumulate straight into O (no fold)
Measured 2026-11-30 (S = 2048): code 118 errs 0.38x m-anchored on structured inputs, 0.81x on std-1
Gaussians, 0.65x on outlier inputs; 1.17-1.20x exact P. Codes 117.5 and 118.5 (a tie at the top) and 119
do worse, 120 (f = 0, weighed 4% low against the row) worse still on Gaussians. run118 (session 17,
`--codes 118,run118,exact`): 8.19e-3 structured, 2.31e-2 Gaussian, 1.43e-2 outlier, against code 118's
5.01e-3, 2.22e-2, 1.33e-2: per-block scaling is worth 1.63x on the structured inputs.

--frames: O kept in the frame of a lazy anchor A per row instead of folded per block (no separate P V
accumulator): the codes put A at top code C, A moves to the block max when that rises more than U above it or
falls more than H below it, and O and l are multiplied by 2^(A_old - A_new) when it moves. U = H = 0 is the
per-block anchor (code C) itself, with O's multiply in place of the fold; larger H skip multiplies at the cost of
codes below C. Prints each configuration's error and the share of blocks where A moved (where the kernel would
multiply O). Measured 2026-12-01 (S = 2048, C = 118): structured 5.01e-3 with every block moving; H = 1 5.35e-3
(1.07x) still moves 89% of blocks, H = 4 5.86e-3 (1.17x) 61%, H = inf 8.19e-3 (1.63x) 7%; on std-1 Gaussians
H = 1 costs 1.02x and moves 56%, H = 4 1.04x and 21%. On LLM-like inputs the block maxes wander, so the fold's
work (or an O multiply per block) is the price of per-block scaling's accuracy.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HEADROOM = 8  # binades: a row's largest p becomes 2^8, code 120
# The residual's scale: 0 means P_hi and P_lo are products of the same accumulator (O += P_hi V + P_lo V, no
# extra registers). Scaling it by 2^4 (its largest possible shift) changes the error by under 0.01%: residuals
# small enough to lose bits as subnormals belong to weights too small to matter.
SPLIT_SHIFT = 0


def e4m3_values():
    """The finite non-negative e4m3 values, indexed by their 7-bit code (code 127 is NaN)."""
    out = []
    for e in range(16):
        for m in range(8):
            out.append(m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return np.array(out[:127])


VALUES = e4m3_values()
LEAN16_MANTISSA = np.rint(8 * (2 ** (np.arange(16) / 16) - 1)).astype(int)


def p_exact(x):
    return round_e4m3(2.0 ** (x + HEADROOM))


def p_lean(x):
    code = np.clip(np.rint(8 * (x + HEADROOM) + 56), 0, 126).astype(int)
    return VALUES[code]


def p_lean16(x):
    y = np.maximum(np.rint(16 * (x + HEADROOM) + 112), 0).astype(int)
    code = np.clip(8 * (y // 16) + LEAN16_MANTISSA[y % 16], 0, 126)
    return VALUES[code]


def round_e4m3(v):
    """v (>= 0) to the nearest finite e4m3 value (ties: the smaller one)."""
    i = np.clip(np.searchsorted(VALUES, v), 1, len(VALUES) - 1)
    lo, hi = VALUES[i - 1], VALUES[i]
    return np.where(v - lo <= hi - v, lo, hi)


def p_split(x):
    """exact P plus its rounding residual as a second e4m3 term: what a second P V product per block into the
    same accumulator would give (twice the P V work)."""
    v = 2.0 ** (x + HEADROOM)
    hi = round_e4m3(v)
    residual = (v - hi) * 2.0 ** SPLIT_SHIFT  # signed: e4m3 has a sign bit
    return hi + np.sign(residual) * round_e4m3(np.abs(residual)) / 2.0 ** SPLIT_SHIFT


def p_bf16(x):
    """P rounded to bf16 (8 significant bits), as the BF16 kernel's P V product takes it."""
    m, e = np.frexp(2.0 ** x)
    return np.ldexp(np.rint(m * 256) / 256, e)


def attention(q, k, v, p_of):
    """Causal attention with P = p_of(log2 p relative to the row max), the denominator from the same P."""
    s = (q @ k.T) / np.sqrt(q.shape[1]) * np.log2(np.e)
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(q.shape[0]):
        x = s[i, :i + 1] - s[i, :i + 1].max()
        p = p_of(x)
        out[i] = (p @ v[:i + 1]) / p.sum()
    return out


KEY_BLOCK = 128  # numerics::kKeyBlock
LAZY_TAU = 8.0   # numerics::kFp8LazyRescaleThreshold


def causal_scores(c, q, k):
    """c q k^T in base-2 units, -inf above the diagonal."""
    s = c * (q @ k.T)
    return np.where(np.arange(len(q))[None, :] <= np.arange(len(q))[:, None], s, -np.inf)


def key_blocks(s):
    """Each key block's scores, which rows see any of its keys, and their block max (0 where none)."""
    for kb in range(0, s.shape[1], KEY_BLOCK):
        x = s[:, kb:kb + KEY_BLOCK]
        live = np.isfinite(x).any(axis=1)
        yield kb, x, live, np.where(live, x.max(axis=1), 0.0)


def code_values(code):
    """e4m3 values of lean codes (masked scores' codes, -inf, read as code 0), clamped to the finite codes."""
    return VALUES[np.clip(np.where(np.isfinite(code), code, 0), 0, 126).astype(int)]


def blockwise_attention(q, k, v, c, anchor):
    """The kernels' recurrence over key blocks, P rounded per `anchor`: 'm', 'exact', a top code (each block
    anchored at its own max), or 'run' and a top code (no per-block scale: codes anchored at the row's exact
    running max, O and l rescaled at every rise of it, so that P V could accumulate straight into O)."""
    n = q.shape[0]
    o, l, m = np.zeros((n, v.shape[1])), np.zeros(n), np.full(n, -np.inf)
    running = anchor.startswith("run")
    for kb, x, live, bmax in key_blocks(causal_scores(c, q, k)):
        if running:
            m_new = np.where(live, np.maximum(m, bmax), m)
            alpha = np.where(np.isfinite(m), 2.0 ** (m - np.where(np.isfinite(m_new), m_new, 0)), 1.0)
        else:
            need = live & (~np.isfinite(m) | (bmax > m + LAZY_TAU))
            m_new = np.where(need, np.ceil(8 * bmax) / 8, m)
            alpha = np.where(need & np.isfinite(m), 2.0 ** (m - np.where(need, m_new, 0)), 1.0)
        o *= alpha[:, None]
        l *= alpha
        m = m_new
        ref = np.where(live, m, 0.0)
        if running:
            code = np.floor(8 * (x - ref[:, None]) + float(anchor[3:]) + 0.5)
            unscale = np.ones(n)
        elif anchor == "m":
            shift = np.floor(ref - bmax) + HEADROOM
            code = np.rint(8 * x + (56 + 8 * shift - 8 * ref)[:, None])
            unscale = 2.0 ** -shift
        elif anchor == "exact":
            p = round_e4m3(np.where(np.isfinite(x), 2.0 ** (x - bmax[:, None] + HEADROOM), 0.0))
            unscale = 2.0 ** (bmax - ref - HEADROOM)
        else:
            top = float(anchor)
            code = np.floor(8 * (x - bmax[:, None]) + top + 0.5)
            unscale = 2.0 ** (bmax - ref - (top - 56) / 8)
        if anchor != "exact":
            p = code_values(code)
        u = np.where(live, unscale, 0.0)
        o += u[:, None] * (np.where(live[:, None], p, 0.0) @ v[kb:kb + KEY_BLOCK])
        l += u * np.where(live[:, None], p, 0.0).sum(axis=1)
    return o / l[:, None]


def frame_attention(q, k, v, c, top, up, hold):
    """The block recurrence with O kept in the frame of a lazy anchor A (see --frames): returns the output and
    the share of blocks, after each row's first, where A moved."""
    n = q.shape[0]
    o, l, a = np.zeros((n, v.shape[1])), np.zeros(n), np.full(n, -np.inf)
    moves = blocks = 0
    for kb, x, live, bmax in key_blocks(causal_scores(c, q, k)):
        started = np.isfinite(a)
        move = live & (~started | (bmax > a + up) | (bmax < a - hold))
        a_new = np.where(move, bmax, a)
        alpha = np.where(move & started, 2.0 ** (a - np.where(move, a_new, 0.0)), 1.0)
        moves += int((move & started).sum())
        blocks += int((live & started).sum())
        o *= alpha[:, None]
        l *= alpha
        a = a_new
        code = np.floor(8 * (x - np.where(live, a, 0.0)[:, None]) + top + 0.5)
        p = np.where(live[:, None], code_values(code), 0.0)
        o += p @ v[kb:kb + KEY_BLOCK]
        l += p.sum(axis=1)
    return o / l[:, None], moves / max(blocks, 1)


def dumped_heads(bench, seqlen, inputs):
    """zyfa_bench's FP8 inputs of one gqa-d128 case as float64 (two query heads): yields c, q, k, v per head."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from lazy_rescale_study import LOG2E, e4m3_table, load
    with tempfile.TemporaryDirectory() as dump:
        subprocess.run([bench, "--mode=dump", "--dtypes=fp8", "--families=gqa-d128", f"--seqlens={seqlen}",
                        f"--inputs={inputs}", "--input-std=1", f"--dump-dir={dump}"], check=True,
                       stdout=subprocess.DEVNULL)
        (case,) = os.listdir(dump)
        case_dir = os.path.join(dump, case)
        meta = json.load(open(os.path.join(case_dir, "meta.json")))
        c = meta["softmax_scale"] * LOG2E * meta["q_descale"] * meta["k_descale"]
        q = load(case_dir, "q", meta, meta["nheads"]).astype(np.float64)
        k = load(case_dir, "k", meta, meta["nheads_k"]).astype(np.float64)
        codes = np.fromfile(os.path.join(case_dir, "v.bin"), np.uint8)
        v = e4m3_table()[codes].reshape(seqlen, meta["nheads_k"], meta["d_v"]).astype(np.float64)
    group = meta["nheads"] // meta["nheads_k"]
    for h in (0, meta["nheads"] // 2 + 1):
        yield c, q[:, h], k[:, h // group], v[:, h // group]


def float64_causal(c, q, k, v):
    s = causal_scores(c, q, k)
    p = 2.0 ** (s - s.max(axis=1, keepdims=True))
    return (p @ v) / p.sum(axis=1, keepdims=True)


def frames_study(bench, seqlen, inputs_kinds, frames):
    """--frames: each (C, U, H)'s relative RMS error and the share of blocks where its anchor moved."""
    print(f"{'inputs':12} " + " ".join(f"{'C%g U%g H%g' % f:>22}" for f in frames))
    for inputs in inputs_kinds:
        sq, moved, ref_sq = np.zeros(len(frames)), np.zeros(len(frames)), 0.0
        heads = list(dumped_heads(bench, seqlen, inputs))
        for c, q, k, v in heads:
            ref = float64_causal(c, q, k, v)
            ref_sq += (ref ** 2).sum()
            for i, f in enumerate(frames):
                out, share = frame_attention(q, k, v, c, *f)
                sq[i] += ((out - ref) ** 2).sum()
                moved[i] += share / len(heads)
        print(f"{inputs:12} " + " ".join(f"{np.sqrt(e / ref_sq):13.3e} ({m:5.1%})" for e, m in zip(sq, moved)),
              flush=True)


def anchors_study(bench, seqlen, inputs_kinds, anchors):
    print(f"{'inputs':12} " + " ".join(f"{a:>11}" for a in anchors))
    for inputs in inputs_kinds:
        sq = {a: 0.0 for a in anchors}
        ref_sq = 0.0
        for c, q, k, v in dumped_heads(bench, seqlen, inputs):
            ref = float64_causal(c, q, k, v)
            ref_sq += (ref ** 2).sum()
            for a in anchors:
                sq[a] += ((blockwise_attention(q, k, v, c, a) - ref) ** 2).sum()
        print(f"{inputs:12} " + " ".join(f"{np.sqrt(sq[a] / ref_sq):11.3e}" for a in anchors), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seqlen", type=int, default=None, help="default 1000 (2048 with --anchors)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--anchors", metavar="ZYFA_BENCH", help="the block-anchor study on zyfa_bench's dumped inputs")
    ap.add_argument("--inputs", default="structured,gaussian,outlier")
    ap.add_argument("--codes", default="m,120,119,118.5,118,117.5,exact",
                    help="anchors for --anchors (run118: no per-block scale, the running max at code 118)")
    ap.add_argument("--frames", metavar="ZYFA_BENCH", help="the lazy-frame study on zyfa_bench's dumped inputs")
    ap.add_argument("--frame-configs", default="118:0:0,118:0:0.5,118:0:1,118:0:2,118:0:4,118:0:inf,110:1:2",
                    help="C:U:H triples for --frames (top code, rise and fall tolerances in binades)")
    args = ap.parse_args()
    if args.frames:
        frames = [tuple(float(x) for x in f.split(":")) for f in args.frame_configs.split(",")]
        frames_study(args.frames, args.seqlen or 2048, args.inputs.split(","), frames)
        return
    if args.anchors:
        anchors_study(args.anchors, args.seqlen or 2048, args.inputs.split(","), args.codes.split(","))
        return
    args.seqlen = args.seqlen or 1000
    rng = np.random.default_rng(args.seed)
    roundings = {"exact": p_exact, "lean": p_lean, "lean16": p_lean16, "split": p_split, "bf16": p_bf16}
    errors = {name: [] for name in roundings}
    for _ in range(args.trials):
        q, k, v = (rng.standard_normal((args.seqlen, 128)) for _ in range(3))
        ref = attention(q, k, v, lambda x: 2.0 ** x)
        for name, p_of in roundings.items():
            out = attention(q, k, v, p_of)
            errors[name].append(np.sqrt(((out - ref) ** 2).sum() / (ref ** 2).sum()))
    for name, e in errors.items():
        print(f"{name:7s} rel RMS error {np.mean(e):.3e}  (S = {args.seqlen}, {args.trials} trials)")


if __name__ == "__main__":
    main()
