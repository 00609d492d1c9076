// numerics.h, the rounding and recurrence helpers shared by the CPU backend and the GPU kernels, against
// independent oracles: bit patterns, brute-force nearest values, and the GPU's own formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/numerics.h"
#include "support/e4m3_oracle.hpp"

namespace zyfa::numerics {
namespace {

using test::e4m3_definition;

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
  for (float x : xs) ASSERT_EQ(e4m3_code(x), test::e4m3_nearest_by_search(x)) << x;
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

// y = 2 + level / 64 for the level of score s (numerics.h), in double: what lean_p_code floors.
double lean_level(float s, float scale, float offset) {
  return (double(std::fma(s, scale, offset)) - kLeanCodeBase) * kLeanLevelsPerUnit;
}

// The field trick: for y in [2, 4), bits 16-31 of y read as an int16 are 0x4000 + floor(level).
TEST(LeanP, TheFieldOfTheFfmaIsTheFlooredCode) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> smax(-3000.0f, 3000.0f), scale(0.001f, 0.1f), below(0.0f, 20.0f);
  int compared = 0;
  for (int i = 0; i < 200000; ++i) {
    // Scores up to 20 binades below the block max, most of them above code 0.
    const float c = scale(rng), top = smax(rng), s = top - below(rng) / c;
    const float lean_scale = fp8_lean_p_scale(c), offset = fp8_lean_p_offset(c * top);
    const double level = lean_level(s, lean_scale, offset);
    if (level < 0) {
      ASSERT_EQ(lean_p_code(s, lean_scale, offset), 0) << s << " " << c;
      continue;
    }
    ASSERT_EQ(lean_p_code(s, lean_scale, offset), int(std::floor(level))) << s << " " << c;
    ++compared;
  }
  EXPECT_GT(compared, 10000);
}

// The block max lands on kLeanPTopCode whatever its value, and no score of the block above it.
TEST(LeanP, TheBlockMaxGetsTheTopCode) {
  std::mt19937 rng(17);
  // Block maxes up to fuzz_attention's sane score range, 2^16 binades.
  std::uniform_real_distribution<float> smax(-2000.0f, 2000.0f), scale(0.001f, 32.0f), below(0.0f, 50.0f);
  for (int i = 0; i < 100000; ++i) {
    const float c = scale(rng), top = smax(rng), bmax = c * top;
    const float lean_scale = fp8_lean_p_scale(c), offset = fp8_lean_p_offset(bmax);
    ASSERT_EQ(lean_p_code(top, lean_scale, offset), kLeanPTopCode) << top << " " << c;
    ASSERT_LE(lean_p_code(top - below(rng), lean_scale, offset), kLeanPTopCode) << top << " " << c;
  }
}

// The GPU's form, written out: PRMT gathers bits 16-31 of y, max.s16x2 with 0x4000, the low byte; over every
// float y from -8 to 4 in steps of 2^-12 and the special values.
TEST(LeanP, HostCodeIsTheGpuFormOverEverySum) {
  auto gpu_form = [](float y) {
    const uint32_t bits = std::isnan(y) ? 0x7fffffffu : float_bits(y);  // the GPU's canonical NaN
    const int16_t field = int16_t(uint16_t(bits >> 16));
    return int(std::max<int16_t>(field, int16_t(kLeanFieldOfCodeZero)) & 0xff);
  };
  for (int i = -8 * 4096; i < 4 * 4096; ++i) {  // from 4 on a finite score cannot reach (the top is 118)
    const float y = float(i) / 4096.0f;
    const int code = lean_p_code(y, 1.0f, 0.0f);
    ASSERT_EQ(code, gpu_form(y)) << y;
    if (y >= kLeanCodeBase && y < 2 * kLeanCodeBase)
      ASSERT_EQ(code, int(std::floor((double(y) - kLeanCodeBase) * kLeanLevelsPerUnit))) << y;
    else
      ASSERT_EQ(code, 0) << y;  // below 2: clamped
  }
  for (float y : {-INFINITY, -1e30f, -0.0f, 0.0f, 1e-30f})
    EXPECT_EQ(lean_p_code(y, 1.0f, 0.0f), 0) << y;
  EXPECT_EQ(lean_p_code(std::nanf(""), 1.0f, 0.0f), 0xff);  // NaN scores: an e4m3 NaN code
}

// A sum just below a whole code, 119 - 2^-20, rounds once (in the FFMA, to 2^-16 of a code) up to 119; a sum
// in double floored without that rounding would give 118.
TEST(LeanP, RoundsOnceInTheFfma) {
  const float offset = kLeanCodeBase + 119.0f / kLeanLevelsPerUnit;
  const float s = -0x1p-26f;  // level 119 - 2^-20 before the FFMA's rounding
  EXPECT_EQ(lean_p_code(s, 1.0f, offset), 119);
  EXPECT_EQ(int(std::floor((double(s) + offset - kLeanCodeBase) * kLeanLevelsPerUnit)), 118);
}

TEST(LeanP, NonFiniteScoresStayOutOfTheCodes) {
  const float offset = fp8_lean_p_offset(1.0f);
  EXPECT_EQ(lean_p_code(-INFINITY, 1.0f, offset), 0);  // a masked score
  EXPECT_EQ(lean_p_code(-100.0f, 1.0f, offset), 0);    // underflow
  // NaN scores, and an infinite one (its block max is infinite too: the offset is -inf and the FFMA NaN),
  // give an e4m3 NaN, so the row's output is NaN.
  EXPECT_EQ(lean_p_code(std::nanf(""), 1.0f, offset), 0xff);
  EXPECT_EQ(lean_p_code(INFINITY, 1.0f, fp8_lean_p_offset(INFINITY)), 0xff);
}

// For x = c s - bmax in [-6, 0] the lean value, over 2^(x + 7.75), lies within the chord-plus-rounding bound:
// the chord of 2^x over a binade overestimates by at most 1.5 / 2^(3.5/8) = 1.1076 (with half a code of
// rounding), and rounding alone underestimates by at most 2^(-1/16).
TEST(LeanP, ValueStaysWithinTheLeanErrorBound) {
  const float offset = fp8_lean_p_offset(0.0f), lean_scale = fp8_lean_p_scale(1.0f);
  // The top code's place in the binades (118 is 7.75 binades above code 56), where Mitchell's chord is measured.
  const double top = std::exp2(double(kLeanPTopCode - kE4m3CodeOfOne) / kE4m3CodesPerBinade);
  for (int i = 0; i <= 6000; ++i) {
    const float x = -6.0f * float(i) / 6000.0f;
    const float value = e4m3_value(uint8_t(lean_p_code(x, lean_scale, offset)));
    const double ratio = double(value) / (top * std::exp2(double(x)));
    ASSERT_GE(ratio, std::exp2(-1.0 / 16) - 1e-6) << x;
    ASSERT_LE(ratio, 1.5 / std::exp2(3.5 / 8) + 1e-6) << x;
  }
}

// ---- FP8 reference max and unscale

TEST(Fp8Scaling, ReferenceMaxIsTheNextEighth) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> bmax(-500.0f, 500.0f);
  for (int i = 0; i < 100000; ++i) {
    const float b = bmax(rng), m = fp8_reference_max(b);
    ASSERT_EQ(m * 8.0f, std::floor(m * 8.0f)) << b;
    ASSERT_GE(m, b);
    ASSERT_LT(double(m) - double(b), 0.125);
  }
  EXPECT_EQ(fp8_reference_max(2.25f), 2.25f);
  EXPECT_EQ(fp8_reference_max(-1.0f), -1.0f);
  EXPECT_EQ(fp8_reference_max(0.01f), 0.125f);
  EXPECT_EQ(fp8_reference_max(-0.01f), 0.0f);
}

TEST(Fp8Scaling, UnscaleFoldsTheTopBinadeBack) {
  // The block max's value, 2^G: exact P's 2^H (code 120), lean P's code 118, 1.75 x 2^7 = 224.
  EXPECT_EQ(fp8_top_binade(false), float(kFp8HeadroomBinades));
  EXPECT_EQ(e4m3_value(uint8_t(kLeanPTopCode)), 224.0f);
  EXPECT_NEAR(std::exp2(double(fp8_top_binade(true))), 224.0, 224.0 * 1e-7);  // the top code's value
  EXPECT_LE(kLeanPTopCode, kE4m3MaxFiniteCode);
  EXPECT_EQ(e4m3_value(uint8_t(kE4m3CodeOfOne + kE4m3CodesPerBinade * kFp8HeadroomBinades)), 256.0f);
  for (bool lean : {false, true}) {
    const float g = fp8_top_binade(lean);
    EXPECT_EQ(fp8_unscale_log2(4.0f, 4.0f, lean), -g);
    EXPECT_EQ(fp8_unscale_log2(4.0f, 4.0f + kFp8LazyRescaleThreshold, lean), kFp8LazyRescaleThreshold - g);
    // Far below the row max the exponent clamps, so the unscale stays a normal float.
    EXPECT_EQ(fp8_unscale_log2(4.0f, -1000.0f, lean), -float(kMaxBlockShift + kFp8HeadroomBinades));
    EXPECT_LT(kMaxBlockShift + kFp8HeadroomBinades, 126);
    // A NaN difference (a row of NaN scores) clamps too, as the kernels' max.f32 does.
    EXPECT_EQ(fp8_unscale_log2(4.0f, std::nanf(""), lean), -float(kMaxBlockShift + kFp8HeadroomBinades));
  }
}

TEST(Recurrence, DefaultPRoundingFollowsZyfa) {
  EXPECT_TRUE(uses_lean_p(128));
  EXPECT_FALSE(uses_lean_p(192));
}

// BF16's P before the block max: a block that bf16_p_clear_of_rescale passes never meets the lazy rescale's
// rule, so P against the running m is the recurrence's P. The block's top c s - m is drawn from below 0 to
// past tau, m up to the bound, where fp32's roundings are coarsest; P is rounded as the kernel rounds it. (The
// OR is exact only up to P < 2: a block mixing P below 1 with P at 2 or more is not clear, and takes the max.)
TEST(Bf16PBeforeMax, ClearBlocksNeverMeetTheRescaleRule) {
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> scale(0.01f, 2.0f), unit(0.0f, 1.0f);
  std::uniform_int_distribution<int> binade(-20, 21);
  constexpr int kBlock = 64;  // one thread's P of a block: two rows' 32 words, one OR and one max
  int clear = 0, clear_by_max_alone = 0, not_clear = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    const float c = scale(rng);
    const float m = (unit(rng) < 0.5f ? -1.0f : 1.0f) * std::ldexp(1.0f + unit(rng), binade(rng));
    // The block's highest c s - m, in [-2, tau + 1]; the rest up to 30 binades below it, or all within one
    // binade of it (where the OR lets P up to 2^(tau - 1) pass).
    const float top = -2.0f + (kBf16LazyRescaleThreshold + 3.0f) * unit(rng);
    const float spread = trial % 2 ? 30.0f : 1.0f;
    uint32_t words_or = 0, words_max = 0;
    float smax = -INFINITY;
    for (int j = 0; j < kBlock; j += 2) {
      uint32_t word = 0;
      for (int e = 0; e < 2; ++e) {
        const float s = (m + (j + e == 0 ? top : top - spread * unit(rng))) / c;
        smax = std::max(smax, s);
        word |= uint32_t(bf16_bits(std::exp2(std::fma(s, c, -m)))) << (16 * e);
      }
      words_or |= word;
      words_max = bf16x2_bits_max(words_max, word);
    }
    const float bmax = c * smax;
    const bool or_clear = bf16_p_clear_of_rescale(words_or, m), max_clear = bf16_p_max_clear_of_rescale(words_max, m);
    ASSERT_TRUE(!or_clear || max_clear) << "the max is exact where the OR passes";
    if (max_clear) {
      ++clear;
      if (!or_clear) ++clear_by_max_alone;
      ASSERT_FALSE(lazy_rescale_due(m, bmax, kBf16LazyRescaleThreshold)) << "c " << c << " m " << m << " top " << top;
    } else {
      ++not_clear;
    }
  }
  // Every outcome must occur, or the trial says nothing about the bound.
  EXPECT_GT(clear, 10000);
  EXPECT_GT(clear_by_max_alone, 10000);
  EXPECT_GT(not_clear, 10000);
}

TEST(Bf16PBeforeMax, WordsMaxIsTheHalfwiseMax) {
  std::mt19937 rng(31);
  for (int i = 0; i < 100000; ++i) {
    const uint32_t a = uint32_t(rng()), b = uint32_t(rng());
    const uint32_t v = bf16x2_bits_max(a, b);
    ASSERT_EQ(v & 0xFFFFu, std::max(a & 0xFFFFu, b & 0xFFFFu));
    ASSERT_EQ(v >> 16, std::max(a >> 16, b >> 16));
  }
  const uint32_t one = bf16_bits(1.0f), big = bf16_bits(std::ldexp(1.99f, int(kBf16LazyRescaleThreshold) - 2));
  const uint32_t at_bound = bf16_bits(std::ldexp(1.0f, int(kBf16LazyRescaleThreshold) - 1));
  EXPECT_TRUE(bf16_p_max_clear_of_rescale(one | (big << 16), 0.0f));  // where the OR fails
  EXPECT_FALSE(bf16_p_max_clear_of_rescale(at_bound, 0.0f));
  EXPECT_FALSE(bf16_p_max_clear_of_rescale(one | (at_bound << 16), 0.0f));
  EXPECT_FALSE(bf16_p_max_clear_of_rescale(bf16_bits(INFINITY), 0.0f));
  EXPECT_FALSE(bf16_p_max_clear_of_rescale(uint32_t(bf16_bits(NAN)) << 16, 0.0f));
  EXPECT_FALSE(bf16_p_max_clear_of_rescale(uint32_t(bf16_bits(-NAN)), 0.0f));
  EXPECT_FALSE(bf16_p_max_clear_of_rescale(one, -INFINITY));
  EXPECT_FALSE(bf16_p_max_clear_of_rescale(one, kBf16ClearReferenceBound));
}

TEST(Bf16PBeforeMax, NonFiniteValuesAndReferencesAreNeverClear) {
  const uint32_t one = bf16_bits(1.0f), below_two = bf16_bits(1.99f);
  const uint32_t below_bound = bf16_bits(std::ldexp(1.99f, int(kBf16LazyRescaleThreshold) - 2));
  const uint32_t at_bound = bf16_bits(std::ldexp(1.0f, int(kBf16LazyRescaleThreshold) - 1));
  EXPECT_TRUE(bf16_p_clear_of_rescale(one | (below_two << 16), 0.0f));
  EXPECT_TRUE(bf16_p_clear_of_rescale(below_bound | (below_bound << 16), 0.0f));
  // Above tau 2 the OR of exponents under the bound can pass it (1 | 2^(tau - 2) is read as 2^(tau - 1) or more);
  // at tau 2 the bound is P < 2, where the OR is exact.
  EXPECT_EQ(bf16_p_clear_of_rescale(one | (below_bound << 16), 0.0f), kBf16LazyRescaleThreshold == 2.0f);
  EXPECT_FALSE(bf16_p_clear_of_rescale(at_bound, 0.0f));          // low half
  EXPECT_FALSE(bf16_p_clear_of_rescale(one | (at_bound << 16), 0.0f));  // high half
  EXPECT_FALSE(bf16_p_clear_of_rescale(bf16_bits(INFINITY), 0.0f));
  EXPECT_FALSE(bf16_p_clear_of_rescale(uint32_t(bf16_bits(NAN)) << 16, 0.0f));
  EXPECT_FALSE(bf16_p_clear_of_rescale(uint32_t(bf16_bits(-NAN)), 0.0f));
  EXPECT_FALSE(bf16_p_clear_of_rescale(one, -INFINITY));  // a row's first block
  EXPECT_FALSE(bf16_p_clear_of_rescale(one, NAN));
  EXPECT_FALSE(bf16_p_clear_of_rescale(one, kBf16ClearReferenceBound));
  EXPECT_TRUE(bf16_p_clear_of_rescale(0u, -std::nextafter(kBf16ClearReferenceBound, 0.0f)));
}

}  // namespace
}  // namespace zyfa::numerics
