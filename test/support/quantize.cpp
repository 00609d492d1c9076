#include "support/quantize.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/numerics.h"

namespace zyfa::test {

float fp8_descale_for_amax(float amax) {
  if (!(amax > 0.0f)) return 1.0f;
  // In double, amax / 448 is exact whenever it is a power of two, so the ceiling cannot slip by one.
  int exponent;
  const double mantissa = std::frexp(double(amax) / double(numerics::kE4m3Max), &exponent);
  return std::ldexp(1.0f, mantissa == 0.5 ? exponent - 1 : exponent);
}

uint8_t fp8_code(float x, float descale) { return numerics::e4m3_code(numerics::round_bf16(x) / descale); }

float bf16_amax(const float *x, int64_t n) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(numerics::round_bf16(x[i])));
  return amax;
}

}  // namespace zyfa::test
