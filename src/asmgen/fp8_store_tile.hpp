// The store of a finished query tile, shared by both FP8 schedules: out as bf16 and, where asked for, lse.
#ifndef ZYFA_ASMGEN_FP8_STORE_TILE_HPP_
#define ZYFA_ASMGEN_FP8_STORE_TILE_HPP_

#include <array>
#include <functional>

#include "asmgen/builder.hpp"
#include "kernels/numerics.h"

namespace zyfa::asmgen {

// What the store of a finished tile reads: the tile, the thread's two rows, their recurrence state, and O's
// element (chunk of 8 columns, row 0 or 1 of the thread, column 0 or 1 of the pair).
struct TileRows {
  Reg batch, head, tile, quad_col, v_descale;
  std::array<Reg, 2> tile_row, m, l;
  int chunks = 0;  // n8 chunks of O's columns
  std::function<Reg(int chunk, int row, int col)> o;
  int tile_rows = numerics::kQueryTile;  // rows per tile: the tile's first row is tile * tile_rows,
  bool shifted = false;                  // less tile_row_shift where set (emit_tile_row0)
};
// out = bf16(O * ((1 / l) * v_descale)) for the rows inside seqlen, in 16-byte chunks (every output row must
// start on 16 bytes); lse = (m + log2 l) ln 2 where asked for.
void emit_store_tile(Builder &b, const TileRows &t);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_FP8_STORE_TILE_HPP_
