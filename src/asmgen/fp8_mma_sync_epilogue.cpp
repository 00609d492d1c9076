// The end of a query tile: out = bf16(O * ((1 / l) * v_descale)) (round to nearest even) and, when asked for,
// lse = (m + log2 l) * ln 2, for the rows inside seqlen (emit_store_tile, shared with the wgmma schedule).
#include "asmgen/fp8_mma_sync_emitter.hpp"
#include "asmgen/fp8_store_tile.hpp"

namespace zyfa::asmgen::fp8ms {

void MmaSyncEmitter::epilogue() {
  TileRows t{batch, head, tile, quad_col, v_descale, tile_row, m, l, kOutTiles, {}};
  // Element 2 row + col of O's n8 tile `chunk`: the same fragment layout as the wgmma accumulator's.
  t.o = [&](int chunk, int row, int col) { return o[size_t(chunk)][size_t(2 * row + col)]; };
  emit_store_tile(b, t);
}

}  // namespace zyfa::asmgen::fp8ms
