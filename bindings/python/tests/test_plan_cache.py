"""zyfa.plan_cache over the library's plan cache: counters, the bound, and a bad capacity refused. Host calls
build no plans, so the counters are read, not driven, on a machine without a GPU."""
import pytest

import zyfa


def test_stats_are_the_librarys_counters():
    s = zyfa.plan_cache.stats()
    assert set(s) == {"hits", "misses", "evictions", "entries", "capacity", "device_bytes"}
    assert all(isinstance(v, int) and v >= 0 for v in s.values())  # entries may pass capacity: pinned plans


def test_set_capacity_bounds_the_cache_and_zero_is_refused():
    before = zyfa.plan_cache.stats()["capacity"]
    try:
        zyfa.plan_cache.set_capacity(7)
        assert zyfa.plan_cache.stats()["capacity"] == 7
        for bad in (0, -1, 2**64 + 5):  # the last two would wrap in ctypes' uint64
            with pytest.raises(zyfa.ZyfaValueError) as info:
                zyfa.plan_cache.set_capacity(bad)
            assert info.value.status is zyfa.Status.BAD_ARGUMENT and "capacity" in info.value.message
        assert zyfa.plan_cache.stats()["capacity"] == 7
    finally:
        zyfa.plan_cache.set_capacity(before)


def test_clear_empties_the_cache():
    zyfa.plan_cache.clear()
    assert zyfa.plan_cache.stats()["entries"] == 0
