#include "ref/tensor_core_sums.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/numerics.h"

namespace zyfa::ref {
namespace {

// Bits kept below the leading bit of the largest term, and significant bits of the result.
constexpr int kAlignedFractionBits = 13;
constexpr int kResultBits = 14;
// Columns per pass: the per-column state lives on the stack.
constexpr int kColumnsPerPass = 128;

using numerics::bits_float;
using numerics::float_bits;

// 2^e as a float, for the exponents a step can give (|e| < 127).
float pow2(int e) { return bits_float(uint32_t(e + 127) << 23); }

// A term's truncation toward zero (finite terms are below 2^15); a NaN, whose conversion is undefined,
// counts 0 here and is carried by the step's poison instead. A compare and a mask: it vectorizes.
int32_t to_int(float term) { return int32_t(term == term ? term : 0.0f); }

// One k-step over rows 0 .. n - 1 for columns 0 .. n_cols - 1 (n_cols <= kColumnsPerPass). Every loop is
// branch-free over the columns, so that it vectorizes: the CPU backend spends its time here.
void step(float *acc, const float *a, const int16_t *a_exp, const float *b, const int16_t *b_exp, int64_t ld,
          int n_cols, int n) {
  int32_t top[kColumnsPerPass], sum[kColumnsPerPass];
  // An accumulator's exponent is its fp32 one, held at kZeroFactorExponent or above (a zero's, whose exponent
  // field reads -127, included), so that every scale below is a normal float: accumulators under 2^-100 are
  // out of the model's range (attention's are sums of e4m3 products, at least 2^-18).
  for (int c = 0; c < n_cols; ++c)
    top[c] = std::max(int32_t((float_bits(acc[c]) >> 23) & 0xff) - 127, int32_t(kZeroFactorExponent));
  for (int k = 0; k < n; ++k) {
    if (a[k] == 0.0f) continue;
    const int32_t ea = a_exp[k];
    const int16_t *eb = b_exp + k * ld;
    for (int c = 0; c < n_cols; ++c) top[c] = std::max(top[c], ea + eb[c]);
  }
  // Scaled by 2^(13 - E), each product a b (exact in float) and the accumulator stay exact, and truncating
  // them cuts each term toward zero: integers below 2^15, so their sum below 2^21 is exact in int32 and in
  // float.
  // A NaN input (e4m3's 0x7f) or accumulator makes the column NaN, as on the GPU: poison[c] collects the
  // terms times zero.
  float poison[kColumnsPerPass];
  for (int c = 0; c < n_cols; ++c) {
    sum[c] = to_int(acc[c] * pow2(kAlignedFractionBits - top[c]));
    poison[c] = acc[c] * 0.0f;
  }
  for (int k = 0; k < n; ++k) {
    if (a[k] == 0.0f) continue;
    const float ak = a[k];
    const float *bk = b + k * ld;
    for (int c = 0; c < n_cols; ++c) {
      const float term = ak * bk[c];
      sum[c] += to_int(term * pow2(kAlignedFractionBits - top[c]));
      poison[c] += term * 0.0f;
    }
  }
  // The result: the sum cut to 14 significant bits (its float's last 23 - 13 mantissa bits cleared), scaled
  // back; an exact cancellation gives +0.
  constexpr uint32_t kResultMask = ~((uint32_t(1) << (23 - (kResultBits - 1))) - 1);
  for (int c = 0; c < n_cols; ++c)
    acc[c] = bits_float(float_bits(float(sum[c])) & kResultMask) * pow2(top[c] - kAlignedFractionBits) + poison[c];
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
