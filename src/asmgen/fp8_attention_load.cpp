// Global -> shared: 128 rows of Q, K or V, widened from e4m3 to f16 on the way (exact), rows at and past
// seqlen as zeros: the inputs are read in place, never padded by a copy.
#include "asmgen/fp8_attention_emitter.hpp"

namespace zyfa::asmgen::fp8 {
namespace {

using P = Fp8AttentionParams;

// Rows first_row .. first_row + 127 of one head (`head`: the address of its row 0), `cols` e4m3 values
// each, into shared memory at `smem_offset` as f16 rows `pitch` bytes apart. All loads are issued before
// the first conversion, so that they are in flight together.
void stage_rows(Emitter &e, int smem_offset, int pitch, int cols, Reg head, size_t seq_stride_field,
                Reg first_row) {
  Builder &b = e.b;
  const int chunks_per_row = cols / kChunk;
  const int per_thread = nx::kKeyBlock * chunks_per_row / kThreads;  // 4 at 128 columns, 6 at 192: exact
  static_assert(nx::kKeyBlock == nx::kQueryTile, "one staging routine for query tiles and key blocks");
  const Reg seqlen = e.param(Type::kS32, offsetof(P, seqlen), "seqlen");
  const Reg seq_stride = e.param(Type::kS64, seq_stride_field, "seq_stride");
  const Reg smem = b.temp(Type::kU32, "smem");
  b.read_special(smem, Special::kSmemBase);

  std::vector<std::array<Reg, 4>> data(static_cast<size_t>(per_thread));
  std::vector<Reg> dst(static_cast<size_t>(per_thread));
  for (int i = 0; i < per_thread; ++i) {
    const Reg idx = b.temp(Type::kS32, "chunk");
    b.add(idx, e.tid, imm(i * kThreads));
    const Reg row = b.temp(Type::kS32, "chunk_row");
    const Reg col = b.temp(Type::kS32, "chunk_col");
    b.div(row, idx, imm(chunks_per_row));
    b.mad_lo(col, row, imm(-chunks_per_row), idx);

    const Reg grow = b.temp(Type::kS32, "global_row");
    b.add(grow, first_row, row);
    const Reg in_range = b.temp(Type::kPred, "row_in_range");
    b.setp(in_range, Cmp::kLt, Type::kS32, grow, seqlen);
    const Reg grow64 = b.temp(Type::kS64, "global_row64");
    b.cvt(grow64, grow, Type::kS32, Round::kNone);
    const Reg col64 = b.temp(Type::kS64, "col64");
    b.mul_wide(col64, col, imm(kChunk));
    const Reg addr = b.temp(Type::kU64, "row_addr");
    b.mad_lo(addr, grow64, seq_stride, head);
    b.add(addr, addr, col64);
    for (Reg &w : data[size_t(i)]) {
      w = b.temp(Type::kB32, "chunk_word");
      b.mov(w, imm(0));
    }
    {
      auto g = b.when(in_range);
      b.ld_global({data[size_t(i)].begin(), data[size_t(i)].end()}, addr, 0, /*non_coherent=*/true);
    }
    dst[size_t(i)] = b.temp(Type::kU32, "chunk_dst");
    b.mad_lo(dst[size_t(i)], col, imm(kChunk * kF16Bytes), smem);
    b.mad_lo(dst[size_t(i)], row, imm(pitch), dst[size_t(i)]);
  }
  for (int i = 0; i < per_thread; ++i) {
    std::array<Reg, 8> wide;  // 16 f16 values, in order
    for (int w = 0; w < 4; ++w) {
      const Reg lo = b.temp(Type::kB16, "e4m3x2"), hi = b.temp(Type::kB16, "e4m3x2");
      b.unpack16x2(lo, hi, data[size_t(i)][size_t(w)]);
      wide[size_t(2 * w)] = b.temp(Type::kB32, "f16x2");
      wide[size_t(2 * w + 1)] = b.temp(Type::kB32, "f16x2");
      b.cvt_f16x2_e4m3x2(wide[size_t(2 * w)], lo);
      b.cvt_f16x2_e4m3x2(wide[size_t(2 * w + 1)], hi);
    }
    b.st_shared(Type::kB32, dst[size_t(i)], smem_offset, {wide[0], wide[1], wide[2], wide[3]});
    b.st_shared(Type::kB32, dst[size_t(i)], smem_offset + kChunk, {wide[4], wide[5], wide[6], wide[7]});
  }
}

}  // namespace

void Emitter::stage_q() {
  stage_rows(*this, layout.q_offset, layout.qk_pitch, layout.d_qk, q_head, offsetof(P, q_seq_stride), row0);
}

void Emitter::stage_kv(Reg key0) {
  stage_rows(*this, layout.k_offset, layout.qk_pitch, layout.d_qk, k_head, offsetof(P, k_seq_stride), key0);
  stage_rows(*this, layout.v_offset, kVPitch, kDv, v_head, offsetof(P, v_seq_stride), key0);
}

}  // namespace zyfa::asmgen::fp8
