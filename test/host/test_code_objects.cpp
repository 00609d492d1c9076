// The table of embedded FP8 code objects against the limits the host code assumes of every kernel.
#include <gtest/gtest.h>

#include "host/code_objects.hpp"
#include "host/fp8_asm_attention.hpp"

namespace zyfa {
namespace {

// kernels::kFp8MaxQueryTileRows sizes the seqlen bound (int32 rows past the last tile): a variant with a
// taller tile must raise it.
TEST(CodeObjects, EveryQueryTileFitsTheSeqlenBound) {
  ASSERT_GT(kCodeObjectCount, 0);
  for (int i = 0; i < kCodeObjectCount; ++i) {
    const CodeObject &o = kCodeObjects[i];
    EXPECT_GE(o.query_tile_rows, 1) << o.variant;
    EXPECT_LE(o.query_tile_rows, kernels::kFp8MaxQueryTileRows) << o.variant;
  }
}

}  // namespace
}  // namespace zyfa
