// The host data of one zyfa_quantize_fp8 call, shared by the host test (against fp64) and the GPU test
// (against the host twin): random BF16 rows with poisoned gaps, poisoned outputs.
#ifndef ZYFA_TEST_SUPPORT_QUANTIZE_CASE_HPP_
#define ZYFA_TEST_SUPPORT_QUANTIZE_CASE_HPP_

#include <cstdint>
#include <vector>

#include "support/seed.hpp"
#include "zyfa/zyfa.h"

namespace zyfa::test {

// e4m3 NaN: never the code of a finite input, so a code left unwritten shows.
constexpr uint8_t kCodePoison = 0x7f;
constexpr float kDescalePoison = -3.0f;


// n BF16 values: Gaussian with std `scale`, 1% of them 30x larger (the outliers a rotation spreads).
std::vector<uint16_t> random_bf16(size_t n, float scale, uint64_t seed);

struct QuantizeCase {
  int64_t n_rows, dim, row_stride;
  zyfa_rotation rotation;
  uint64_t rotation_seed;
  std::vector<uint16_t> src;  // row r at r * row_stride; the gaps hold a BF16 NaN that must never be read
  std::vector<uint8_t> dst;   // n_rows * dim codes, poisoned
  float descale = kDescalePoison;

  // Random rows of std `scale` (0 gives zeros), drawn from `seed`.
  QuantizeCase(int64_t rows, int64_t d, int64_t stride, zyfa_rotation r, float scale, uint64_t seed);
  // A descriptor over this case's host memory (row_stride 0 when the rows are contiguous).
  zyfa_quantize_desc desc();
  // The rows widened to fp32, contiguous.
  std::vector<float> rows_fp32() const;
};

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_QUANTIZE_CASE_HPP_
