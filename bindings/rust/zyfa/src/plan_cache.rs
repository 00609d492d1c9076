//! The library's cache of GPU plans (job tables), shared by all threads and streams.
use zyfa_sys as sys;

use crate::error::{check, Result};

pub use sys::zyfa_plan_cache_stats as PlanCacheStats;

pub fn stats() -> Result<PlanCacheStats> {
    let mut stats = PlanCacheStats::default();
    // SAFETY: stats is a local with struct_size set by Default.
    check(unsafe { sys::zyfa_plan_cache_get_stats(&mut stats) })?;
    Ok(stats)
}

/// Bounds the cache (least recently used plans go first); capacity >= 1.
pub fn set_capacity(capacity: u64) -> Result<()> {
    // SAFETY: plain value argument.
    check(unsafe { sys::zyfa_plan_cache_set_capacity(capacity) })
}

/// Frees every plan.
///
/// # Safety
/// No launch that uses a plan may still be running on any stream.
pub unsafe fn clear() -> Result<()> {
    check(sys::zyfa_plan_cache_clear())
}
