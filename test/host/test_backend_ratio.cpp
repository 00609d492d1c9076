// The GPU-vs-CPU-backend ratio that the GPU kernel tests assert (support/backend_ratio.hpp), on vectors
// whose figures are known: every distance relative to the fp64 result's RMS, the smaller error as the
// denominator, the sum-order floor, and non-finite values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/backend_ratio.hpp"

namespace zyfa::test {
namespace {

// exact = (3, 4): RMS over the vector's norm 5. Offsets along the first element only.
const std::vector<double> kExact = {3.0, 4.0};

std::vector<double> off_by(double delta) { return {kExact[0] + delta, kExact[1]}; }

// Equal but for the rounding of 3 + delta.
void expect_close(double got, double want) { EXPECT_NEAR(got, want, 1e-8 * want); }

TEST(BackendRatio, DistanceOverTheSmallerErrorRelativeToTheReference) {
  const BackendComparison c = compare_backends(off_by(0.05), off_by(-0.10), kExact);
  expect_close(c.gpu_err, 0.05 / 5);
  expect_close(c.cpu_err, 0.10 / 5);
  expect_close(c.gpu_cpu, 0.15 / 5);  // normalized by fp64's RMS, not the CPU backend's
  expect_close(c.ratio, 0.15 / 0.05);  // over the smaller of the two errors
  EXPECT_FALSE(within_backend_ratio(c));
  // Swapping the backends changes nothing.
  const BackendComparison swapped = compare_backends(off_by(-0.10), off_by(0.05), kExact);
  EXPECT_DOUBLE_EQ(swapped.ratio, c.ratio);
}

TEST(BackendRatio, CloseBackendsPassAtTheBound) {
  // Both 1e-2 off fp64 in the same direction, 1e-3 apart: ratio 0.1.
  const BackendComparison c = compare_backends(off_by(0.050), off_by(0.055), kExact);
  expect_close(c.ratio, 0.005 / 0.050);
  EXPECT_TRUE(within_backend_ratio(c));
  EXPECT_FALSE(within_backend_ratio(c, 0.05));
}

TEST(BackendRatio, ErrorsBelowSumOrderNoiseAreFloored) {
  // Both exact but for fp32-order noise: the ratio compares the distance with the floor, not with 0.
  const BackendComparison exact_both = compare_backends(kExact, kExact, kExact);
  EXPECT_EQ(exact_both.ratio, 0.0);
  const BackendComparison noise = compare_backends(off_by(1e-7), kExact, kExact);
  expect_close(noise.ratio, (1e-7 / 5) / kSumOrderNoise);
  EXPECT_TRUE(within_backend_ratio(noise));
}

TEST(BackendRatio, NonFiniteOrMismatchedInputsFail) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isinf(compare_backends({nan, 4.0}, kExact, kExact).ratio));
  EXPECT_TRUE(std::isinf(compare_backends(kExact, {3.0, INFINITY}, kExact).ratio));
  EXPECT_TRUE(std::isinf(compare_backends({3.0}, kExact, kExact).ratio));
  EXPECT_FALSE(within_backend_ratio(compare_backends({nan, 4.0}, kExact, kExact)));
}

}  // namespace
}  // namespace zyfa::test
