#include "support/backend_ratio.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "support/error_norms.hpp"

namespace zyfa::test {

std::string BackendComparison::describe() const {
  char text[200];
  std::snprintf(text, sizeof text, "|GPU - CPU backend| %.3e over min(GPU %.3e, CPU backend %.3e) vs fp64 = %.3f",
                gpu_cpu, gpu_err, cpu_err, ratio);
  return text;
}

BackendComparison compare_backends(const std::vector<double> &gpu, const std::vector<double> &cpu,
                                   const std::vector<double> &exact) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  BackendComparison c;
  c.gpu_err = compare_to_reference(gpu, exact).rel_rms;
  c.cpu_err = compare_to_reference(cpu, exact).rel_rms;
  if (gpu.size() != cpu.size() || gpu.size() != exact.size()) {
    c.gpu_cpu = c.ratio = kInf;
    return c;
  }
  // The distance, normalized like compare_to_reference: by the fp64 result's RMS.
  double diff2 = 0, ref2 = 0;
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (!std::isfinite(gpu[i]) || !std::isfinite(cpu[i])) {
      c.gpu_cpu = c.ratio = kInf;
      return c;
    }
    diff2 += (gpu[i] - cpu[i]) * (gpu[i] - cpu[i]);
    ref2 += exact[i] * exact[i];
  }
  c.gpu_cpu = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  c.ratio = c.gpu_cpu / std::max(std::min(c.gpu_err, c.cpu_err), kSumOrderNoise);
  return c;
}

::testing::AssertionResult within_backend_ratio(const BackendComparison &c, double max_ratio) {
  if (c.ratio <= max_ratio) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << c.describe() << ", limit " << max_ratio;
}

}  // namespace zyfa::test
