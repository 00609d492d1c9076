// The libFuzzer entry point over zyfa's C ABI (see test/fuzz/README.md), and the small calls: NULL
// arguments, status strings of any value, the plan cache's controls and its struct_size handling.
#include <cstdint>
#include <cstring>

#include "fuzz_common.hpp"
#include "fuzz_targets.hpp"

extern "C" const char *zyfa_fuzz_status_string_of_int(int value);  // c_caller.c

namespace zyfa::fuzz {

bool gpu_entries_stop_at_device_check() {
  static const bool stop = [] {
    zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;  // valid with NULL pointers: prepare validates, then checks the device
    d.batch = d.seqlen = d.nheads = d.nheads_k = 1;
    return zyfa_attn_prepare(&d, nullptr) == ZYFA_STATUS_NO_DEVICE;
  }();
  return stop;
}

namespace {

void fuzz_stats(FuzzedDataProvider &in) {
  const size_t kSizes[] = {0, 8, sizeof(zyfa_plan_cache_stats) - 8, sizeof(zyfa_plan_cache_stats),
                           sizeof(zyfa_plan_cache_stats) + 8};
  const size_t size = in.ConsumeBool() ? kSizes[in.ConsumeIntegralInRange<int>(0, 4)]
                                       : in.ConsumeIntegralInRange<size_t>(0, 4096);
  // Exactly the bytes the caller claims (at least the struct_size field): a write past them is an overflow.
  Block stats(size < sizeof(size_t) ? sizeof(size_t) : size, 0xa5);
  std::memcpy(stats.data(), &size, sizeof size);
  const auto before = stats.snapshot();
  const zyfa_status s = zyfa_plan_cache_get_stats(reinterpret_cast<zyfa_plan_cache_stats *>(stats.data()));
  check_status_contract(s, "zyfa_plan_cache_get_stats");
  if (s != ZYFA_STATUS_SUCCESS) {
    require(stats.equals(before), "zyfa_plan_cache_get_stats", "failed but wrote the struct");
    return;
  }
  require(size == sizeof(zyfa_plan_cache_stats), "zyfa_plan_cache_get_stats", "accepted an unknown struct_size");
  zyfa_plan_cache_stats out;
  std::memcpy(&out, stats.data(), sizeof out);
  require(out.struct_size == size, "zyfa_plan_cache_get_stats", "changed struct_size");
  require(out.capacity >= 1, "zyfa_plan_cache_get_stats", "capacity below 1");
}

}  // namespace

void fuzz_small_calls(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: {
      check_status_contract(zyfa_attn_fwd_host(nullptr), "zyfa_attn_fwd_host(NULL)");
      require(zyfa_attn_fwd_host(nullptr) == ZYFA_STATUS_NULL_ARGUMENT, "zyfa_attn_fwd_host(NULL)", "not NULL_ARGUMENT");
      require(zyfa_attn_prepare(nullptr, nullptr) == ZYFA_STATUS_NULL_ARGUMENT, "zyfa_attn_prepare(NULL)", "");
      require(zyfa_quantize_fp8_host(nullptr) == ZYFA_STATUS_NULL_ARGUMENT, "zyfa_quantize_fp8_host(NULL)", "");
      require(zyfa_plan_cache_get_stats(nullptr) == ZYFA_STATUS_NULL_ARGUMENT, "zyfa_plan_cache_get_stats(NULL)", "");
      break;
    }
    case 1: {
      // A C caller may pass any int where a zyfa_status is expected.
      const char *name = zyfa_fuzz_status_string_of_int(in.ConsumeIntegral<int>());
      require(name != nullptr && std::strncmp(name, "ZYFA_STATUS_", 12) == 0, "zyfa_status_string", "no name");
      break;
    }
    case 2: {
      const uint64_t capacity = uint64_t(pick_edge_or(in, in.ConsumeIntegralInRange<int64_t>(0, 128)));
      const zyfa_status s = zyfa_plan_cache_set_capacity(capacity);
      check_status_contract(s, "zyfa_plan_cache_set_capacity");
      require((s == ZYFA_STATUS_SUCCESS) == (capacity >= 1), "zyfa_plan_cache_set_capacity", "capacity 0 is invalid");
      break;
    }
    case 3: check_status_contract(zyfa_plan_cache_clear(), "zyfa_plan_cache_clear"); break;
    default: fuzz_stats(in); break;
  }
}

}  // namespace zyfa::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  switch (in.ConsumeIntegralInRange<int>(0, 10)) {
    case 0: case 1: case 2: case 3: case 4: case 5: zyfa::fuzz::fuzz_attention(in); break;
    case 6: case 7: case 8: zyfa::fuzz::fuzz_quantize(in); break;
    case 9: zyfa::fuzz::fuzz_plan_cache(in); break;
    default: zyfa::fuzz::fuzz_small_calls(in); break;
  }
  return 0;
}
