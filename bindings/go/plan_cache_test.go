package zyfa

import (
	"errors"
	"strings"
	"testing"
)

// The plan cache's counters, its bound and a refused capacity, on any machine (host calls build no plans).
func TestPlanCacheStatsCapacityAndClear(t *testing.T) {
	before, err := GetPlanCacheStats()
	if err != nil || before.Capacity < 1 { // Entries may pass Capacity: plans captured graphs use are pinned
		t.Fatalf("stats %+v, %v", before, err)
	}
	defer SetPlanCacheCapacity(before.Capacity)
	if err := SetPlanCacheCapacity(7); err != nil {
		t.Fatalf("SetPlanCacheCapacity(7): %v", err)
	}
	if s, err := GetPlanCacheStats(); err != nil || s.Capacity != 7 {
		t.Fatalf("capacity %d after SetPlanCacheCapacity(7), %v", s.Capacity, err)
	}
	var zerr *Error
	if err := SetPlanCacheCapacity(0); !errors.Is(err, ErrBadArgument) || !errors.As(err, &zerr) ||
		!strings.Contains(zerr.Message, "capacity") {
		t.Fatalf("SetPlanCacheCapacity(0): %v, want ErrBadArgument naming capacity", err)
	}
	if err := ClearPlanCache(); err != nil {
		t.Fatalf("ClearPlanCache: %v", err)
	}
	if s, err := GetPlanCacheStats(); err != nil || s.Entries != 0 {
		t.Fatalf("%d entries after ClearPlanCache, %v", s.Entries, err)
	}
}
