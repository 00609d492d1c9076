// The end of a query tile: out = bf16(O / l * v_descale) (round to nearest even) and, when asked for,
// lse = (m + log2 l) * ln 2, for the rows inside seqlen.
#include "asmgen/fp8_attention_emitter.hpp"

namespace zyfa::asmgen::fp8 {

void Emitter::epilogue() {
  using P = Fp8AttentionParams;
  const Reg seqlen = param(Type::kS32, offsetof(P, seqlen), "seqlen");
  const Reg out = param(Type::kU64, offsetof(P, out), "out");
  const Reg lse = param(Type::kU64, offsetof(P, lse), "lse");
  const Reg b64 = b.temp(Type::kS64, "batch64");
  const Reg h64 = b.temp(Type::kS64, "head64");
  b.cvt(b64, batch, Type::kS32, Round::kNone);
  b.cvt(h64, head, Type::kS32, Round::kNone);
  // Element offset of (batch, row 0, head) in out, and of (batch, head, row 0) in lse.
  const Reg out_head = b.temp(Type::kS64, "out_head");
  b.mul_lo(out_head, b64, param(Type::kS64, offsetof(P, out_batch_stride), "out_batch_stride"));
  b.mad_lo(out_head, h64, param(Type::kS64, offsetof(P, out_head_stride), "out_head_stride"), out_head);
  const Reg lse_head = b.temp(Type::kS64, "lse_head");
  const Reg bh = b.temp(Type::kS64, "batch_head");
  const Reg nheads64 = b.temp(Type::kS64, "nheads64");
  b.cvt(nheads64, param(Type::kS32, offsetof(P, nheads), "nheads"), Type::kS32, Round::kNone);
  b.mad_lo(bh, b64, nheads64, h64);
  const Reg seqlen64 = b.temp(Type::kS64, "seqlen64");
  b.cvt(seqlen64, seqlen, Type::kS32, Round::kNone);
  b.mul_lo(lse_head, bh, seqlen64);
  const Reg col_bytes = b.temp(Type::kS64, "out_col_bytes");  // columns 2 quad_col, 2 quad_col + 1 of each tile
  b.cvt(col_bytes, quad_col, Type::kS32, Round::kNone);
  b.shl(col_bytes, col_bytes, imm(2));
  const Reg has_lse = b.temp(Type::kPred, "has_lse");
  b.setp(has_lse, Cmp::kNe, Type::kU64, lse, imm(0));
  const Reg first_of_quad = b.temp(Type::kPred, "first_of_quad");
  b.setp(first_of_quad, Cmp::kEq, Type::kS32, quad_col, imm(0));
  const Reg writes_lse = b.temp(Type::kPred, "writes_lse");
  b.and_(writes_lse, has_lse, first_of_quad);

  for (int r = 0; r < 2; ++r) {
    const Reg row = b.temp(Type::kS32, "out_row");
    b.add(row, tile_row[size_t(r)], row0);
    const Reg skip = b.temp(Type::kPred, "row_outside");
    b.setp(skip, Cmp::kGe, Type::kS32, row, seqlen);
    const Reg row64 = b.temp(Type::kS64, "out_row64");
    b.cvt(row64, row, Type::kS32, Round::kNone);
    const Reg elem = b.temp(Type::kS64, "out_elem");
    b.mad_lo(elem, row64, param(Type::kS64, offsetof(P, out_seq_stride), "out_seq_stride"), out_head);
    const Reg addr = b.temp(Type::kU64, "out_addr");
    b.mad_lo(addr, elem, imm(2), out);
    b.add(addr, addr, col_bytes);
    for (int j = 0; j < kOutTiles; ++j) {
      std::array<Reg, 2> y;
      for (int h = 0; h < 2; ++h) {
        y[size_t(h)] = b.temp(Type::kF32, "y");
        b.div(y[size_t(h)], o[size_t(j)][size_t(2 * r + h)], l[size_t(r)]);
        b.mul(y[size_t(h)], y[size_t(h)], v_descale);
      }
      const Reg packed = b.temp(Type::kB32, "out_bf16x2");
      b.cvt_bf16x2(packed, y[1], y[0]);
      auto g = b.unless(skip);
      b.st_global(Type::kB32, addr, 2 * kMmaN * j, {packed});
    }
    // lse = (m + log2 l) ln 2, from the first thread of the quad (all four hold the row's m and l).
    const Reg lse_val = b.temp(Type::kF32, "lse_value");
    b.lg2(lse_val, l[size_t(r)]);
    b.add(lse_val, m[size_t(r)], lse_val);
    b.mul(lse_val, lse_val, f32(nx::kLn2));
    const Reg lse_addr = b.temp(Type::kU64, "lse_addr");
    const Reg lse_elem = b.temp(Type::kS64, "lse_elem");
    b.add(lse_elem, lse_head, row64);
    b.mad_lo(lse_addr, lse_elem, imm(int64_t(sizeof(float))), lse);
    const Reg store_lse = b.temp(Type::kPred, "store_lse");
    b.setp(store_lse, Cmp::kLt, Type::kS32, row, seqlen);
    b.and_(store_lse, store_lse, writes_lse);
    auto g = b.when(store_lse);
    b.st_global(Type::kF32, lse_addr, 0, {lse_val});
  }
}

}  // namespace zyfa::asmgen::fp8
