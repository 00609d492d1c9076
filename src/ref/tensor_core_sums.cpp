#include "ref/tensor_core_sums.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace zyfa::ref {
namespace {

// Bits kept below the leading bit of the largest term, and significant bits of the result.
constexpr int kAlignedFractionBits = 13;
constexpr int kResultBits = 14;
// Columns per pass: the per-column state lives on the stack.
constexpr int kColumnsPerPass = 128;

// 2^e as a float, for the exponents a step can give (|e| < 127).
float pow2(int e) {
  const uint32_t bits = uint32_t(e + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The sum of the cut terms, sum * 2^-shift, normalized and cut to kResultBits bits.
float normalize(int64_t sum, int shift) {
  if (sum == 0) return 0.0f;
  uint64_t mag = uint64_t(sum < 0 ? -sum : sum);
  const int bits = 64 - __builtin_clzll(mag);
  if (bits > kResultBits) mag &= ~((uint64_t(1) << (bits - kResultBits)) - 1);
  const double r = std::ldexp(double(mag), -shift);
  return float(sum < 0 ? -r : r);
}

// One k-step over rows k0 .. k0 + n - 1 for columns c0 .. c0 + n_cols - 1.
void step(float *acc, const float *a, const int16_t *a_exp, const float *b, const int16_t *b_exp, int64_t ld,
          int n_cols, int n) {
  int top[kColumnsPerPass];
  float scale[kColumnsPerPass];
  int32_t sum[kColumnsPerPass];
  // An accumulator's exponent is its fp32 one, held at kZeroFactorExponent or above so that every scale below
  // is a normal float: accumulators under 2^-100 are out of the model's range (attention's are sums of e4m3
  // products, at least 2^-18).
  for (int c = 0; c < n_cols; ++c)
    top[c] = acc[c] != 0.0f ? std::max(std::ilogb(acc[c]), int(kZeroFactorExponent)) : int(kZeroFactorExponent);
  for (int k = 0; k < n; ++k) {
    if (a[k] == 0.0f) continue;
    const int ea = a_exp[k];
    const int16_t *eb = b_exp + k * ld;
    for (int c = 0; c < n_cols; ++c) top[c] = std::max(top[c], ea + eb[c]);
  }
  // Each product a b is exact in float, and so is a b 2^(13 - E): its truncation is the term's cut toward
  // zero, an integer below 2^15 (a product's significand is below 4 at 2^(e_a + e_b) <= 2^E).
  for (int c = 0; c < n_cols; ++c) {
    scale[c] = pow2(kAlignedFractionBits - top[c]);
    sum[c] = 0;
  }
  for (int k = 0; k < n; ++k) {
    if (a[k] == 0.0f) continue;
    const float ak = a[k];
    const float *bk = b + k * ld;
    for (int c = 0; c < n_cols; ++c) sum[c] += int32_t(ak * bk[c] * scale[c]);
  }
  for (int c = 0; c < n_cols; ++c) {
    const int shift = kAlignedFractionBits - top[c];
    const int64_t cut_acc = int64_t(std::trunc(std::ldexp(double(acc[c]), shift)));
    acc[c] = normalize(sum[c] + cut_acc, shift);
  }
}

}  // namespace

int16_t fp8_exponent(uint8_t e4m3_code) {
  if ((e4m3_code & 0x7f) == 0) return kZeroFactorExponent;
  return int16_t(std::max((e4m3_code >> 3) & 15, 1) - 7);
}

void qgmma_columns(float *acc, const float *a, const int16_t *a_exp, const float *b, const int16_t *b_exp, int64_t ld,
                   int n_cols, int depth) {
  for (int c0 = 0; c0 < n_cols; c0 += kColumnsPerPass)
    for (int k0 = 0; k0 < depth; k0 += kQgmmaK)
      step(acc + c0, a + k0, a_exp + k0, b + k0 * ld + c0, b_exp + k0 * ld + c0, ld,
           std::min(kColumnsPerPass, n_cols - c0), std::min(kQgmmaK, depth - k0));
}

}  // namespace zyfa::ref
