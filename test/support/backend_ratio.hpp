// The GPU against the CPU backend: the one definition of the "backend ratio" that every GPU kernel test
// asserts. The CPU backend runs the kernels' recurrence (numerics.h) in fp32, so a kernel may differ from
// it only by the order of fp32 sums and the last bits of exp2/log2: the distance between the two must
// stay far below the error either one has against the fp64 oracle.
#ifndef ZYFA_TEST_SUPPORT_BACKEND_RATIO_HPP_
#define ZYFA_TEST_SUPPORT_BACKEND_RATIO_HPP_

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zyfa::test {

// The bound every kernel test holds the ratio to.
constexpr double kMaxBackendRatio = 0.2;
// The floor of the errors in the ratio's denominator: where both backends are all but exact (one key:
// P = 1, out = v, LSE one rounded score) they still differ by the order in which a score's d products are
// added, measured at 1.4-2e-7 relative on the H200; without the floor the ratio would compare that noise
// with rounding noise. Elsewhere the errors are 1e-3 and more, far above it.
constexpr double kSumOrderNoise = 1e-5;

struct BackendComparison {
  double gpu_err = 0;  // rel RMS of the GPU result against fp64
  double cpu_err = 0;  // rel RMS of the CPU backend's result against fp64
  double gpu_cpu = 0;  // rms(gpu - cpu), over the RMS of the fp64 result like the two above
  double ratio = 0;    // gpu_cpu / max(min(gpu_err, cpu_err), kSumOrderNoise); infinite if a value is not finite
  std::string describe() const;
};

// `gpu`, `cpu` and `exact` (fp64) in the same order and of the same size (else every figure is infinite).
BackendComparison compare_backends(const std::vector<double> &gpu, const std::vector<double> &cpu,
                                   const std::vector<double> &exact);

// ratio <= max_ratio, printing every figure otherwise.
::testing::AssertionResult within_backend_ratio(const BackendComparison &c, double max_ratio = kMaxBackendRatio);

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_BACKEND_RATIO_HPP_
