#include "support/checks.hpp"

#include <cstring>

#include "support/gpu.hpp"

namespace zyfa::test {

::testing::AssertionResult outputs_written(const HostAttention &h) {
  const OutputCheck c = h.check_outputs();
  if (c.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << h.shape().name() << ": " << c.describe();
}

::testing::AssertionResult prepare_passes_validation(const zyfa_attn_desc &desc) {
  const zyfa_status s = zyfa_attn_prepare(&desc, nullptr);
  if (s == ZYFA_STATUS_SUCCESS) return ::testing::AssertionSuccess();
  // Past validation, prepare needs a Hopper GPU: without one these statuses are the pass; with one, a failure.
  if ((s == ZYFA_STATUS_NO_DEVICE || s == ZYFA_STATUS_UNSUPPORTED_DEVICE) && !gpu_unavailable_reason().empty())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << zyfa_status_string(s) << ": " << zyfa_last_error();
}

::testing::AssertionResult within_rel_rms(const ErrorStats &e, double max_rel_rms) {
  if (e.count > 0 && e.nonfinite == 0 && e.rel_rms <= max_rel_rms) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << e.describe() << ", limit rel_rms " << max_rel_rms;
}

OutputSnapshot::OutputSnapshot(const HostAttention &h)
    : out_(static_cast<const uint8_t *>(h.out.data()), static_cast<const uint8_t *>(h.out.data()) + h.out.size_bytes()),
      lse_(h.lse) {}

bool OutputSnapshot::matches(const HostAttention &h) const {
  return h.out.size_bytes() == out_.size() && std::memcmp(out_.data(), h.out.data(), out_.size()) == 0 &&
         h.lse.size() == lse_.size() && std::memcmp(lse_.data(), h.lse.data(), lse_.size() * sizeof(float)) == 0;
}

int count_differing_repeats(HostAttention &h, const OutputSnapshot &first, int repeats, int small_grid,
                            const std::function<std::string(int grid)> &call) {
  int differing = 0;
  for (int i = 1; i <= repeats; ++i) {
    const int grid = i == repeats ? small_grid : 0;
    const std::string where = "call " + std::to_string(i) + (grid ? " (grid " + std::to_string(grid) + ")" : "");
    if (const std::string message = call(grid); !message.empty()) {
      ADD_FAILURE() << where << ": " << message;
      return differing + 1;
    }
    const bool same = first.matches(h);
    differing += !same;
    EXPECT_TRUE(same) << where;
  }
  return differing;
}

}  // namespace zyfa::test
