# bench/lazy_rescale_study.py's counting, on block maxes made by hand: a warp-block counts once when any of its
# 16 rows passes its reference by more than tau, block 0 never counts, and FP8 rounds the new reference up to
# a multiple of 1/8 as the kernels do.
import numpy as np

import lazy_rescale_study as study


def test_a_warp_counts_once_when_any_row_rescales():
    bm = np.zeros((32, 3), np.float32)  # two warps, blocks 0-2
    bm[3, 1] = 1.0  # warp 0, block 1: one row up by a binade
    bm[20, 2] = 0.3  # warp 1, block 2: up by 0.3
    assert study.rescaled_fraction([bm], 0.5, fp8=False) == 1 / 4
    assert study.rescaled_fraction([bm], 0.125, fp8=False) == 2 / 4
    assert study.rescaled_fraction([bm], 8.0, fp8=False) == 0.0


def test_fp8_reference_rounds_up_to_eighths():
    bm = np.zeros((16, 3), np.float32)
    bm[0, 1] = 0.26  # rescales at tau 0.125; FP8's new reference is 0.375, BF16's 0.26
    bm[0, 2] = 0.40  # 0.14 above BF16's reference, 0.025 above FP8's
    assert study.rescaled_fraction([bm], 0.125, fp8=False) == 1.0
    assert study.rescaled_fraction([bm], 0.125, fp8=True) == 0.5


def test_block_maxes_are_causal_and_blockwise():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((200, 8)).astype(np.float32)
    k = rng.standard_normal((200, 8)).astype(np.float32)
    tiles = study.block_maxes(q, k, np.float32(1.0))
    assert [t.shape for t in tiles] == [(128, 1), (72, 2)]
    s = q @ k.T
    row = 150  # tile 1, block 1 holds keys 128..150
    assert np.isclose(tiles[1][row - 128, 1], s[row, 128:row + 1].max())
    assert np.isclose(tiles[1][row - 128, 0], s[row, :128].max())
