#include "ref/quantize_host.hpp"

#include <algorithm>
#include <vector>

#include "kernels/fp8_scale.h"
#include "kernels/numerics.h"
#include "kernels/rotation.h"
#include "ref/parallel_for.hpp"

namespace zyfa::ref {
namespace {

// Rows per unit of work for the host's cores: large enough to amortize the hand-out, small enough to
// balance.
constexpr int64_t kRowsPerUnit = 512;

// Calls visit(row, values) for the rows [begin, end), values being the row as the quantizer sees it: the
// BF16 inputs widened to fp32, then rotated when the descriptor asks for it. `values` holds dim floats.
template <class Visit>
void for_rows(const zyfa_quantize_desc &desc, int64_t row_stride, int64_t begin, int64_t end, float *values,
              Visit visit) {
  const auto *src = static_cast<const uint16_t *>(desc.src);
  auto widen = [&](int64_t row) {
    const uint16_t *in = src + row * row_stride;
    for (int64_t i = 0; i < desc.dim; ++i) values[i] = numerics::bf16_value(in[i]);
  };
  auto rotated_rows = [&](auto rotation_tag) {
    using Rotation = decltype(rotation_tag);
    const auto signs = rotation::make_sign_masks<Rotation>(desc.rotation_seed);
    for (int64_t row = begin; row < end; ++row) {
      widen(row);
      rotation::rotate_row<Rotation>(values, values, signs);
      visit(row, values);
    }
  };
  if (desc.rotation == ZYFA_ROTATION_NONE) {
    for (int64_t row = begin; row < end; ++row) {
      widen(row);
      visit(row, values);
    }
  } else if (desc.dim == rotation::kRowDim<rotation::Hadamard128>) {
    rotated_rows(rotation::Hadamard128{});
  } else {
    rotated_rows(rotation::DctHadamard192{});
  }
}

}  // namespace

void quantize_fp8_host(const zyfa_quantize_desc &desc, int64_t row_stride) {
  const int64_t n_units = (desc.n_rows + kRowsPerUnit - 1) / kRowsPerUnit;
  // One row of scratch per worker, allocated before the workers start (their bodies must not throw).
  std::vector<std::vector<float>> scratch(size_t(worker_count(n_units)), std::vector<float>(size_t(desc.dim)));
  auto rows_of = [&](int worker, int64_t unit, auto visit) {
    const int64_t begin = unit * kRowsPerUnit, end = std::min(desc.n_rows, begin + kRowsPerUnit);
    for_rows(desc, row_stride, begin, end, scratch[size_t(worker)].data(), visit);
  };

  // Pass 1: the amax as the largest |y| bit pattern, the kernel's order-free reduction, per unit then over
  // the units.
  std::vector<uint32_t> unit_amax(size_t(n_units), 0);
  parallel_for(n_units, [&](int worker, int64_t unit) {
    uint32_t amax = 0;
    rows_of(worker, unit, [&](int64_t, const float *y) {
      for (int64_t i = 0; i < desc.dim; ++i) amax = std::max(amax, fp8_scale::magnitude_bits(y[i]));
    });
    unit_amax[size_t(unit)] = amax;
  });
  const uint32_t amax = *std::max_element(unit_amax.begin(), unit_amax.end());
  const float descale = fp8_scale::descale_for_amax(numerics::bits_float(amax));
  const float inverse = fp8_scale::inverse_descale(descale);

  // Pass 2: the codes.
  auto *dst = static_cast<uint8_t *>(desc.dst);
  parallel_for(n_units, [&](int worker, int64_t unit) {
    rows_of(worker, unit, [&](int64_t row, const float *y) {
      uint8_t *out = dst + row * desc.dim;
      for (int64_t i = 0; i < desc.dim; ++i) out[i] = numerics::e4m3_code(fp8_scale::scaled_for_fp8(y[i], inverse));
    });
  });
  *desc.descale = descale;
}

}  // namespace zyfa::ref
