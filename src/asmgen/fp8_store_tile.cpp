// The store of a finished query tile: O scaled to bf16 out rows in 16-byte chunks, and lse.
#include "asmgen/fp8_store_tile.hpp"

#include <cstddef>
#include <vector>

#include "asmgen/fp8_job_loop.hpp"
#include "asmgen/fp8_kernel_params.h"
#include "asmgen/fp8_quad_transpose.hpp"
#include "kernels/out_chunk.h"

namespace zyfa::asmgen {

namespace nx = zyfa::numerics;

void emit_store_tile(Builder &b, const TileRows &t) {
  using P = Fp8AttentionParams;
  const Reg seqlen = load_param(b, Type::kS32, offsetof(P, seqlen), "seqlen");
  const Reg out = load_param(b, Type::kU64, offsetof(P, out), "out");
  const Reg lse = load_param(b, Type::kU64, offsetof(P, lse), "lse");
  const Reg b64 = b.temp(Type::kS64, "batch64");
  const Reg h64 = b.temp(Type::kS64, "head64");
  b.cvt(b64, t.batch, Type::kS32, Round::kNone);
  b.cvt(h64, t.head, Type::kS32, Round::kNone);
  // Element offset of (batch, row 0, head) in out, and of (batch, head, row 0) in lse.
  const Reg out_head = b.temp(Type::kS64, "out_head");
  b.mul_lo(out_head, b64, load_param(b, Type::kS64, offsetof(P, out_batch_stride), "out_batch_stride"));
  b.mad_lo(out_head, h64, load_param(b, Type::kS64, offsetof(P, out_head_stride), "out_head_stride"), out_head);
  const Reg nheads64 = b.temp(Type::kS64, "nheads64");
  b.cvt(nheads64, load_param(b, Type::kS32, offsetof(P, nheads), "nheads"), Type::kS32, Round::kNone);
  const Reg seqlen64 = b.temp(Type::kS64, "seqlen64");
  b.cvt(seqlen64, seqlen, Type::kS32, Round::kNone);
  const Reg lse_head = b.temp(Type::kS64, "lse_head");
  b.mad_lo(lse_head, b64, nheads64, h64);
  b.mul_lo(lse_head, lse_head, seqlen64);
  // After the quad transpose, lane q writes chunks q, q + 4, ... of its row: 16 bytes at 16 q + 64 j.
  const Reg chunk_bytes = b.temp(Type::kS64, "out_chunk_bytes");
  b.cvt(chunk_bytes, t.quad_col, Type::kS32, Round::kNone);
  b.shl(chunk_bytes, chunk_bytes, imm(4));
  const QuadTransposeMasks upper = quad_transpose_masks(b, t.quad_col);
  // lse from the first thread of the quad (all four hold the row's m and l).
  const Reg has_lse = b.temp(Type::kPred, "has_lse");
  b.setp(has_lse, Cmp::kNe, Type::kU64, lse, imm(0));
  const Reg first_of_quad = b.temp(Type::kPred, "first_of_quad");
  b.setp(first_of_quad, Cmp::kEq, Type::kS32, t.quad_col, imm(0));
  b.and_(has_lse, has_lse, first_of_quad);
  const Reg row0 = b.temp(Type::kS32, "row0");
  emit_tile_row0(b, row0, t.tile, t.tile_rows, t.shifted);

  for (int h = 0; h < 2; ++h) {
    const Reg lh = t.l[size_t(h)];
    const Reg row = b.temp(Type::kS32, "out_row");
    b.add(row, t.tile_row[size_t(h)], row0);
    // Outside [0, seqlen) in one unsigned compare: a tile 0 that overhangs the sequence starts before row 0.
    const Reg outside = b.temp(Type::kPred, "row_outside");
    b.setp(outside, Cmp::kGe, Type::kU32, row, seqlen);
    const Reg row64 = b.temp(Type::kS64, "out_row64");
    b.cvt(row64, row, Type::kS32, Round::kNone);
    const Reg elem = b.temp(Type::kS64, "out_elem");
    b.mad_lo(elem, row64, load_param(b, Type::kS64, offsetof(P, out_seq_stride), "out_seq_stride"), out_head);
    const Reg addr = b.temp(Type::kU64, "out_addr");
    b.mad_lo(addr, elem, imm(2), out);
    b.add(addr, addr, chunk_bytes);
    const Reg scale = b.temp(Type::kF32, "out_scale");  // numerics::output_scale: (1 / l) * v_descale
    b.div(scale, f32(1.0f), lh);
    b.mul(scale, scale, t.v_descale);
    std::vector<Reg> words(size_t(t.chunks));  // word i: columns 8 i + 2 quad_col, + 1
    for (int i = 0; i < t.chunks; ++i) {
      std::array<Reg, 2> y;
      for (int e = 0; e < 2; ++e) {
        y[size_t(e)] = b.temp(Type::kF32, "y");
        b.mul(y[size_t(e)], t.o(i, h, e), scale);
      }
      words[size_t(i)] = b.temp(Type::kB32, "out_bf16x2");
      b.cvt_bf16x2(words[size_t(i)], y[1], y[0]);
    }
    // Rows outside the sequence take part in the shuffles and only skip their stores.
    emit_quad_transpose(b, words, upper);
    for (int j = 0; j < t.chunks; j += kQuad) {
      auto g = b.unless(outside);
      b.st_global(Type::kB32, addr, int64_t(kOutChunkBytes) * j,
                  {words[size_t(j)], words[size_t(j) + 1], words[size_t(j) + 2], words[size_t(j) + 3]});
    }
    const Reg lse_val = b.temp(Type::kF32, "lse_value");
    b.lg2(lse_val, lh);
    b.add(lse_val, t.m[size_t(h)], lse_val);
    b.mul(lse_val, lse_val, f32(nx::kLn2));
    const Reg lse_elem = b.temp(Type::kS64, "lse_elem");
    b.add(lse_elem, lse_head, row64);
    const Reg lse_addr = b.temp(Type::kU64, "lse_addr");
    b.mad_lo(lse_addr, lse_elem, imm(int64_t(sizeof(float))), lse);
    const Reg store_lse = b.temp(Type::kPred, "store_lse");
    b.setp(store_lse, Cmp::kLt, Type::kU32, row, seqlen);
    b.and_(store_lse, store_lse, has_lse);
    auto g = b.when(store_lse);
    b.st_global(Type::kF32, lse_addr, 0, {lse_val});
  }
}

}  // namespace zyfa::asmgen
