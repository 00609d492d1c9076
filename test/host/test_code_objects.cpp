// The table of embedded FP8 code objects against the limits the host code assumes of every kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

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

// fp8_query_tile_shift against each kernel's tiles: the tiles of a sequence cover its rows once, tile 0 is the
// one that overhangs it (before row 0, by whole consumers) and less than one consumer's rows lie past its end,
// except for tiles of whole key blocks, which are not shifted (their kernels take a tile's key blocks from its
// index).
TEST(CodeObjects, QueryTilesEndAtTheSequenceAndOverhangBeforeIt) {
  std::vector<int64_t> seqlens;
  for (int64_t s = 1; s <= 1000; ++s) seqlens.push_back(s);
  for (int64_t s : {int64_t(4096), int64_t(8192), int64_t(16384), int64_t(32768), int64_t(131071), int64_t(INT32_MAX) - 512})
    seqlens.push_back(s);
  for (int i = 0; i < kCodeObjectCount; ++i) {
    const int64_t rows = kCodeObjects[i].query_tile_rows;
    for (const int64_t seqlen : seqlens) {
      const int64_t shift = asmgen::fp8_query_tile_shift(seqlen, rows);
      const int64_t tiles = (seqlen + rows - 1) / rows;
      const int64_t first_row = -shift, past_end = tiles * rows - shift - seqlen;
      SCOPED_TRACE(std::string(kCodeObjects[i].variant) + " seqlen " + std::to_string(seqlen));
      EXPECT_EQ(shift % asmgen::kRowsPerConsumer, 0);
      EXPECT_GT(first_row, -rows) << "tile 0 must hold row 0";
      EXPECT_GE(past_end, 0) << "the last tile must reach the last row";
      if (rows % numerics::kKeyBlock == 0) {
        EXPECT_EQ(shift, 0);
      } else {
        EXPECT_LT(past_end, asmgen::kRowsPerConsumer) << "a whole consumer past the sequence";
      }
    }
  }
}

}  // namespace
}  // namespace zyfa
