// numerics.h, the rounding and recurrence helpers shared by the CPU backend and the GPU kernels, against
// independent oracles: bit patterns, brute-force nearest values, and the GPU's own formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/numerics.h"

namespace zyfa::numerics {
namespace {

bool bf16_is_nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0; }
float float_of(uint32_t bits) { return bits_float(bits); }

TEST(Bf16, EveryPatternDecodesToItsHighHalfAndRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float x = bf16_value(uint16_t(b));
    ASSERT_EQ(float_bits(x), b << 16) << std::hex << b;
    if (bf16_is_nan(uint16_t(b))) {
      ASSERT_TRUE(bf16_is_nan(bf16_bits(x))) << std::hex << b;
    } else {
      ASSERT_EQ(bf16_bits(x), b) << std::hex << b;
    }
  }
}

// Between every pair of adjacent bf16 values (both signs, subnormals, up to the overflow to infinity):
// the midpoint goes to the even pattern, one float ulp either side to the nearer one.
TEST(Bf16, RoundsToNearestEvenBetweenEveryAdjacentPair) {
  for (uint32_t sign : {0u, 0x8000u}) {
    for (uint32_t mag = 0; mag < 0x7f80; ++mag) {
      const uint32_t lo = sign | mag, hi = lo + 1;  // hi is one step further from zero (0x7f80 = infinity)
      const uint32_t mid = (lo << 16) | 0x8000;
      const uint32_t even = (lo & 1) ? hi : lo;
      ASSERT_EQ(bf16_bits(float_of(mid)), even) << std::hex << lo;
      ASSERT_EQ(bf16_bits(float_of(mid - 1)), lo) << std::hex << lo;
      ASSERT_EQ(bf16_bits(float_of(mid + 1)), hi) << std::hex << lo;
    }
  }
}

TEST(Bf16, KnownValuesInfinitiesAndNan) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits(-2.0f), 0xc000);
  EXPECT_EQ(bf16_bits(3.0f), 0x4040);
  EXPECT_EQ(bf16_bits(1.0f + 0x1.0p-8f), 0x3f80);  // a tie: 0x3f80 is even
  EXPECT_EQ(bf16_bits(1.0f + 0x1.8p-7f), 0x3f82);  // a tie: 0x3f82 is even
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(bf16_bits(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // past the largest bf16: overflow
  EXPECT_EQ(bf16_bits(float_of(0x00008000)), 0x0000);               // subnormal tie to even zero
  EXPECT_EQ(bf16_bits(float_of(0x00018000)), 0x0002);
  EXPECT_TRUE(bf16_is_nan(bf16_bits(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(bf16_is_nan(bf16_bits(float_of(0x7f800001))));  // a NaN whose payload sits in the low half
  EXPECT_EQ(round_bf16(0.1f), bf16_value(0x3dcd));
}

// ---- e4m3

// OCP e4m3fn from its definition: bias 7, subnormals at exponent field 0, only S.1111.111 is NaN.
double e4m3_definition(int code) {
  const int e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return std::nan("");
  const double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return (code & 0x80) ? -v : v;
}

TEST(E4m3, EveryCodeDecodesAsDefinedAndRoundTrips) {
  for (int c = 0; c < 256; ++c) {
    const double expected = e4m3_definition(c);
    const float v = e4m3_value(uint8_t(c));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(v)) << c;
      continue;
    }
    EXPECT_EQ(double(v), expected) << c;
    EXPECT_EQ(std::signbit(v), (c & 0x80) != 0) << c;
    EXPECT_EQ(e4m3_code(v), c) << c;
  }
  EXPECT_EQ(e4m3_value(kE4m3CodeOfOne), 1.0f);
  EXPECT_EQ(e4m3_value(0x7e), kE4m3Max);
  EXPECT_EQ(e4m3_value(0x01), 0x1.0p-9f);
  EXPECT_EQ(e4m3_value(0x08), 0x1.0p-6f);
}

// The brute-force oracle: the nearest finite e4m3 value, ties to the even code, saturating at 448.
uint8_t e4m3_nearest(float x) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(double(x));
  if (a >= kE4m3Max) return sign | 0x7e;
  int best = 0;
  for (int c = 1; c <= 0x7e; ++c) {
    const double d = std::fabs(e4m3_definition(c) - a), db = std::fabs(e4m3_definition(best) - a);
    if (d < db || (d == db && (c & 1) == 0)) best = c;
  }
  return uint8_t(sign | best);
}

TEST(E4m3, MatchesNearestEvenOnEveryBf16AndEveryMidpoint) {
  std::vector<float> xs;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float x = bf16_value(uint16_t(b));
    if (!std::isnan(x) && std::fabs(x) < 1024.0f) xs.push_back(x);
  }
  for (int c = 0; c < 0x7e; ++c) {
    const float mid = float((e4m3_definition(c) + e4m3_definition(c + 1)) / 2);  // exact in float
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  for (float x : xs) ASSERT_EQ(e4m3_code(x), e4m3_nearest(x)) << x;
}

TEST(E4m3, TiesSubnormalsSaturationAndNan) {
  EXPECT_EQ(e4m3_code(0x1.0p-10f), 0x00);                    // half the smallest subnormal: tie to even 0
  EXPECT_EQ(e4m3_code(std::nextafter(0x1.0p-10f, 1.0f)), 0x01);
  EXPECT_EQ(e4m3_code(3 * 0x1.0p-10f), 0x02);                // 1.5 subnormal steps: tie to even 2
  EXPECT_EQ(e4m3_code(1.0625f), 0x38);                       // between 1 and 1.125: even is 1.0
  EXPECT_EQ(e4m3_code(1.1875f), 0x3a);                       // between 1.125 and 1.25: even is 1.25
  EXPECT_EQ(e4m3_code(464.0f), 0x7e);                        // past 448 saturates (satfinite), no NaN
  EXPECT_EQ(e4m3_code(1e30f), 0x7e);
  EXPECT_EQ(e4m3_code(-1e30f), 0xfe);
  EXPECT_EQ(e4m3_code(std::numeric_limits<float>::infinity()), 0x7e);
  EXPECT_EQ(e4m3_code(-std::numeric_limits<float>::infinity()), 0xfe);
  EXPECT_EQ(e4m3_code(std::numeric_limits<float>::quiet_NaN()), 0x7f);
  EXPECT_EQ(e4m3_code(-0.0f), 0x80);
}

// ---- lean P

// The GPU's form: one FFMA with the magic constant leaves rint(s * c8 + offset) in the low mantissa bits.
int lean_code_gpu_form(float s, float c8, float offset) {
  const float t = std::fma(s, c8, offset + kRoundMagic);
  const int code = int(t - kRoundMagic);
  return code < 0 ? 0 : code;
}

TEST(LeanP, EqualsTheMagicConstantFfma) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> score(-3000.0f, 3000.0f), scale(0.001f, 0.1f);
  std::uniform_int_distribution<int> offset(-400, 120);
  int compared = 0;
  for (int i = 0; i < 200000; ++i) {
    const float s = score(rng), c8 = 8.0f * scale(rng), off = float(offset(rng));
    // The recurrence never asks for a code above the largest finite one (its top is 120).
    if (double(s) * double(c8) + double(off) > double(kE4m3MaxFiniteCode)) continue;
    ASSERT_EQ(lean_p_code_host(s, c8, off), lean_code_gpu_form(s, c8, off)) << s << " " << c8 << " " << off;
    ++compared;
  }
  EXPECT_GT(compared, 100000);
}

// A product whose sum with the offset sits just past a tie (118.5 + 2^-47): a double sum rounded twice gives
// 118, the GPU's single rounding 119 (found by review, 2026-11-29).
TEST(LeanP, RoundsOnceAtTies) {
  const float s = 0x1.002002p-1f, c8 = 0x1.ffc004p-1f, offset = 118.0f;
  EXPECT_EQ(lean_p_code_host(s, c8, offset), 119);
  EXPECT_EQ(lean_code_gpu_form(s, c8, offset), 119);
}

TEST(LeanP, NonFiniteAndHugeScoresStayValidCodes) {
  EXPECT_EQ(lean_p_code_host(std::nanf(""), 8.0f, 56.0f), 0);
  EXPECT_EQ(lean_p_code_host(-INFINITY, 8.0f, 56.0f), 0);
  EXPECT_EQ(lean_p_code_host(INFINITY, 8.0f, 56.0f), kE4m3MaxFiniteCode);
  EXPECT_EQ(lean_p_code_host(1e30f, 8.0f, 56.0f), kE4m3MaxFiniteCode);
  EXPECT_EQ(fp8_block_shift(0.0f, std::nanf("")), kMaxBlockShift + kFp8HeadroomBinades);
  EXPECT_EQ(fp8_block_shift(0.0f, INFINITY), -kMaxBlockShift + kFp8HeadroomBinades);
  // Where m + tau rounds up (|m| >= 2^20), a block max can pass m by more than tau without a rescale: the
  // shift follows floor(m - bmax) down, as the emitted kernels' (which clamp only from above) does.
  const float big_m = 2097151.875f, big_bmax = big_m + kLazyRescaleThreshold;  // rounds up to 2097160
  ASSERT_FALSE(big_bmax > big_m + kLazyRescaleThreshold);
  EXPECT_EQ(fp8_block_shift(big_m, big_bmax), int(std::floor(big_m - big_bmax)) + kFp8HeadroomBinades);
  EXPECT_EQ(fp8_block_shift(0.0f, -INFINITY), kMaxBlockShift + kFp8HeadroomBinades);
}

TEST(LeanP, PowersOfTwoAreExactAndBelowZeroClamps) {
  // x = s * c8 / 8 + (offset - 56) / 8 with offset 56: integer x = -k gives code 56 - 8k, the code of 2^-k.
  for (int k = 0; k <= 6; ++k) {
    const int code = lean_p_code_host(float(-k), 8.0f, float(kE4m3CodeOfOne));
    EXPECT_EQ(code, kE4m3CodeOfOne - kE4m3CodesPerBinade * k);
    EXPECT_EQ(e4m3_value(uint8_t(code)), std::ldexp(1.0f, -k));
  }
  EXPECT_EQ(lean_p_code_host(-7.5f, 8.0f, 56.0f), 0);
  EXPECT_EQ(lean_p_code_host(-100.0f, 8.0f, 56.0f), 0);
}

// For x in [-6, 0] the lean value lies within the chord-plus-rounding bound of 2^x: the chord of 2^x over
// a binade overestimates by at most 1.5 / 2^(3.5/8) = 1.1076 (with half a code of rounding), and rounding
// alone underestimates by at most 2^(-1/16).
TEST(LeanP, ValueStaysWithinTheLeanErrorBound) {
  for (int i = 0; i <= 6000; ++i) {
    const float x = -6.0f * float(i) / 6000.0f;
    const float value = e4m3_value(uint8_t(lean_p_code_host(x, 8.0f, 56.0f)));
    const double ratio = double(value) / std::exp2(double(x));
    ASSERT_GE(ratio, std::exp2(-1.0 / 16) - 1e-6) << x;
    ASSERT_LE(ratio, 1.5 / std::exp2(3.5 / 8) + 1e-6) << x;
  }
}

// ---- FP8 reference max and block shift

TEST(Fp8Scaling, ReferenceMaxIsTheNextEighth) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> bmax(-500.0f, 500.0f);
  for (int i = 0; i < 100000; ++i) {
    const float b = bmax(rng), m = fp8_reference_max(b);
    ASSERT_EQ(m * 8.0f, std::floor(m * 8.0f)) << b;  // a multiple of 1/8, so -8m is an integer offset
    ASSERT_GE(m, b);
    ASSERT_LT(double(m) - double(b), 0.125);
  }
  EXPECT_EQ(fp8_reference_max(2.25f), 2.25f);
  EXPECT_EQ(fp8_reference_max(-1.0f), -1.0f);
  EXPECT_EQ(fp8_reference_max(0.01f), 0.125f);
  EXPECT_EQ(fp8_reference_max(-0.01f), 0.0f);
}

TEST(Fp8Scaling, BlockShiftPutsTheBlockMaxInTheHeadroomBinade) {
  constexpr int h = kFp8HeadroomBinades;
  EXPECT_EQ(fp8_block_shift(4.0f, 4.0f), h);
  EXPECT_EQ(fp8_block_shift(4.0f, 4.1f), h - 1);  // a block max above m (within the lazy threshold)
  EXPECT_EQ(fp8_block_shift(4.0f, 1.5f), h + 2);
  EXPECT_EQ(fp8_block_shift(4.0f, -100.0f), kMaxBlockShift + h);
  // The top code stays below the largest finite e4m3 code (0x7e = 448) and 2^-shift stays normal.
  const int top_code = kE4m3CodeOfOne + kE4m3CodesPerBinade * h;
  EXPECT_LE(top_code, 0x7e);
  EXPECT_LT(kMaxBlockShift + h, 126);
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> below(-40.0f, kLazyRescaleThreshold);
  for (int i = 0; i < 100000; ++i) {
    const float m = 8.375f, bmax = m + below(rng);
    const int shift = fp8_block_shift(m, bmax);
    // The code the block max gets: 56 + 8 (bmax - m + shift), in (top - 8, top].
    const double code = kE4m3CodeOfOne + kE4m3CodesPerBinade * (double(bmax) - m + shift);
    ASSERT_GT(code, top_code - kE4m3CodesPerBinade) << bmax;
    ASSERT_LE(code, top_code) << bmax;
  }
}

TEST(Recurrence, DefaultPRoundingFollowsZyfa) {
  EXPECT_TRUE(uses_lean_p(128));
  EXPECT_FALSE(uses_lean_p(192));
}

}  // namespace
}  // namespace zyfa::numerics
