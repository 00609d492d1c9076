"""NumPy arrays through the CPU backend against the fp64 oracle, and the equivalences the interface
promises: layouts, packed and varlen forms, strided and misaligned inputs, descale forms."""
import numpy as np
import pytest

import zyfa
from conftest import (BF16_LSE_TOLERANCE, BF16_OUT_TOLERANCE, FP8_LSE_TOLERANCE, FP8_OUT_TOLERANCE,
                      attention_fp64, bf16_values, check_against, fp8_values, random_bf16)
from zyfa.numeric import e4m3_to_float32


def qkv_bf16(rng, batch, seqlen, nheads, nheads_k, d_qk=128, d_v=128):
    return (random_bf16(rng, (batch, seqlen, nheads, d_qk)), random_bf16(rng, (batch, seqlen, nheads_k, d_qk)),
            random_bf16(rng, (batch, seqlen, nheads_k, d_v)))


@pytest.mark.parametrize("batch,seqlen,nheads,nheads_k,d_qk", [(2, 133, 4, 2, 128), (1, 150, 2, 2, 192),
                                                                (1, 70, 3, 1, 128)])
def test_bf16_matches_fp64(rng, batch, seqlen, nheads, nheads_k, d_qk):
    q, k, v = qkv_bf16(rng, batch, seqlen, nheads, nheads_k, d_qk)
    out, lse = zyfa.flash_attn_func(q, k, v, causal=True, return_lse=True)
    assert out.dtype == np.uint16 and out.shape == (batch, seqlen, nheads, 128)
    assert lse.dtype == np.float32 and lse.shape == (batch, nheads, seqlen)
    want_out, want_lse = attention_fp64(bf16_values(q), bf16_values(k), bf16_values(v))
    check_against(out, lse, want_out, want_lse, BF16_OUT_TOLERANCE, BF16_LSE_TOLERANCE)


def test_explicit_softmax_scale(rng):
    q, k, v = qkv_bf16(rng, 1, 40, 2, 2)
    out, lse = zyfa.flash_attn_func(q, k, v, softmax_scale=0.3, causal=True, return_lse=True)
    want_out, want_lse = attention_fp64(bf16_values(q), bf16_values(k), bf16_values(v), scale=0.3)
    check_against(out, lse, want_out, want_lse, BF16_OUT_TOLERANCE, BF16_LSE_TOLERANCE)


def test_bhsd_layout_equals_bshd(rng):
    q, k, v = qkv_bf16(rng, 2, 50, 4, 2)
    out, lse = zyfa.flash_attn_func(q, k, v, causal=True, return_lse=True)
    to_bhsd = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3))
    out_bhsd, lse_bhsd = zyfa.flash_attn_func(to_bhsd(q), to_bhsd(k), to_bhsd(v), causal=True, return_lse=True,
                                              layout="bhsd")
    assert out_bhsd.shape == (2, 4, 50, 128)
    np.testing.assert_array_equal(out_bhsd, to_bhsd(out))
    np.testing.assert_array_equal(lse_bhsd, lse)


def test_strided_and_misaligned_inputs_equal_contiguous(rng):
    q, k, v = qkv_bf16(rng, 1, 33, 2, 1)
    out = zyfa.flash_attn_func(q, k, v, causal=True)
    # Read in place: q is a slice of a wider buffer (strided heads), v sits at a 2-byte offset (copied).
    wide = np.zeros((1, 33, 2, 256), dtype=np.uint16)
    wide[..., 64:192] = q
    shifted = np.zeros(v.size + 1, dtype=np.uint16)[1:].reshape(v.shape)
    shifted[...] = v
    assert shifted.ctypes.data % 16 != 0
    np.testing.assert_array_equal(zyfa.flash_attn_func(wide[..., 64:192], k, shifted, causal=True), out)


def test_packed_and_varlen_forms_equal_flash_attn_func(rng):
    batch, seqlen, nheads = 2, 45, 2
    qkv = random_bf16(rng, (batch, seqlen, 3, nheads, 128))
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    out, lse = zyfa.flash_attn_func(q, k, v, causal=True, return_lse=True)
    np.testing.assert_array_equal(zyfa.flash_attn_qkvpacked_func(qkv, causal=True), out)
    np.testing.assert_array_equal(zyfa.flash_attn_kvpacked_func(q, qkv[:, :, 1:], causal=True), out)
    flat = lambda x: np.ascontiguousarray(x).reshape(batch * seqlen, nheads, 128)
    cu = np.arange(0, (batch + 1) * seqlen, seqlen, dtype=np.int32)
    out_varlen, lse_varlen = zyfa.flash_attn_varlen_func(flat(q), flat(k), flat(v), cu, cu, seqlen, seqlen,
                                                         causal=True, return_lse=True)
    np.testing.assert_array_equal(out_varlen, out.reshape(batch * seqlen, nheads, 128))
    np.testing.assert_array_equal(lse_varlen, lse.transpose(1, 0, 2).reshape(nheads, batch * seqlen))


def test_varlen_refuses_unequal_lengths(rng):
    q, k, v = (x.reshape(-1, x.shape[2], 128) for x in qkv_bf16(rng, 2, 20, 1, 1))
    with pytest.raises(ValueError, match="equal length"):
        zyfa.flash_attn_varlen_func(q, k, v, np.array([0, 15, 40]), np.array([0, 15, 40]), 20, 20, causal=True)
    with pytest.raises(ValueError, match="equal length"):
        zyfa.flash_attn_varlen_func(q, k, v, np.array([0, 25, 40]), np.array([0, 25, 40]), 25, 25, causal=True)


def quantized(rng, shape, scale):
    codes, descale = zyfa.fp8_quantize(random_bf16(rng, shape, scale))
    assert codes.dtype == np.uint8 and descale.shape == (1,) and descale.dtype == np.float32
    return codes, descale


@pytest.mark.parametrize("d_qk", [128, 192])
def test_fp8_matches_fp64(rng, d_qk):
    batch, seqlen, nheads = 2, 140, 2
    (q8, qs), (k8, ks) = quantized(rng, (batch, seqlen, nheads, d_qk), 1.0), quantized(rng, (batch, seqlen, nheads, d_qk), 1.0)
    v8, vs = quantized(rng, (batch, seqlen, nheads, 128), 0.5)
    out, lse = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=qs, k_descale=ks, v_descale=vs,
                                    return_lse=True)
    want_out, want_lse = attention_fp64(fp8_values(q8, qs), fp8_values(k8, ks), fp8_values(v8, vs))
    check_against(out, lse, want_out, want_lse, FP8_OUT_TOLERANCE, FP8_LSE_TOLERANCE)


def test_fp8_descale_forms_agree_and_per_head_values_are_read(rng):
    batch, seqlen, nheads, nheads_k = 2, 64, 4, 2
    q8, qs = quantized(rng, (batch, seqlen, nheads, 128), 1.0)
    k8, ks = quantized(rng, (batch, seqlen, nheads_k, 128), 1.0)
    v8, vs = quantized(rng, (batch, seqlen, nheads_k, 128), 0.5)
    call = lambda a, b, c: zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=a, k_descale=b, v_descale=c)
    as_float = call(float(qs[0]), float(ks[0]), float(vs[0]))
    np.testing.assert_array_equal(call(qs, ks, vs), as_float)
    expanded = [np.broadcast_to(x.reshape(1, 1), (batch, nheads_k)) for x in (qs, ks, vs)]
    np.testing.assert_array_equal(call(*expanded), as_float)
    # Distinct values per (batch, kv head): the oracle decodes each with its own descale.
    # q and k's factors multiply into the scores' scale, so they stay within 4x: wider score spreads raise
    # lean P's LSE error (see conftest), which is not what this test is about.
    factors = [np.array(f, dtype=np.float32) for f in ([[1, 2], [0.5, 1.5]], [[1, 2], [0.5, 1.5]], [[1, 2], [4, 0.5]])]
    per_head = [x[0] * f for x, f in zip((qs, ks, vs), factors)]
    out, lse = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=per_head[0], k_descale=per_head[1],
                                    v_descale=per_head[2], return_lse=True)
    q_scale = np.repeat(per_head[0], nheads // nheads_k, axis=1)  # q's heads read their kv head's descale
    want_out, want_lse = attention_fp64(fp8_values(q8, q_scale), fp8_values(k8, per_head[1]),
                                        fp8_values(v8, per_head[2]))
    check_against(out, lse, want_out, want_lse, FP8_OUT_TOLERANCE, FP8_LSE_TOLERANCE)
    # The same values in views whose byte strides are not whole float32 elements (a field of a packed
    # structured array), are negative (a reversed view) or column-major: the same output, bit for bit.
    def packed_field(x):
        rec = np.zeros(x.shape, dtype=np.dtype([("value", "<f4"), ("tag", "u2")]))  # 6-byte records
        rec["value"] = x
        return rec["value"]

    def reversed_view(x):
        return np.ascontiguousarray(x[::-1, ::-1])[::-1, ::-1]

    for make in (packed_field, reversed_view, np.asfortranarray):
        views = [make(x) for x in per_head]
        assert all(np.array_equal(v, x) for v, x in zip(views, per_head))
        again = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=views[0], k_descale=views[1],
                                     v_descale=views[2])
        np.testing.assert_array_equal(again, out, err_msg=make.__name__)


def test_fp8_quantize_round_trips_within_one_e4m3_step(rng):
    x = random_bf16(rng, (4, 16, 128), 3.0)
    codes, descale = zyfa.fp8_quantize(x)
    d = float(descale[0])
    assert d > 0 and np.log2(d) == np.round(np.log2(d)), f"descale {d} is not a power of two"
    values = bf16_values(x)
    amax = np.abs(values).max()
    assert 224 < amax / d <= 448  # 2^ceil(log2(amax / 448)) maps the largest value into (224, 448]
    back = e4m3_to_float32(codes).astype(np.float64) * d
    assert (np.abs(back - values) <= np.abs(values) / 16 + d * 2.0 ** -10).all()
    # Floats are rounded to BF16 first: the same codes as from the BF16 bits.
    codes_f, descale_f = zyfa.fp8_quantize(values.astype(np.float32))
    np.testing.assert_array_equal(codes_f, codes)
    assert descale_f[0] == d


def test_fp8_quantize_copies_rows_it_cannot_read_in_place(rng):
    # A broadcast row (stride 0), reversed rows (negative stride), overlapping windows (stride below dim) and
    # a transposed single row: each must give the codes of its contiguous copy (the library reads row_stride
    # 0 as dim and refuses the others, so the package copies them).
    row = random_bf16(rng, (128,), 2.0)
    block = random_bf16(rng, (8, 128), 2.0)
    windows = np.lib.stride_tricks.sliding_window_view(random_bf16(rng, (256,), 2.0), 128)[::8]
    cases = {"broadcast": np.broadcast_to(row, (64, 128)), "reversed": block[::-1], "overlapping": windows,
             "one transposed row": random_bf16(rng, (128, 1), 2.0).T}
    for name, view in cases.items():
        codes, descale = zyfa.fp8_quantize(view)
        want_codes, want_descale = zyfa.fp8_quantize(np.ascontiguousarray(view))
        np.testing.assert_array_equal(codes, want_codes, err_msg=name)
        np.testing.assert_array_equal(descale, want_descale, err_msg=name)


@pytest.mark.parametrize("seed", [7, 2**64 - 1])  # rotation_seed is a uint64_t: its top bit too
def test_hadamard_rotation_preserves_scores(rng, seed):
    q, k = random_bf16(rng, (64, 128)), random_bf16(rng, (64, 128))
    (q8, qs), (k8, ks) = (zyfa.fp8_quantize(x, rotation="hadamard", seed=seed) for x in (q, k))
    rotated = (e4m3_to_float32(q8) * qs[0]).astype(np.float64) @ (e4m3_to_float32(k8) * ks[0]).astype(np.float64).T
    exact = bf16_values(q) @ bf16_values(k).T
    # The rotation is orthogonal, so q k^T survives up to FP8 rounding (about 2^-4 relative per element).
    assert np.linalg.norm(rotated - exact) / np.linalg.norm(exact) < 0.1
    plain8, plain_s = zyfa.fp8_quantize(q)
    assert not np.array_equal(plain8, q8), "the rotation changed nothing"
    other8, _ = zyfa.fp8_quantize(q, rotation="hadamard", seed=seed ^ 2**63)
    assert not np.array_equal(other8, q8), "the seed's top bit changed nothing"


def test_quantize_seed_outside_uint64_is_refused(rng):
    q = random_bf16(rng, (4, 128))
    for seed in (-1, 2**64):
        with pytest.raises(ValueError, match="seed"):
            zyfa.fp8_quantize(q, rotation="hadamard", seed=seed)


def test_ml_dtypes_arrays_when_installed(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is optional; uint16/uint8 arrays are the default")
    q, k, v = qkv_bf16(rng, 1, 20, 2, 1)
    out = zyfa.flash_attn_func(q, k, v, causal=True)
    typed = [x.view(ml_dtypes.bfloat16) for x in (q, k, v)]
    out_typed = zyfa.flash_attn_func(*typed, causal=True)
    assert out_typed.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out_typed.view(np.uint16), out)


def test_loaded_library_matches_the_package():
    assert zyfa.library_version() == zyfa.HEADER_VERSION
