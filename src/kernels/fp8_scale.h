// The per-tensor scale of zyfa_quantize_fp8, shared by the kernel and its host twin:
//   amax    = max |y| over the (rotated) tensor, reduced as the bit patterns of |y| (below);
//   descale = 2^ceil(log2(amax / 448)): the smallest power of two with amax / descale <= 448;
//   code    = e4m3(y * (1 / descale)), round to nearest even, saturating (numerics::e4m3_code).
// A power of two makes 1/descale exact and the scaling exact (short of fp32 underflow, which rounds the
// same way on both sides), so the only rounding is the FP8 conversion itself.
// Edge cases, by definition:
//   amax == 0 (an all-zero tensor): descale 1, every code 0.
//   amax < 448 * 2^-126: descale 2^-126, the smallest normal float, so that the descale stays a positive
//     normal float (what zyfa_attn_fwd requires) and 1/descale stays finite.
//   amax infinite or NaN (an input infinity or NaN, or a rotation that overflowed fp32): descale NaN, so
//     every code is NaN (0x7f) and the damage stays visible downstream instead of being saturated away.
#ifndef ZYFA_KERNELS_FP8_SCALE_H_
#define ZYFA_KERNELS_FP8_SCALE_H_

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "kernels/numerics.h"
#include "kernels/rounded_ops.h"

namespace zyfa::fp8_scale {

// The exponent of the smallest normal float: the floor of the descale.
constexpr int kMinDescaleExponent = -126;
// frexp's fraction of 448 = 0.875 * 2^9: a larger fraction in the same binade needs the next power.
constexpr float kE4m3MaxFraction = 0.875f;
constexpr int kE4m3MaxFrexpExponent = 9;
// The descale of an all-zero tensor.
constexpr float kZeroTensorDescale = 1.0f;
// The float bits of a quiet NaN: the descale of a tensor with a non-finite value.
constexpr uint32_t kQuietNanBits = 0x7fc00000u;

// |y| as an unsigned word. Non-negative floats order like their bit patterns (and NaN above infinity),
// so the amax is an integer max: associative and commutative, hence the same for every reduction order
// (an atomicMax on the GPU).
ZYFA_HD uint32_t magnitude_bits(float y) { return numerics::float_bits(y) & 0x7fffffffu; }

ZYFA_HD float descale_for_amax(float amax) {
  if (!(amax <= FLT_MAX)) return numerics::bits_float(kQuietNanBits);  // infinity or NaN
  if (amax == 0.0f) return kZeroTensorDescale;
  int e;
  const float f = std::frexp(amax, &e);  // amax = f 2^e, f in [0.5, 1); exact, also for subnormals
  // amax / 448 = (f / 0.875) 2^(e - 9), and f / 0.875 lies in [4/7, 8/7): its ceil(log2) is 0 or 1.
  int k = e - kE4m3MaxFrexpExponent + (f > kE4m3MaxFraction ? 1 : 0);
  if (k < kMinDescaleExponent) k = kMinDescaleExponent;
  return std::ldexp(1.0f, k);
}

// Exact: descale is a power of two in [2^-126, 2^120] (or NaN, which stays NaN).
ZYFA_HD float inverse_descale(float descale) { return 1.0f / descale; }

// The value that is rounded to e4m3.
ZYFA_HD float scaled_for_fp8(float y, float inverse) { return rounded::mul(y, inverse); }

}  // namespace zyfa::fp8_scale

#endif  // ZYFA_KERNELS_FP8_SCALE_H_
