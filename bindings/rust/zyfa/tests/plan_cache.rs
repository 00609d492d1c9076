//! The plan cache's counters, its bound, a refused capacity and a clear, on any machine (host calls build no
//! plans). Its own test binary: the capacity is process-wide, so no other test runs beside it.
use zyfa::{plan_cache, Status};

/// Puts the capacity back however the test ends.
struct CapacityGuard(u64);

impl Drop for CapacityGuard {
    fn drop(&mut self) {
        let _ = plan_cache::set_capacity(self.0);
    }
}

#[test]
fn stats_capacity_and_clear() {
    let before = plan_cache::stats().expect("stats");
    // Entries may pass the capacity: plans that captured graphs use are pinned beside it.
    assert!(before.capacity >= 1, "capacity {}", before.capacity);
    let _guard = CapacityGuard(before.capacity);

    plan_cache::set_capacity(7).expect("set_capacity(7)");
    assert_eq!(plan_cache::stats().expect("stats").capacity, 7);

    let err = plan_cache::set_capacity(0).unwrap_err();
    assert_eq!(err.status(), Status::BadArgument);
    assert!(err.message().contains("capacity"), "message: {}", err.message());
    assert_eq!(plan_cache::stats().expect("stats").capacity, 7, "a refused capacity changed the bound");

    // SAFETY: this test launches nothing, so no launch can be using a plan.
    unsafe { plan_cache::clear() }.expect("clear");
    assert_eq!(plan_cache::stats().expect("stats").entries, 0);
}
