# peers.py's timing loops, with a fake timer in place of CUDA events: a slow first call (FA3's first call in a
# process took seconds on the H200, 2026-11-30) must not shrink the sustained window to one call.
import pytest

import peers


class FakeGpu:
    """A timer whose first call takes `first_ms` and every later one `ms`; counts the calls it ran."""

    def __init__(self, first_ms, ms):
        self.first_ms, self.ms, self.calls = first_ms, ms, 0

    def __call__(self, call, n):
        total = sum(self.first_ms if self.calls + i == 0 else self.ms for i in range(n))
        self.calls += n
        return total / n


def test_warm_up_returns_the_steady_state_not_the_first_call():
    gpu = FakeGpu(first_ms=4000.0, ms=3.0)
    assert peers.warm_up(None, 1.0, 1, gpu) == pytest.approx(3.0)


def test_sustained_window_lasts_its_seconds_after_a_slow_first_call():
    gpu = FakeGpu(first_ms=4000.0, ms=3.3)
    ms, calls, timed_s, [start, end] = peers.time_sustained(None, 3.0, 1.0, gpu)
    assert ms == pytest.approx(3.3)
    assert calls > 900
    assert timed_s >= 3.0
    assert 0 < start <= end


def test_sustained_timing_that_stays_short_is_an_error():
    class Shrinking:
        def __call__(self, call, n):
            return 1.0 / n  # every window takes 1 ms in all, whatever n

    with pytest.raises(RuntimeError, match="stayed under"):
        peers.time_sustained(None, 3.0, 0.0, Shrinking())
