#include "support/checks.hpp"

namespace zyfa::test {

::testing::AssertionResult outputs_written(const HostAttention &h) {
  const OutputCheck c = h.check_outputs();
  if (c.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << h.shape().name() << ": " << c.describe();
}

::testing::AssertionResult within_rel_rms(const ErrorStats &e, double max_rel_rms) {
  if (e.count > 0 && e.nonfinite == 0 && e.rel_rms <= max_rel_rms) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << e.describe() << ", limit rel_rms " << max_rel_rms;
}

}  // namespace zyfa::test
