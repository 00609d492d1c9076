// ref::qgmma_columns, the model of Hopper's FP8 tensor-core sums, against a recording of the H200 itself
// (test/data/qgmma_h200.bin) and against properties any such sum has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/numerics.h"
#include "ref/tensor_core_sums.hpp"

namespace zyfa::ref {
namespace {

constexpr int kMaxSteps = 4;
constexpr size_t kRecordedOutputs = 1024;

struct Record {
  int steps = 0;
  uint8_t a[kMaxSteps * kQgmmaK], b[kMaxSteps * kQgmmaK];
  float acc = 0, result = 0;
};

std::vector<Record> read_records(const std::string &path) {
  std::vector<Record> out;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  uint8_t steps;
  while (std::fread(&steps, 1, 1, f) == 1) {
    Record r;
    r.steps = steps;
    const size_t n = size_t(steps) * kQgmmaK;
    if (steps < 1 || steps > kMaxSteps || std::fread(r.a, 1, n, f) != n || std::fread(r.b, 1, n, f) != n ||
        std::fread(&r.acc, sizeof(float), 1, f) != 1 || std::fread(&r.result, sizeof(float), 1, f) != 1)
      break;
    out.push_back(r);
  }
  std::fclose(f);
  return out;
}

// acc + sum_k a[k] b[k] over n products of e4m3 codes, through qgmma_columns with one column.
float qgmma_dot(float acc, const uint8_t *a, const uint8_t *b, int n) {
  std::vector<float> av, bv;
  std::vector<int16_t> ae, be;
  for (int k = 0; k < n; ++k) {
    av.push_back(numerics::e4m3_value(a[k]));
    bv.push_back(numerics::e4m3_value(b[k]));
    ae.push_back(fp8_exponent(a[k]));
    be.push_back(fp8_exponent(b[k]));
  }
  qgmma_columns(&acc, av.data(), ae.data(), bv.data(), be.data(), 1, 1, n);
  return acc;
}

uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

TEST(TensorCoreSums, ReproducesTheH200BitForBit) {
  const std::vector<Record> records = read_records(std::string(ZYFA_TEST_DATA_DIR) + "/qgmma_h200.bin");
  ASSERT_EQ(records.size(), kRecordedOutputs) << "test/data/qgmma_h200.bin missing or cut short";
  int chained = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const Record &r = records[i];
    ASSERT_EQ(bits(qgmma_dot(r.acc, r.a, r.b, r.steps * kQgmmaK)), bits(r.result)) << "record " << i;
    chained += r.steps > 1;
  }
  EXPECT_GT(chained, 0);  // the recording covers chained k-steps too
}

TEST(TensorCoreSums, ExponentsAreTheFormats) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) continue;  // NaN
    const float v = std::fabs(numerics::e4m3_value(uint8_t(c)));
    if (v == 0.0f) {
      EXPECT_EQ(fp8_exponent(uint8_t(c)), kZeroFactorExponent) << c;
    } else {
      EXPECT_EQ(fp8_exponent(uint8_t(c)), std::max(std::ilogb(v), -6)) << c;  // subnormals share -6
    }
  }
}

// Products that share one exponent and fit 14 bits are summed exactly; the negated inputs give the negated
// sum (the cut is toward zero, not toward -inf); and a sum of terms spanning more than 14 bits is cut.
TEST(TensorCoreSums, ExactWhereItFitsSymmetricAndCutBelowFourteenBits) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> mant(0, 7), sign(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    uint8_t a[kQgmmaK], b[kQgmmaK], na[kQgmmaK];
    double exact = 0;
    for (int k = 0; k < kQgmmaK; ++k) {
      a[k] = uint8_t((sign(rng) << 7) | (7 << 3) | mant(rng));  // [1, 2)
      b[k] = uint8_t((7 << 3) | mant(rng));
      na[k] = a[k] ^ 0x80;
      exact += double(numerics::e4m3_value(a[k])) * numerics::e4m3_value(b[k]);
    }
    // 32 products of 6 fraction bits below 2^2: the aligned sum keeps 13 fraction bits, so it is exact, and
    // |sum| < 2^7 leaves the 14-bit result exact as well.
    EXPECT_EQ(double(qgmma_dot(0.0f, a, b, kQgmmaK)), exact);
    EXPECT_EQ(qgmma_dot(0.0f, na, b, kQgmmaK), -qgmma_dot(0.0f, a, b, kQgmmaK));
  }
  // 1 + 2^-14 is cut to 1 (the accumulator's last 10 bits are gone), 1 + 2^-13 kept.
  const uint8_t one = 0x38, zero = 0x00, tiny = 0x08;  // 1, 0, 2^-6
  EXPECT_EQ(qgmma_dot(1.0f + 0x1p-14f, &zero, &zero, 1), 1.0f);
  EXPECT_EQ(qgmma_dot(1.0f + 0x1p-13f, &zero, &zero, 1), 1.0f + 0x1p-13f);
  EXPECT_EQ(qgmma_dot(-1.0f - 0x1p-14f, &zero, &zero, 1), -1.0f);
  // A product 2^-21 below the accumulator's leading bit is cut away entirely.
  EXPECT_EQ(qgmma_dot(512.0f, &tiny, &tiny, 1), 512.0f);
  EXPECT_EQ(qgmma_dot(0.0f, &one, &one, 1), 1.0f);
}

// A NaN input (e4m3 0x7f) makes the sum NaN, as on the GPU, without undefined conversions (UBSan runs this).
TEST(TensorCoreSums, NanInputGivesNan) {
  const uint8_t nan = 0x7f, one = 0x38;
  EXPECT_TRUE(std::isnan(qgmma_dot(0.0f, &nan, &one, 1)));
  EXPECT_TRUE(std::isnan(qgmma_dot(NAN, &one, &one, 1)));
}

}  // namespace
}  // namespace zyfa::ref
