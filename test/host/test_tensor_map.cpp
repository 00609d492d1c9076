// Which operands a TMA tensor map can take (src/kernels/hopper/tensor_map.cuh), from shapes and strides
// alone: no GPU needed.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/hopper/tensor_map.cuh"

namespace zyfa {
namespace {

using hopper::TmaRefusal;
using hopper::tma_refusal;

// A 16-byte aligned base that is never read.
alignas(16) const unsigned char kBase[16] = {};

// Validation takes any stride on a dimension of extent 1: a map never steps it, whatever it is. Its bytes
// (2^62 elements of two bytes) would overflow int64, so they must not be formed: under UBSan that was an abort.
TEST(TensorMap, StrideOfAnUnsteppedDimensionIsNeverMultiplied) {
  const TensorRef t{kBase, int64_t(1) << 62, 128 * 8, 128};  // batch 1, seqlen 64, 8 heads, d 128 (BF16)
  EXPECT_EQ(tma_refusal(t, 1, 64, 8, 128, /*kElemBytes=*/2), TmaRefusal::kMappable);
}

// The same stride on a stepped dimension overflows its bytes: refused as that stride. (Wrapped, 2^63 bytes would
// be negative and refused too: what tells the two apart is the UBSan build of CI, which aborted on the
// multiplication itself, also on the extent-1 case above.)
TEST(TensorMap, StrideWhoseBytesOverflowIsRefused) {
  const TensorRef t{kBase, int64_t(1) << 62, 128 * 8, 128};
  EXPECT_EQ(tma_refusal(t, 2, 64, 8, 128, /*kElemBytes=*/2), TmaRefusal::kBatchStride);
}

}  // namespace
}  // namespace zyfa
