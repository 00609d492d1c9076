// zyfa_quantize_fp8_host and the rotations behind it, against fp64 computations built from the
// definitions: the Hadamard matrix from its entries, the DCT from its cosines, the descale from log2 and
// e4m3 rounding by a search over all codes. Inputs are fresh random values (the seed is in each trace).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/numerics.h"
#include "kernels/rotation.h"
#include "support/e4m3_oracle.hpp"
#include "support/quantize_case.hpp"
#include "zyfa/zyfa.h"

namespace {

namespace rot = zyfa::rotation;
namespace num = zyfa::numerics;

static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= 16, "std::vector storage must meet the 16-byte alignment rule");

using zyfa::test::e4m3_nearest_by_search;
using zyfa::test::kCodePoison;
using zyfa::test::kDescalePoison;
using zyfa::test::QuantizeCase;
using zyfa::test::random_bf16;

constexpr double kFp32Unit = 0x1p-24;  // unit roundoff of fp32

// ---------------------------------------------------------------- fp64 definitions

double hadamard_entry(int i, int j) { return (__builtin_popcount(unsigned(i & j)) & 1) ? -1.0 : 1.0; }

double dct_entry(int k, int a) {
  const double pi = std::acos(-1.0);
  const double norm = k == 0 ? std::sqrt(1.0 / 3.0) : std::sqrt(2.0 / 3.0);
  return norm * std::cos(pi * (2 * a + 1) * k / 6.0);
}

double random_sign(uint64_t seed, int j) { return (rot::splitmix64(seed, uint64_t(j)) >> 63) ? -1.0 : 1.0; }

// R of dimension 128 or 192, row-major: y = x R.
std::vector<double> rotation_matrix_fp64(int dim, uint64_t seed) {
  std::vector<double> r(size_t(dim) * dim);
  for (int i = 0; i < dim; ++i) {
    for (int j = 0; j < dim; ++j) {
      double v;
      if (dim == 128) {
        v = random_sign(seed, i) * hadamard_entry(i, j) / std::sqrt(128.0);
      } else {  // C^T (x) diag(s) H_64 / 8: row 64 a + b, column 64 k + c
        const int a = i / 64, b = i % 64, k = j / 64, c = j % 64;
        v = dct_entry(k, a) * random_sign(seed, b) * hadamard_entry(b, c) / 8.0;
      }
      r[size_t(i) * dim + j] = v;
    }
  }
  return r;
}

// rows x (rows x dim) through the fp32 rotation of rotation.h, in place.
void rotate_fp32(int dim, uint64_t seed, std::vector<float> &x) {
  const int64_t rows = int64_t(x.size()) / dim;
  auto run = [&](auto tag) {
    using R = decltype(tag);
    const auto signs = rot::make_sign_masks<R>(seed);
    for (int64_t r = 0; r < rows; ++r) rot::rotate_row<R>(&x[size_t(r * dim)], &x[size_t(r * dim)], signs);
  };
  if (dim == 128) run(rot::Hadamard128{});
  else run(rot::DctHadamard192{});
}

// 2^ceil(log2(amax / 448)) in fp64, with the documented edges.
double descale_fp64(double amax) {
  if (!std::isfinite(amax)) return NAN;
  if (amax == 0) return 1.0;
  return std::ldexp(1.0, std::max(-126, int(std::ceil(std::log2(amax / 448.0)))));
}

// What the quantizer sees: the rows widened to fp32, rotated by rotation.h when asked.
std::vector<float> quantizer_input(const QuantizeCase &c) {
  auto y = c.rows_fp32();
  if (c.rotation == ZYFA_ROTATION_HADAMARD) rotate_fp32(int(c.dim), c.rotation_seed, y);
  return y;
}

// Every code and the descale equal the fp64 oracle's for the values y that the quantizer saw.
void expect_quantized_like_fp64(const std::vector<float> &y, const std::vector<uint8_t> &dst, float descale) {
  double amax = 0;
  for (float v : y) amax = std::max(amax, std::fabs(double(v)));
  ASSERT_EQ(descale, float(descale_fp64(amax))) << "amax " << amax;
  ASSERT_EQ(dst.size(), y.size());
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (dst[i] != e4m3_nearest_by_search(double(y[i]) / double(descale)) && mismatches++ == 0) first = i;
  }
  EXPECT_EQ(mismatches, 0u) << "first at " << first << ": y = " << y[first] << " code " << int(dst[first])
                            << " expected " << int(e4m3_nearest_by_search(double(y[first]) / double(descale)));
}

// ---------------------------------------------------------------- the rotations

TEST(QuantizeRotation, SplitMix64KnownAnswers) {
  // The first outputs of SplitMix64 seeded with 0, as published with the generator.
  EXPECT_EQ(rot::splitmix64(0, 0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rot::splitmix64(0, 1), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rot::splitmix64(0, 2), 0x06C45D188009454Full);
}

class RotationMatrix : public ::testing::TestWithParam<int> {};

// e_i R through the fp32 code is row i of R; it must equal the fp64 definition up to the roundings of
// the final multiply (the Hadamard sums of +-1 are exact), and be orthogonal to fp32 accuracy.
TEST_P(RotationMatrix, MatchesDefinitionAndIsOrthogonal) {
  const int dim = GetParam();
  ZYFA_TRACED_SEED(seed);
  std::vector<float> r32(size_t(dim) * dim, 0.0f);
  for (int i = 0; i < dim; ++i) r32[size_t(i) * dim + i] = 1.0f;
  rotate_fp32(dim, seed, r32);
  const auto r64 = rotation_matrix_fp64(dim, seed);
  int negative_signs = 0;
  for (int i = 0; i < dim; ++i) negative_signs += random_sign(seed, i) < 0;
  EXPECT_GT(negative_signs, 0);
  EXPECT_LT(negative_signs, dim);
  for (size_t e = 0; e < r64.size(); ++e) {
    // cos(pi / 2) in fp64 is 6e-17, not 0: hence the absolute term.
    ASSERT_LE(std::fabs(double(r32[e]) - r64[e]), 2.5 * kFp32Unit * std::fabs(r64[e]) + 1e-15)
        << "entry (" << e / dim << ", " << e % dim << ")";
  }
  double worst = 0;
  for (int i = 0; i < dim; ++i) {
    for (int j = 0; j < dim; ++j) {
      double g = 0;
      for (int k = 0; k < dim; ++k) g += double(r32[size_t(i) * dim + k]) * double(r32[size_t(j) * dim + k]);
      worst = std::max(worst, std::fabs(g - (i == j ? 1.0 : 0.0)));
    }
  }
  EXPECT_LE(worst, 1e-6) << "R R^T - I";
}

// Random rows through the fp32 butterflies against x R in fp64: each element within the error bound of
// log2(n) rounded stages plus the mixing, and the whole within fp32's relative accuracy.
TEST_P(RotationMatrix, RandomRowsMatchFp64Product) {
  const int dim = GetParam();
  ZYFA_TRACED_SEED(seed);
  const int64_t rows = 64;
  const auto bits = random_bf16(size_t(rows * dim), 1.0f, seed);
  std::vector<float> x(bits.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = num::bf16_value(bits[i]);
  auto y = x;
  rotate_fp32(dim, seed, y);
  const auto r64 = rotation_matrix_fp64(dim, seed);
  const double stages = std::log2(dim == 128 ? 128.0 : 64.0);
  double err2 = 0, ref2 = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double l1 = 0;
    for (int i = 0; i < dim; ++i) l1 += std::fabs(double(x[size_t(r * dim + i)]));
    const double bound = (stages + 6) * kFp32Unit * l1 * 0.11;  // 0.11 >= the largest mixing factor
    for (int j = 0; j < dim; ++j) {
      double exact = 0;
      for (int i = 0; i < dim; ++i) exact += double(x[size_t(r * dim + i)]) * r64[size_t(i) * dim + j];
      const double err = double(y[size_t(r * dim + j)]) - exact;
      ASSERT_LE(std::fabs(err), bound) << "row " << r << " column " << j;
      err2 += err * err;
      ref2 += exact * exact;
    }
  }
  EXPECT_LE(std::sqrt(err2 / ref2), 1e-6);
}

// The point of the rotation: (qR)(kR)^T = q k^T up to fp32 rounding, with one seed for q and k.
TEST_P(RotationMatrix, PreservesDotProducts) {
  const int dim = GetParam();
  ZYFA_TRACED_SEED(seed);
  const int64_t rows = 32;
  auto widen = [](const std::vector<uint16_t> &b) {
    std::vector<float> f(b.size());
    for (size_t i = 0; i < b.size(); ++i) f[i] = num::bf16_value(b[i]);
    return f;
  };
  const auto q = widen(random_bf16(size_t(rows * dim), 1.0f, seed));
  const auto k = widen(random_bf16(size_t(rows * dim), 1.0f, seed + 1));
  auto qr = q, kr = k, kr_other_seed = k;
  rotate_fp32(dim, seed, qr);
  rotate_fp32(dim, seed, kr);
  rotate_fp32(dim, seed + 7, kr_other_seed);
  auto dot = [&](const std::vector<float> &a, int64_t i, const std::vector<float> &b, int64_t j) {
    double s = 0;
    for (int c = 0; c < dim; ++c) s += double(a[size_t(i * dim + c)]) * double(b[size_t(j * dim + c)]);
    return s;
  };
  double worst = 0, worst_other_seed = 0;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < rows; ++j) {
      const double norms = std::sqrt(dot(q, i, q, i) * dot(k, j, k, j));
      // !(x <= worst) keeps a NaN, which std::max would drop.
      const double err = std::fabs(dot(qr, i, kr, j) - dot(q, i, k, j)) / norms;
      if (!(err <= worst)) worst = err;
      worst_other_seed = std::max(worst_other_seed, std::fabs(dot(qr, i, kr_other_seed, j) - dot(q, i, k, j)) / norms);
    }
  }
  EXPECT_LE(worst, 2e-6);
  EXPECT_GT(worst_other_seed, 0.1) << "different seeds must give different rotations";
}

INSTANTIATE_TEST_SUITE_P(Dims, RotationMatrix, ::testing::Values(128, 192),
                         [](const auto &param_info) { return "d" + std::to_string(param_info.param); });

// ---------------------------------------------------------------- the host twin

struct TwinCase {
  int64_t dim, row_stride;
  zyfa_rotation rotation;
  float scale;  // std of the inputs: moves the descale over many binades
};

void PrintTo(const TwinCase &c, std::ostream *os) {
  *os << "dim " << c.dim << " row_stride " << c.row_stride << (c.rotation ? " rotated" : " plain") << " std " << c.scale;
}

class HostTwin : public ::testing::TestWithParam<TwinCase> {};

TEST_P(HostTwin, CodesAndDescaleMatchFp64) {
  const TwinCase c = GetParam();
  ZYFA_TRACED_SEED(seed);
  QuantizeCase h(77, c.dim, c.row_stride, c.rotation, c.scale, seed);
  const zyfa_quantize_desc desc = h.desc();
  ASSERT_EQ(zyfa_quantize_fp8_host(&desc), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_STREQ(zyfa_last_error(), "");
  const auto y = quantizer_input(h);
  expect_quantized_like_fp64(y, h.dst, h.descale);
  EXPECT_LE(double(*std::max_element(y.begin(), y.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); })) /
                h.descale, 448.0);

  // End to end against the exact fp64 rotation of the same inputs, element by element: e4m3 rounding
  // (relative 2^-4 for normals, absolute 2^-10 descale below them) plus fp32 rotation error, nothing more.
  const auto x = h.rows_fp32();
  const auto r64 = c.rotation == ZYFA_ROTATION_HADAMARD ? rotation_matrix_fp64(int(c.dim), h.rotation_seed)
                                                        : std::vector<double>();
  for (int64_t r = 0; r < h.n_rows; ++r) {
    double l1 = 0;
    for (int64_t i = 0; i < c.dim; ++i) l1 += std::fabs(double(x[size_t(r * c.dim + i)]));
    for (int64_t j = 0; j < c.dim; ++j) {
      double exact = x[size_t(r * c.dim + j)];
      if (!r64.empty()) {
        exact = 0;
        for (int64_t i = 0; i < c.dim; ++i) exact += double(x[size_t(r * c.dim + i)]) * r64[size_t(i * c.dim + j)];
      }
      const double dequantized = double(num::e4m3_value(h.dst[size_t(r * c.dim + j)])) * h.descale;
      ASSERT_LE(std::fabs(dequantized - exact), 0x1p-4 * std::fabs(exact) + 0x1p-10 * h.descale + 2e-6 * l1)
          << "row " << r << " column " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, HostTwin,
    ::testing::Values(TwinCase{128, 128, ZYFA_ROTATION_HADAMARD, 1.0f}, TwinCase{192, 192, ZYFA_ROTATION_HADAMARD, 1.0f},
                      TwinCase{128, 136, ZYFA_ROTATION_HADAMARD, 3e-5f}, TwinCase{192, 256, ZYFA_ROTATION_HADAMARD, 700.0f},
                      TwinCase{128, 128, ZYFA_ROTATION_NONE, 1.0f}, TwinCase{40, 48, ZYFA_ROTATION_NONE, 0.02f},
                      TwinCase{8, 8, ZYFA_ROTATION_NONE, 5e4f}),
    [](const auto &param_info) {  // e.g. d128_stride136_hadamard_std3e-05, with '-' and '.' made '_'
      const TwinCase &c = param_info.param;
      char std_text[32];
      std::snprintf(std_text, sizeof std_text, "%g", double(c.scale));
      std::string name = "d" + std::to_string(c.dim) + "_stride" + std::to_string(c.row_stride) +
                         (c.rotation ? "_hadamard" : "_plain") + "_std" + std_text;
      std::replace_if(name.begin(), name.end(), [](char ch) { return ch == '-' || ch == '.' || ch == '+'; }, '_');
      return name;
    });

// One row whose largest magnitude is amax: the descale is the fp64 rule's power of two, and
// amax / descale lands in (224, 448] unless the descale is clamped at 2^-126.
TEST(HostTwinDescale, PowerOfTwoCoveringAmax) {
  std::vector<float> amaxes = {448.0f, 450.0f, 1.0f, 0.75f, 3.0e38f, 1e-30f, 1e-38f, 1e-40f};
  for (int k = -20; k <= 20; ++k) amaxes.push_back(std::ldexp(448.0f, k));
  for (const float target : amaxes) {
    const float amax = num::round_bf16(target);
    QuantizeCase h(2, 16, 16, ZYFA_ROTATION_NONE, 0.0f, 1);
    for (auto &b : h.src) b = num::bf16_bits(num::round_bf16(amax * 0.3f));
    h.src[5] = num::bf16_bits(-amax);
    const zyfa_quantize_desc desc = h.desc();
    ASSERT_EQ(zyfa_quantize_fp8_host(&desc), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    SCOPED_TRACE("amax " + std::to_string(amax));
    int exponent;
    EXPECT_EQ(std::frexp(h.descale, &exponent), 0.5f) << "a power of two";
    EXPECT_LE(amax / h.descale, 448.0f);
    if (h.descale > 0x1p-126f) {
      EXPECT_GT(amax / h.descale, 224.0f);
    }
    EXPECT_EQ(h.descale, float(descale_fp64(amax)));
    EXPECT_EQ(h.dst[5], e4m3_nearest_by_search(-double(amax) / h.descale));
  }
}

TEST(HostTwinDescale, ZeroTensorHasDescaleOne) {
  QuantizeCase h(3, 128, 128, ZYFA_ROTATION_HADAMARD, 0.0f, 1);
  const zyfa_quantize_desc desc = h.desc();
  ASSERT_EQ(zyfa_quantize_fp8_host(&desc), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(h.descale, 1.0f);
  for (uint8_t code : h.dst) ASSERT_EQ(code & 0x7f, 0);
}

// An infinity or NaN makes the descale NaN and every code NaN, rather than a silently saturated tensor.
TEST(HostTwinDescale, NonFiniteInputGivesNanEverywhere) {
  for (const float bad : {INFINITY, -INFINITY, NAN}) {
    for (const zyfa_rotation r : {ZYFA_ROTATION_NONE, ZYFA_ROTATION_HADAMARD}) {
      QuantizeCase h(4, 192, 192, r, 1.0f, 9);
      h.src[300] = num::bf16_bits(bad);
      // Every code is expected to be NaN, kCodePoison's value: poison with a code the NaN path never writes.
      std::fill(h.dst.begin(), h.dst.end(), uint8_t(0));
      const zyfa_quantize_desc desc = h.desc();
      ASSERT_EQ(zyfa_quantize_fp8_host(&desc), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
      EXPECT_TRUE(std::isnan(h.descale));
      for (uint8_t code : h.dst) ASSERT_EQ(code, 0x7f);
    }
  }
}

// ---------------------------------------------------------------- validation

struct BadCase {
  const char *what;
  std::function<void(zyfa_quantize_desc &)> spoil;
  zyfa_status status;
  const char *field;  // must appear in the message
};

TEST(QuantizeValidation, EachFailureHasItsStatusAndWritesNothing) {
  QuantizeCase h(4, 128, 136, ZYFA_ROTATION_NONE, 1.0f, 3);
  const auto base = h.desc();
  const auto *src_bytes = static_cast<const char *>(base.src);
  const std::vector<uint16_t> src_before = h.src;  // "dst overlaps src" would write there
  const std::vector<BadCase> cases = {
      {"struct_size too large", [](auto &d) { d.struct_size += 8; }, ZYFA_STATUS_BAD_STRUCT_SIZE, "struct_size"},
      {"struct_size too small", [](auto &d) { d.struct_size = 8; }, ZYFA_STATUS_BAD_STRUCT_SIZE, "struct_size"},
      {"src NULL", [](auto &d) { d.src = nullptr; }, ZYFA_STATUS_NULL_TENSOR, "src"},
      {"dst NULL", [](auto &d) { d.dst = nullptr; }, ZYFA_STATUS_NULL_TENSOR, "dst"},
      {"descale NULL", [](auto &d) { d.descale = nullptr; }, ZYFA_STATUS_NULL_ARGUMENT, "descale"},
      {"src misaligned", [&](auto &d) { d.src = src_bytes + 2; }, ZYFA_STATUS_MISALIGNED, "src"},
      {"dst misaligned", [](auto &d) { d.dst = static_cast<char *>(d.dst) + 8; }, ZYFA_STATUS_MISALIGNED, "dst"},
      {"descale misaligned", [](auto &d) { d.descale = reinterpret_cast<float *>(reinterpret_cast<char *>(d.descale) + 1); },
       ZYFA_STATUS_MISALIGNED, "descale"},
      {"n_rows 0", [](auto &d) { d.n_rows = 0; }, ZYFA_STATUS_BAD_ARGUMENT, "n_rows"},
      {"n_rows negative", [](auto &d) { d.n_rows = -5; }, ZYFA_STATUS_BAD_ARGUMENT, "n_rows"},
      {"rotation unknown", [](auto &d) { d.rotation = zyfa_rotation(7); }, ZYFA_STATUS_BAD_ARGUMENT, "rotation"},
      {"rotated dim 64", [](auto &d) { d.rotation = ZYFA_ROTATION_HADAMARD, d.dim = 64; }, ZYFA_STATUS_UNSUPPORTED_HEAD_DIM, "dim"},
      {"rotated dim 136", [](auto &d) { d.rotation = ZYFA_ROTATION_HADAMARD, d.dim = 136; }, ZYFA_STATUS_UNSUPPORTED_HEAD_DIM, "dim"},
      {"dim not a multiple of 8", [](auto &d) { d.dim = 100; }, ZYFA_STATUS_BAD_ARGUMENT, "dim"},
      {"dim 0", [](auto &d) { d.dim = 0; }, ZYFA_STATUS_BAD_ARGUMENT, "dim"},
      {"row_stride negative", [](auto &d) { d.row_stride = -136; }, ZYFA_STATUS_BAD_STRIDE, "row_stride"},
      {"row_stride below dim", [](auto &d) { d.row_stride = 120; }, ZYFA_STATUS_BAD_STRIDE, "row_stride"},
      {"row_stride not 16-byte granular", [](auto &d) { d.row_stride = 131; }, ZYFA_STATUS_BAD_STRIDE, "row_stride"},
      {"source size overflows", [](auto &d) { d.n_rows = int64_t(1) << 60; }, ZYFA_STATUS_SIZE_OVERFLOW, "n_rows"},
      {"destination size overflows", [](auto &d) { d.n_rows = int64_t(1) << 56, d.row_stride = 128, d.dim = 128; },
       ZYFA_STATUS_SIZE_OVERFLOW, "n_rows"},
      {"dst overlaps src", [&](auto &d) { d.dst = const_cast<char *>(src_bytes) + 256; }, ZYFA_STATUS_ALIASED_OUTPUT, "dst"},
      {"descale inside dst", [](auto &d) { d.descale = static_cast<float *>(d.dst) + 4; }, ZYFA_STATUS_ALIASED_OUTPUT, "descale"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.what);
    zyfa_quantize_desc d = base;
    c.spoil(d);
    EXPECT_EQ(zyfa_quantize_fp8_host(&d), c.status);
    EXPECT_NE(std::string(zyfa_last_error()).find(c.field), std::string::npos) << zyfa_last_error();
    // The GPU entry validates before it looks for a device, so it answers the same on any machine.
    EXPECT_EQ(zyfa_quantize_fp8(&d, nullptr), c.status);
    EXPECT_NE(std::string(zyfa_last_error()).find(c.field), std::string::npos) << zyfa_last_error();
    EXPECT_EQ(h.descale, kDescalePoison);
    for (uint8_t code : h.dst) ASSERT_EQ(code, kCodePoison);
    ASSERT_TRUE(h.src == src_before) << "a refused call wrote into src";
  }
  EXPECT_EQ(zyfa_quantize_fp8_host(nullptr), ZYFA_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(zyfa_quantize_fp8(nullptr, nullptr), ZYFA_STATUS_NULL_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("desc"), std::string::npos);
}

}  // namespace
