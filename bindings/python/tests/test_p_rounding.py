"""p_rounding= on the FP8 entry points, through the CPU backend: exact P differs from DEFAULT, which is
lean P at d = 128, and lean P differs from DEFAULT at d_qk = 192, where it is exact P; unknown names raise
ZyfaValueError."""
import numpy as np
import pytest

import zyfa
from conftest import attention_fp64, bf16_values, fp8_values, random_bf16


def fp8_qkv(rng, seqlen, nheads, nheads_k, d_qk, batch=1):
    """Small quantized q, k, v (BSHD) and their descales as keyword arguments."""
    shapes = ((nheads, d_qk, 1.0), (nheads_k, d_qk, 1.0), (nheads_k, 128, 0.5))
    (q8, qs), (k8, ks), (v8, vs) = (zyfa.fp8_quantize(random_bf16(rng, (batch, seqlen, h, d), scale))
                                    for h, d, scale in shapes)
    return (q8, k8, v8), dict(q_descale=qs, k_descale=ks, v_descale=vs)


def test_exact_p_differs_from_default_which_is_lean_at_d128(rng):
    qkv, descales = fp8_qkv(rng, 24, 2, 1, 128)
    out = {p: zyfa.flash_attn_func(*qkv, causal=True, **descales, p_rounding=p) for p in ("default", "lean", "exact")}
    np.testing.assert_array_equal(out["lean"], out["default"])
    assert not np.array_equal(out["exact"], out["default"]), "exact P gave lean P's output bit for bit"
    np.testing.assert_array_equal(zyfa.flash_attn_func(*qkv, causal=True, **descales), out["default"])
    np.testing.assert_array_equal(zyfa.flash_attn_func(*qkv, causal=True, **descales, p_rounding="EXACT"), out["exact"])


def test_every_fp8_entry_point_takes_p_rounding(rng):
    batch, seqlen, nheads = 2, 16, 2
    (q8, qs), (k8, ks), (v8, vs) = (zyfa.fp8_quantize(random_bf16(rng, (batch, seqlen, nheads, 128)))
                                    for _ in range(3))
    descales = dict(q_descale=qs, k_descale=ks, v_descale=vs)
    want = zyfa.flash_attn_func(q8, k8, v8, causal=True, **descales, p_rounding="exact")
    assert not np.array_equal(want, zyfa.flash_attn_func(q8, k8, v8, causal=True, **descales))
    # One descale for q, k and v, so the packed forms can share it.
    qkv = np.stack([q8, k8, v8], axis=2)
    same = dict(q_descale=qs, k_descale=qs, v_descale=qs)
    np.testing.assert_array_equal(zyfa.flash_attn_qkvpacked_func(qkv, causal=True, **same, p_rounding="exact"),
                                  zyfa.flash_attn_func(q8, k8, v8, causal=True, **same, p_rounding="exact"))
    np.testing.assert_array_equal(zyfa.flash_attn_kvpacked_func(q8, qkv[:, :, 1:], causal=True, **descales,
                                                                p_rounding="exact"), want)
    flat = lambda x: x.reshape(batch * seqlen, nheads, 128)
    cu = np.arange(0, (batch + 1) * seqlen, seqlen, dtype=np.int32)
    np.testing.assert_array_equal(zyfa.flash_attn_varlen_func(flat(q8), flat(k8), flat(v8), cu, cu, seqlen, seqlen,
                                                              causal=True, **descales, p_rounding="exact"), flat(want))


def test_lean_p_differs_from_default_which_is_exact_at_d192(rng):
    qkv, descales = fp8_qkv(rng, 24, 2, 1, 192)
    out = {p: zyfa.flash_attn_func(*qkv, causal=True, **descales, p_rounding=p) for p in ("default", "lean", "exact")}
    np.testing.assert_array_equal(out["exact"], out["default"])
    assert not np.array_equal(out["lean"], out["default"]), "lean P gave exact P's output bit for bit"
    np.testing.assert_array_equal(zyfa.flash_attn_func(*qkv, causal=True, **descales, p_rounding="LEAN"), out["lean"])


@pytest.mark.parametrize("d_qk", [128, 192])
def test_split_p_is_its_own_rounding_and_the_most_accurate_at_both_head_dims(rng, d_qk):
    """Split P is neither exact nor lean P (a wiring that sent it to either fails), and its error against
    fp64 is well below exact P's (0.09-0.11x on the CPU backend; asked here: below 0.5x)."""
    qkv, descales = fp8_qkv(rng, 128, 2, 1, d_qk)
    out = {p: zyfa.flash_attn_func(*qkv, causal=True, **descales, p_rounding=p) for p in ("split", "exact", "lean")}
    assert not np.array_equal(out["split"], out["exact"]), "split P gave exact P's output bit for bit"
    assert not np.array_equal(out["split"], out["lean"]), "split P gave lean P's output bit for bit"
    np.testing.assert_array_equal(zyfa.flash_attn_func(*qkv, causal=True, **descales, p_rounding="SPLIT"), out["split"])
    want, _ = attention_fp64(*(fp8_values(x, descales[f"{n}_descale"]) for x, n in zip(qkv, "qkv")))
    rel_rms = {p: np.sqrt(np.mean((bf16_values(o) - want) ** 2) / np.mean(want ** 2)) for p, o in out.items()}
    assert rel_rms["split"] < 0.5 * rel_rms["exact"], rel_rms


@pytest.mark.parametrize("value", ["fast", "", None, 1])
def test_an_unknown_p_rounding_is_refused_before_the_call(rng, value):
    qkv, descales = fp8_qkv(rng, 16, 1, 1, 128)
    for call in (lambda: zyfa.flash_attn_func(*qkv, causal=True, **descales, p_rounding=value),
                 lambda: zyfa.flash_attn_varlen_func(*(x[0] for x in qkv), np.array([0, 16]), np.array([0, 16]), 16,
                                                     16, causal=True, **descales, p_rounding=value)):
        with pytest.raises(zyfa.ZyfaValueError) as info:
            call()
        assert info.value.status is zyfa.Status.BAD_ARGUMENT and isinstance(info.value, ValueError)
        assert f"p_rounding={value!r}" in info.value.message and "'split'" in info.value.message


def test_p_rounding_with_bf16_is_refused(rng):
    q = random_bf16(rng, (1, 16, 1, 128))
    with pytest.raises(zyfa.ZyfaValueError) as info:
        zyfa.flash_attn_func(q, q, q, causal=True, p_rounding="exact")
    assert info.value.status is zyfa.Status.FP8_FIELD_WITH_BF16 and "p_rounding" in info.value.message
