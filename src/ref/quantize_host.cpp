#include "ref/quantize_host.hpp"

#include <algorithm>
#include <vector>

#include "kernels/fp8_scale.h"
#include "kernels/numerics.h"
#include "kernels/rotation.h"

namespace zyfa::ref {
namespace {

// Calls visit(row, values) for every row in order, values being the row as the quantizer sees it: the
// BF16 inputs widened to fp32, then rotated when the descriptor asks for it.
template <class Visit>
void for_each_row(const zyfa_quantize_desc &desc, int64_t row_stride, Visit visit) {
  const auto *src = static_cast<const uint16_t *>(desc.src);
  std::vector<float> values(size_t(desc.dim));
  auto widen = [&](int64_t row) {
    const uint16_t *in = src + row * row_stride;
    for (int64_t i = 0; i < desc.dim; ++i) values[size_t(i)] = numerics::bf16_value(in[i]);
  };
  auto rotated_rows = [&](auto rotation_tag) {
    using Rotation = decltype(rotation_tag);
    const auto signs = rotation::make_sign_masks<Rotation>(desc.rotation_seed);
    for (int64_t row = 0; row < desc.n_rows; ++row) {
      widen(row);
      rotation::rotate_row<Rotation>(values.data(), values.data(), signs);
      visit(row, values.data());
    }
  };
  if (desc.rotation == ZYFA_ROTATION_NONE) {
    for (int64_t row = 0; row < desc.n_rows; ++row) {
      widen(row);
      visit(row, values.data());
    }
  } else if (desc.dim == rotation::kRowDim<rotation::Hadamard128>) {
    rotated_rows(rotation::Hadamard128{});
  } else {
    rotated_rows(rotation::DctHadamard192{});
  }
}

}  // namespace

void quantize_fp8_host(const zyfa_quantize_desc &desc, int64_t row_stride) {
  // Pass 1: the amax as the largest |y| bit pattern, the kernel's order-free reduction.
  uint32_t amax = 0;
  for_each_row(desc, row_stride, [&](int64_t, const float *y) {
    for (int64_t i = 0; i < desc.dim; ++i) amax = std::max(amax, fp8_scale::magnitude_bits(y[i]));
  });
  const float descale = fp8_scale::descale_for_amax(numerics::bits_float(amax));
  const float inverse = fp8_scale::inverse_descale(descale);
  // Pass 2: the codes.
  auto *dst = static_cast<uint8_t *>(desc.dst);
  for_each_row(desc, row_stride, [&](int64_t row, const float *y) {
    uint8_t *out = dst + row * desc.dim;
    for (int64_t i = 0; i < desc.dim; ++i) out[i] = numerics::e4m3_code(fp8_scale::scaled_for_fp8(y[i], inverse));
  });
  *desc.descale = descale;
}

}  // namespace zyfa::ref
