"""lean_p_study's block recurrence (--anchors): each way of anchoring the codes keeps every output row a
weighted average whose weights sum to one, and stays near float64 attention."""
import numpy as np
import pytest

import lean_p_study as study

ANCHORS = ["m", "118", "run118", "exact"]


def _inputs(n, d=32, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((n, d)), rng.standard_normal((n, d))


def _scale(q):
    """The c that study.attention applies: softmax scale 1 / sqrt(d), in base-2 units."""
    return np.log2(np.e) / np.sqrt(q.shape[1])


def _reference(q, k, v):
    return study.attention(q, k, v, lambda x: 2.0 ** x)  # float64, P exact


@pytest.mark.parametrize("anchor", ANCHORS)
def test_rows_of_ones_stay_one(anchor):
    # Three key blocks and a partial one: the denominators come from the same rounded P as the numerators.
    n = 3 * study.KEY_BLOCK + 17
    q, k, _ = _inputs(n)
    out = study.blockwise_attention(q, k, np.ones((n, 4)), _scale(q), anchor)
    np.testing.assert_allclose(out, 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("anchor", ANCHORS)
def test_close_to_float64_attention(anchor):
    n = 2 * study.KEY_BLOCK + 5
    q, k, v = _inputs(n, seed=1)
    out = study.blockwise_attention(q, k, v, _scale(q), anchor)
    ref = _reference(q, k, v)
    err = np.sqrt(((out - ref) ** 2).sum() / (ref ** 2).sum())
    assert err < 0.05, f"{anchor}: relative RMS error {err:.3e}"


def test_run_anchor_rescales_at_every_rise():
    # A row whose scores rise block after block: with the running anchor every block's max is the new
    # reference, so its top code is C exactly; a wrong rescale of O would show as a row far from float64.
    n = 3 * study.KEY_BLOCK
    q = np.ones((n, 1))
    k = np.linspace(0.0, 6.0, n)[:, None]
    v = np.arange(n, dtype=np.float64)[:, None]
    out = study.blockwise_attention(q, k, v, _scale(q), "run118")
    ref = _reference(q, k, v)
    assert np.abs(out[-1] - ref[-1]).max() < 0.05 * np.abs(ref[-1]).max()


FRAMES = [(118, 0, 0), (118, 0, 1), (118, 0, np.inf), (110, 1, 2)]


@pytest.mark.parametrize("frame", FRAMES)
def test_frames_keep_rows_of_ones_one(frame):
    n = 3 * study.KEY_BLOCK + 17
    q, k, _ = _inputs(n, seed=2)
    out, _ = study.frame_attention(q, k, np.ones((n, 4)), _scale(q), *frame)
    np.testing.assert_allclose(out, 1.0, rtol=0, atol=1e-12)


def test_frame_moved_every_block_is_the_per_block_anchor():
    # U = H = 0: the anchor follows every block's max, which is code C's per-block scaling with O multiplied in
    # place of the fold; and H = inf: it follows rises only, which is the running anchor.
    n = 3 * study.KEY_BLOCK + 40
    q, k, v = _inputs(n, seed=3)
    c = _scale(q)
    every, share = study.frame_attention(q, k, v, c, 118, 0, 0)
    np.testing.assert_allclose(every, study.blockwise_attention(q, k, v, c, "118"), rtol=1e-12, atol=1e-12)
    assert share == 1.0
    rises, fewer = study.frame_attention(q, k, v, c, 118, 0, np.inf)
    np.testing.assert_allclose(rises, study.blockwise_attention(q, k, v, c, "run118"), rtol=1e-12, atol=1e-12)
    assert fewer < share


def test_frames_close_to_float64_attention():
    n = 2 * study.KEY_BLOCK + 5
    q, k, v = _inputs(n, seed=4)
    ref = _reference(q, k, v)
    for frame in FRAMES:
        out, _ = study.frame_attention(q, k, v, _scale(q), *frame)
        err = np.sqrt(((out - ref) ** 2).sum() / (ref ** 2).sum())
        assert err < 0.05, f"{frame}: relative RMS error {err:.3e}"
