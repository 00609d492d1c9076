// GoogleTest forms of the support checks, so that a failure prints what was found.
#ifndef ZYFA_TEST_SUPPORT_CHECKS_HPP_
#define ZYFA_TEST_SUPPORT_CHECKS_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/error_norms.hpp"
#include "support/host_attention.hpp"

namespace zyfa::test {

// The host output of a call that must write nothing (a refused descriptor) starts as this bf16 NaN, which no
// library path writes, and must end as it.
constexpr uint16_t kUntouchedBf16 = 0x7fc1;

// Every element of `buffer` still `value`: nothing was written there.
template <typename Buffer, typename T>
bool all_equal(const Buffer &buffer, T value) {
  return std::all_of(buffer.begin(), buffer.end(), [value](auto x) { return x == value; });
}

// Every logical output and LSE element written and finite, no gap element touched.
::testing::AssertionResult outputs_written(const HostAttention &h);

// rel_rms <= max_rel_rms with every value finite.
::testing::AssertionResult within_rel_rms(const ErrorStats &e, double max_rel_rms);

// zyfa_attn_prepare of `desc` got past validation: it succeeded, or (on a machine without a Hopper GPU)
// stopped at the device check.
::testing::AssertionResult prepare_passes_validation(const zyfa_attn_desc &desc);

// The bits of a call's outputs (out and LSE), to compare later calls with.
class OutputSnapshot {
 public:
  explicit OutputSnapshot(const HostAttention &h);
  bool matches(const HostAttention &h) const;

 private:
  std::vector<uint8_t> out_;
  std::vector<float> lse_;
};

// Determinism: `call(grid)` runs `repeats` more times (grid 0 = the plan's; the last with `small_grid`, so
// that every CTA walks several jobs), each expected to leave exactly `first`'s bits in `h`. A call that
// returns a message fails the test. Returns how many calls differed.
int count_differing_repeats(HostAttention &h, const OutputSnapshot &first, int repeats, int small_grid,
                            const std::function<std::string(int grid)> &call);

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_CHECKS_HPP_
