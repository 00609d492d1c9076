# peers.py's accuracy norm must be zyfa_bench's (src/ref/error_norms.cpp): the same weighted sums, so that the
# peers' and zyfa's errors on one set of sampled rows estimate the same whole-output figure.
import numpy as np
import pytest

import peers


def test_weights_scale_both_sums_as_zyfa_bench_does():
    # The C++ host test's case (test_reference.cpp, ErrorNorms.WeightsScaleBothSums).
    ref = np.array([[2.0], [3.0]])
    diff = np.array([[1.0], [2.0]]) - ref
    assert peers.weighted_rel_rms(diff, ref, np.array([[3.0], [1.0]])) == pytest.approx((4.0 / 21.0) ** 0.5, rel=1e-15)
    assert peers.weighted_rel_rms(diff, ref, np.ones((2, 1))) == pytest.approx((2.0 / 13.0) ** 0.5, rel=1e-15)


def test_a_row_standing_for_k_rows_counts_as_k_copies_of_itself():
    rng = np.random.default_rng(1)
    ref, got = rng.standard_normal((5, 8)), rng.standard_normal((5, 8))
    k = np.array([1, 4, 2, 8, 1])
    copies = np.repeat(np.arange(5), k)
    whole = peers.weighted_rel_rms(got[copies] - ref[copies], ref[copies], np.ones((k.sum(), 1)))
    assert peers.weighted_rel_rms(got - ref, ref, k.reshape(-1, 1).astype(float)) == pytest.approx(whole, rel=1e-12)
