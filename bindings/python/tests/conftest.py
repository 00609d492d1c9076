"""Shared by the host tests: fresh random inputs (seed printed; ZYFA_TEST_SEED replays it), the fp64
oracle, error norms and the tolerances."""
import os
import time

import numpy as np
import pytest

from zyfa.numeric import bf16_bits, bf16_to_float32, e4m3_to_float32

# Bounds on the relative RMS error of out and the largest LSE error (nats) against fp64, about 2.5x what
# identical inputs measured in the Rust binding's tests (bindings/rust/zyfa/tests/host_attention.rs says
# why they differ between BF16 and FP8's lean P).
BF16_OUT_TOLERANCE, BF16_LSE_TOLERANCE = 5e-3, 5e-3
FP8_OUT_TOLERANCE, FP8_LSE_TOLERANCE = 7e-2, 0.16


@pytest.fixture
def rng(request):
    seed = int(os.environ.get("ZYFA_TEST_SEED", time.time_ns() % 2**63))
    print(f"{request.node.name}: ZYFA_TEST_SEED={seed}")
    return np.random.default_rng(seed)


def random_bf16(rng, shape, scale=1.0):
    return bf16_bits(rng.uniform(-scale, scale, shape).astype(np.float32))


def attention_fp64(q, k, v, scale=None):
    """Exact causal attention of BSHD float64 inputs: out (BSHD) and lse (batch, nheads, seqlen)."""
    b, s, h, dqk = q.shape
    hk = k.shape[2]
    scale = 1.0 / np.sqrt(dqk) if scale is None else scale
    kk = np.repeat(k, h // hk, axis=2)
    vv = np.repeat(v, h // hk, axis=2)
    scores = np.einsum("bihd,bjhd->bhij", q, kk) * scale
    scores = np.where(np.tril(np.ones((s, s), dtype=bool)), scores, -np.inf)
    m = scores.max(axis=-1, keepdims=True)
    p = np.exp(scores - m)
    denom = p.sum(axis=-1, keepdims=True)
    out = np.einsum("bhij,bjhd->bihd", p / denom, vv)
    return out, (m + np.log(denom))[..., 0]


def bf16_values(x):
    return bf16_to_float32(x).astype(np.float64)


def fp8_values(codes, descale):
    """Codes times their descale: a float, or one value per (batch, kv head) of a BSHD tensor."""
    descale = np.asarray(descale, dtype=np.float64)
    values = e4m3_to_float32(codes).astype(np.float64)
    if descale.size == 1:
        return values * descale.reshape(())
    return values * descale[:, None, :, None]


def check_against(out, lse, want_out, want_lse, out_tolerance, lse_tolerance):
    got = bf16_values(out)
    assert np.isfinite(got).all() and np.isfinite(lse).all(), "unwritten (poisoned or NaN) elements"
    out_error = np.linalg.norm(got - want_out) / np.linalg.norm(want_out)
    lse_error = np.abs(lse.astype(np.float64) - want_lse).max()
    print(f"relative RMS error of out {out_error:.3e}, max LSE error {lse_error:.3e}")
    assert out_error < out_tolerance
    assert lse_error < lse_tolerance
