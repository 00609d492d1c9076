package zyfa

// #include "zyfa/zyfa.h"
import "C"

import "unsafe"

// PlanCacheStats are the counters of the library's plan cache (job tables per shape), shared by every
// goroutine, thread and stream of the process.
type PlanCacheStats struct {
	Hits, Misses, Evictions uint64
	Entries                 uint64 // plans held now
	Capacity                uint64 // the most plans held at once
	DeviceBytes             uint64 // device memory held by the job tables
}

// GetPlanCacheStats reads the plan cache's counters: a service that sees many shapes watches Evictions.
func GetPlanCacheStats() (PlanCacheStats, error) {
	stats := C.zyfa_plan_cache_stats{struct_size: C.size_t(unsafe.Sizeof(C.zyfa_plan_cache_stats{}))}
	err := call(func() C.zyfa_status { return C.zyfa_plan_cache_get_stats(&stats) })
	return PlanCacheStats{Hits: uint64(stats.hits), Misses: uint64(stats.misses), Evictions: uint64(stats.evictions),
		Entries: uint64(stats.entries), Capacity: uint64(stats.capacity), DeviceBytes: uint64(stats.device_bytes)}, err
}

// SetPlanCacheCapacity bounds the cache (least recently used plans go first); capacity >= 1 (default 64),
// else ErrBadArgument.
func SetPlanCacheCapacity(capacity uint64) error {
	return call(func() C.zyfa_status { return C.zyfa_plan_cache_set_capacity(C.uint64_t(capacity)) })
}

// ClearPlanCache frees every plan and its device memory. Not while a call that uses a plan may still run on
// a stream, nor while a captured CUDA graph that holds one may still be launched.
func ClearPlanCache() error {
	return call(func() C.zyfa_status { return C.zyfa_plan_cache_clear() })
}
