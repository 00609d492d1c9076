#include "ref/tensor_core_sums.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>

namespace zyfa::ref {
namespace {

// Bits kept below the leading bit of the largest term, and significant bits of the result.
constexpr int kAlignedFractionBits = 13;
constexpr int kResultBits = 14;
// A product's significand s_a s_b has 6 fraction bits.
constexpr int kProductFractionBits = 6;
constexpr int kFp32MinExponent = -126;

struct FactorTable {
  Fp8Factor f[256];
  FactorTable() {
    for (int c = 0; c < 256; ++c) {
      const int e = (c >> 3) & 15, mant = c & 7, sig = e == 0 ? mant : 8 + mant;
      f[c].sig = int8_t((c & 0x80) ? -sig : sig);
      f[c].exp = int8_t(std::max(e, 1) - 7);
    }
  }
};

// One k-step: acc + sum_{k < n} a[k] b[k * stride], n <= kQgmmaK.
float qgmma_step(float acc, const Fp8Factor *a, const Fp8Factor *b, int64_t stride, int n) {
  int top = acc != 0.0f ? std::max(std::ilogb(acc), kFp32MinExponent) : INT_MIN;
  for (int k = 0; k < n; ++k)
    if (a[k].sig != 0 && b[k * stride].sig != 0) top = std::max(top, a[k].exp + b[k * stride].exp);
  if (top == INT_MIN) return 0.0f;
  const int lsb = top - kAlignedFractionBits;
  // Products are multiples of 2^(e_a + e_b - 6); their cut keeps (e_a + e_b - 6) - lsb bits below the point,
  // at most 7 (the largest product), so every term is an integer number of 2^lsb below 2^15.
  int64_t sum = 0;
  for (int k = 0; k < n; ++k) {
    const int p = a[k].sig * b[k * stride].sig;
    if (p == 0) continue;
    const int shift = a[k].exp + b[k * stride].exp - kProductFractionBits - lsb;
    const int64_t mag = std::abs(p), cut = shift >= 0 ? mag << shift : (shift > -16 ? mag >> -shift : 0);
    sum += p < 0 ? -cut : cut;
  }
  if (acc != 0.0f) sum += int64_t(std::trunc(std::ldexp(double(acc), -lsb)));
  if (sum == 0) return 0.0f;
  uint64_t mag = uint64_t(sum < 0 ? -sum : sum);
  const int bits = 64 - __builtin_clzll(mag);
  if (bits > kResultBits) mag &= ~((uint64_t(1) << (bits - kResultBits)) - 1);
  const double r = std::ldexp(double(mag), lsb);
  return float(sum < 0 ? -r : r);
}

}  // namespace

Fp8Factor fp8_factor(uint8_t e4m3_code) {
  static const FactorTable table;
  return table.f[e4m3_code];
}

float qgmma_sum(float acc, const Fp8Factor *a, const Fp8Factor *b, int64_t b_stride, int n) {
  for (int k0 = 0; k0 < n; k0 += kQgmmaK)
    acc = qgmma_step(acc, a + k0, b + k0 * b_stride, b_stride, std::min(kQgmmaK, n - k0));
  return acc;
}

}  // namespace zyfa::ref
