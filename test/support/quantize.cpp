#include "support/quantize.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/fp8_scale.h"
#include "kernels/numerics.h"

namespace zyfa::test {

// The library's own rule (src/kernels/fp8_scale.h), so tests quantize exactly as zyfa_quantize_fp8 does.
float fp8_descale_for_amax(float amax) { return fp8_scale::descale_for_amax(amax); }

uint8_t fp8_code(float x, float descale) { return numerics::e4m3_code(numerics::round_bf16(x) / descale); }

float bf16_amax(const float *x, int64_t n) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(numerics::round_bf16(x[i])));
  return amax;
}

}  // namespace zyfa::test
