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


def test_kernel_rounds_are_whole_rotations_and_the_record_keeps_the_true_median(monkeypatch):
    # Two implementations and --repeats=3: four rounds, each implementation first in two of them, so neither
    # leads more often (the place in the order moved a repeat by 10% on a card at its power cap).
    order = []
    times = {"zyfa-py": iter([1.0, 2.0, 3.0, 4.0]), "fa3": iter([2.0, 2.0, 2.0, 2.0])}

    def fake_call(impl, meta, t, want_lse=False):
        return impl

    def fake_time(call, n):
        order.append(call)
        return next(times[call])

    monkeypatch.setattr(peers, "make_call", fake_call)
    monkeypatch.setattr(peers, "time_calls", fake_time)
    monkeypatch.setattr(peers, "warm_up", lambda call, seconds, min_calls, timer=None: 1.0)
    args = peers.parser().parse_args(["--bench", "zyfa_bench", "--json", "out.json", "--repeats=3"])
    meta = {"batch": 1, "nheads": 2, "nheads_k": 1, "seqlen": 128, "d_qk": 128, "d_v": 128, "dtype": "fp8",
            "inputs": "gaussian", "family": "mha-d128", "input_std": 0.1}
    records = {r["impl"]: r for r in peers.run_timing(args, meta, {}, ["zyfa-py", "fa3"], 0)}
    assert order == ["zyfa-py", "fa3", "fa3", "zyfa-py", "zyfa-py", "fa3", "fa3", "zyfa-py"]
    assert records["zyfa-py"]["repeats"] == 4 and records["fa3"]["repeats"] == 4
    assert records["zyfa-py"]["time_ms"] == pytest.approx(2.5)  # the mean of the middle two of 1, 2, 3, 4
