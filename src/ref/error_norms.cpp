#include "ref/error_norms.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace zyfa::ref {

std::string ErrorStats::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "rel_rms %.3e max_abs %.3e over %lld values (%lld non-finite)", rel_rms,
                max_abs, (long long)count, (long long)nonfinite);
  return text;
}

ErrorStats compare_to_reference(const std::vector<double> &actual, const std::vector<double> &expected,
                                const std::vector<double> &weights) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  ErrorStats e;
  if (actual.size() != expected.size() || (!weights.empty() && weights.size() != actual.size())) {
    e.count = -1;
    e.rel_rms = e.max_abs = kInf;
    return e;
  }
  double err2 = 0, ref2 = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!std::isfinite(actual[i]) || !std::isfinite(expected[i])) {  // either side: no error can be measured
      ++e.nonfinite;
      continue;
    }
    const double d = actual[i] - expected[i];
    const double w = weights.empty() ? 1.0 : weights[i];
    err2 += w * d * d;
    ref2 += w * expected[i] * expected[i];
    const double abs_d = std::fabs(d);
    e.max_abs = std::max(e.max_abs, abs_d);
  }
  e.count = int64_t(actual.size());
  e.rel_rms = e.nonfinite ? kInf : ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  if (e.nonfinite) e.max_abs = kInf;  // so that no bound on max_abs alone passes a non-finite output
  return e;
}

}  // namespace zyfa::ref
