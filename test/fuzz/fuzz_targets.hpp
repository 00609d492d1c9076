// The parts of the API the fuzz entry point drives, one function per part; each consumes what it needs
// of the input.
#ifndef ZYFA_TEST_FUZZ_FUZZ_TARGETS_HPP_
#define ZYFA_TEST_FUZZ_FUZZ_TARGETS_HPP_

#include <fuzzer/FuzzedDataProvider.h>

namespace zyfa::fuzz {

void fuzz_attention(FuzzedDataProvider &in);     // fuzz_attention.cpp
void fuzz_quantize(FuzzedDataProvider &in);      // fuzz_quantize.cpp
void fuzz_plan_cache(FuzzedDataProvider &in);    // fuzz_plan_cache.cpp: the cache's host logic against a model
void fuzz_small_calls(FuzzedDataProvider &in);   // fuzz_entry.cpp: NULL arguments, status strings, plan cache

// True where the GPU entry points stop at the device check (no CUDA device here), so the harness may hand
// them descriptors over host memory or fake pointers. On a machine with a GPU they would launch kernels
// on those, so the harness then calls only the host entry points.
bool gpu_entries_stop_at_device_check();

}  // namespace zyfa::fuzz

#endif  // ZYFA_TEST_FUZZ_FUZZ_TARGETS_HPP_
