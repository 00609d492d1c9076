"""Bad input raises: the library's refusals as ZyfaError (also ValueError) carrying its status and
message, and flash-attn's argument rules as TypeError or ValueError before any call."""
import pickle

import numpy as np
import pytest

import zyfa
from conftest import random_bf16


@pytest.fixture
def qkv(rng):
    return (random_bf16(rng, (1, 16, 2, 128)), random_bf16(rng, (1, 16, 1, 128)), random_bf16(rng, (1, 16, 1, 128)))


def library_error(call):
    with pytest.raises(zyfa.ZyfaError) as info:
        call()
    return info.value


def test_unsupported_head_dim_carries_the_librarys_message(rng):
    q, k, v = (random_bf16(rng, (1, 16, h, 64)) for h in (2, 1, 1))
    err = library_error(lambda: zyfa.flash_attn_func(q, k, v, causal=True))
    assert err.status is zyfa.Status.UNSUPPORTED_HEAD_DIM
    assert isinstance(err, ValueError) and isinstance(err, zyfa.ZyfaValueError)
    assert "d_qk" in err.message and "64" in err.message
    assert err.message in str(err) and "ZYFA_STATUS_UNSUPPORTED_HEAD_DIM" in str(err)


def test_an_error_survives_pickling(rng):
    """As a multiprocessing or ProcessPoolExecutor worker's error reaches its parent."""
    q, k, v = (random_bf16(rng, (1, 16, h, 64)) for h in (2, 1, 1))
    err = library_error(lambda: zyfa.flash_attn_func(q, k, v, causal=True))
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and back.status is err.status
    assert (back.message, back.description, str(back)) == (err.message, err.description, str(err))


def test_head_ratio(rng):
    q, k, v = (random_bf16(rng, (1, 16, h, 128)) for h in (3, 2, 2))
    err = library_error(lambda: zyfa.flash_attn_func(q, k, v, causal=True))
    assert err.status is zyfa.Status.BAD_HEAD_RATIO and "nheads" in err.message


def test_negative_softmax_scale(qkv):
    err = library_error(lambda: zyfa.flash_attn_func(*qkv, softmax_scale=-1.0, causal=True))
    assert err.status is zyfa.Status.BAD_SOFTMAX_SCALE and "softmax_scale" in err.message


def test_fp8_descales_are_required_and_must_be_positive():
    q8 = np.full((1, 16, 1, 128), 0x38, dtype=np.uint8)
    err = library_error(lambda: zyfa.flash_attn_func(q8, q8, q8, causal=True, q_descale=1.0, k_descale=1.0))
    assert err.status is zyfa.Status.BAD_DESCALE and "v_descale" in err.message
    err = library_error(lambda: zyfa.flash_attn_func(q8, q8, q8, causal=True, q_descale=1.0, k_descale=-2.0,
                                                     v_descale=1.0))
    assert err.status is zyfa.Status.BAD_DESCALE and "k_descale" in err.message


def test_descale_with_bf16_is_refused(qkv):
    err = library_error(lambda: zyfa.flash_attn_func(*qkv, causal=True, q_descale=1.0))
    assert err.status is zyfa.Status.FP8_FIELD_WITH_BF16 and "q_descale" in err.message


def test_window_sizes_that_mean_causal_are_accepted(qkv):
    out = zyfa.flash_attn_func(*qkv, causal=True)
    for window in [(-1, -1), (-1, 0), (None, None), [-1, -1]]:
        np.testing.assert_array_equal(zyfa.flash_attn_func(*qkv, causal=True, window_size=window), out)
    for window in [(128, 0), (-1, 5), None]:
        with pytest.raises(ValueError, match="window"):
            zyfa.flash_attn_func(*qkv, causal=True, window_size=window)


def test_only_causal_attention(qkv):
    with pytest.raises(ValueError, match="causal=True"):
        zyfa.flash_attn_func(*qkv)


def test_flash_attn_3_positional_order_is_a_type_error(qkv):
    with pytest.raises(TypeError, match="flash-attn 3"):
        zyfa.flash_attn_func(*qkv, 0.088, True)
    # flash-attn 2's positional order works: dropout_p, softmax_scale, causal.
    np.testing.assert_array_equal(zyfa.flash_attn_func(*qkv, 0.0, 0.088, True),
                                  zyfa.flash_attn_func(*qkv, softmax_scale=0.088, causal=True))


def test_unsupported_features_are_refused(qkv):
    with pytest.raises(ValueError, match="dropout"):
        zyfa.flash_attn_func(*qkv, dropout_p=0.1, causal=True)
    with pytest.raises(ValueError, match="softcap"):
        zyfa.flash_attn_func(*qkv, causal=True, softcap=30.0)
    with pytest.raises(ValueError, match="ALiBi"):
        zyfa.flash_attn_func(*qkv, causal=True, alibi_slopes=np.ones(2, np.float32))
    with pytest.raises(ValueError, match="softmax_scale=0"):
        zyfa.flash_attn_func(*qkv, softmax_scale=0.0, causal=True)
    with pytest.raises(ValueError, match="layout"):
        zyfa.flash_attn_func(*qkv, causal=True, layout="sbhd")


def test_return_forms(qkv):
    out, lse = zyfa.flash_attn_func(*qkv, causal=True, return_lse=True)
    probs = zyfa.flash_attn_func(*qkv, causal=True, return_attn_probs=True)
    assert len(probs) == 3 and probs[2] is None
    np.testing.assert_array_equal(probs[0], out)
    np.testing.assert_array_equal(probs[1], lse)
    assert isinstance(zyfa.flash_attn_func(*qkv, causal=True), np.ndarray)


def test_binding_side_shape_errors(rng, qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="sequence lengths"):
        zyfa.flash_attn_func(q, k[:, :8], v[:, :8], causal=True)
    with pytest.raises(ValueError, match="4 dimensions"):
        zyfa.flash_attn_func(q[0], k[0], v[0], causal=True)
    with pytest.raises(TypeError, match="dtype"):
        zyfa.flash_attn_func(q.astype(np.float32), k, v, causal=True)
    with pytest.raises(TypeError, match="NumPy"):
        zyfa.flash_attn_func(q.tolist(), k, v, causal=True)
