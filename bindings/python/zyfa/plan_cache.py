"""The library's cache of GPU plans (job tables per shape), shared by every thread and stream of the
process: its counters, its bound, and clearing it. A service that sees many shapes reads the evictions
here and bounds the device memory the plans hold."""
import ctypes

from . import _abi, _lib, errors


def stats():
    """The counters of zyfa_plan_cache_get_stats as a dict: hits, misses, evictions, entries, capacity and
    device_bytes. Each uncaptured CUDA call of this package prepares first, so it counts one lookup per plan
    its shape may take (up to three) beside the call's own."""
    s = _abi.zyfa_plan_cache_stats()
    _lib.check(_lib.lib().zyfa_plan_cache_get_stats(ctypes.byref(s)))
    return {name: getattr(s, name) for name, _ in s._fields_ if name != "struct_size"}


def set_capacity(capacity):
    """Bounds the cache (least recently used plans go first); capacity >= 1 (default 64)."""
    capacity = int(capacity)
    if not 0 <= capacity < 2**64:  # ctypes would wrap it into uint64 silently (-1: an unbounded cache)
        raise errors.error_for(errors.Status.BAD_ARGUMENT, f"capacity = {capacity}: must be from 1 to 2**64 - 1")
    _lib.check(_lib.lib().zyfa_plan_cache_set_capacity(capacity))


def clear():
    """Frees every plan and its device memory. Not while a call that uses a plan may still run on a stream,
    nor while a captured CUDA graph that holds one may still be launched."""
    _lib.check(_lib.lib().zyfa_plan_cache_clear())
