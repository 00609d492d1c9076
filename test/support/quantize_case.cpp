#include "support/quantize_case.hpp"

#include <cmath>
#include <cstring>
#include <random>

#include "kernels/numerics.h"

namespace zyfa::test {
namespace {
constexpr double kOutlierRate = 0.01;
constexpr float kOutlierFactor = 30.0f;
// Decorrelates the rotation's signs from the values drawn with the same seed.
constexpr uint64_t kRotationSeedSalt = 0x5eed;
}  // namespace

std::vector<uint16_t> random_bf16(size_t n, float scale, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::bernoulli_distribution outlier(kOutlierRate);
  std::vector<uint16_t> v(n);
  for (auto &x : v) x = numerics::bf16_bits(normal(gen) * scale * (outlier(gen) ? kOutlierFactor : 1.0f));
  return v;
}

QuantizeCase::QuantizeCase(int64_t rows, int64_t d, int64_t stride, zyfa_rotation r, float scale, uint64_t seed)
    : n_rows(rows), dim(d), row_stride(stride), rotation(r), rotation_seed(seed ^ kRotationSeedSalt),
      src(size_t(rows * stride), numerics::bf16_bits(NAN)), dst(size_t(rows * d), kCodePoison) {
  const auto values = random_bf16(size_t(rows * d), scale, seed);
  for (int64_t i = 0; i < rows; ++i) {
    std::memcpy(&src[size_t(i * stride)], &values[size_t(i * d)], size_t(d) * sizeof(uint16_t));
  }
}

zyfa_quantize_desc QuantizeCase::desc() {
  zyfa_quantize_desc d = ZYFA_QUANTIZE_DESC_INIT;
  d.src = src.data();
  d.dst = dst.data();
  d.descale = &descale;
  d.n_rows = n_rows;
  d.dim = dim;
  d.row_stride = row_stride == dim ? 0 : row_stride;
  d.rotation = rotation;
  d.rotation_seed = rotation_seed;
  return d;
}

std::vector<float> QuantizeCase::rows_fp32() const {
  std::vector<float> x(size_t(n_rows * dim));
  for (int64_t i = 0; i < n_rows; ++i) {
    for (int64_t j = 0; j < dim; ++j) x[size_t(i * dim + j)] = numerics::bf16_value(src[size_t(i * row_stride + j)]);
  }
  return x;
}

}  // namespace zyfa::test
