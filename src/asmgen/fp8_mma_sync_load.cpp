// Global -> shared. 128 rows of Q, K or V are copied as raw e4m3 bytes by cp.async (rows at and past
// seqlen are zero-filled, never read: the inputs are used in place, not padded by a copy), then widened
// to f16 rows in shared memory (exact) once they have landed. The schedule issues a key block's copies
// before the previous block's matrix work, so that their latency hides behind it.
#include "asmgen/fp8_mma_sync_emitter.hpp"

namespace zyfa::asmgen::fp8ms {
namespace {

using P = Fp8AttentionParams;

// 16-byte chunk i of this thread in a 128-row block of `cols` e4m3 columns: chunks are numbered row by
// row, and thread t takes chunks t, t + 256, ..., so consecutive threads touch consecutive bytes.
struct Chunk {
  Reg row, col;  // row within the block, chunk within the row
};
Chunk chunk(MmaSyncEmitter &e, int i, int cols) {
  Builder &b = e.b;
  const int chunks_per_row = cols / kChunk;
  Chunk c{b.temp(Type::kS32, "chunk_row"), b.temp(Type::kS32, "chunk_col")};
  const Reg idx = b.temp(Type::kS32, "chunk");
  b.add(idx, e.tid, imm(i * kThreads));
  b.div(c.row, idx, imm(chunks_per_row));
  b.mad_lo(c.col, c.row, imm(-chunks_per_row), idx);
  return c;
}
int chunks_per_thread(int cols) {
  static_assert(nx::kKeyBlock == nx::kQueryTile, "one staging routine for query tiles and key blocks");
  return nx::kKeyBlock * (cols / kChunk) / kThreads;  // 4 at 128 columns, 6 at 192: exact
}
// Shared address of `c` in a block stored with `pitch` bytes per row and `chunk_bytes` per chunk.
Reg chunk_address(MmaSyncEmitter &e, const Chunk &c, int offset, int pitch, int chunk_bytes) {
  Builder &b = e.b;
  const Reg smem = b.temp(Type::kU32, "smem");
  b.read_special(smem, Special::kSmemBase);
  const Reg a = b.temp(Type::kU32, "chunk_addr");
  b.mad_lo(a, c.col, imm(chunk_bytes), smem);
  b.mad_lo(a, c.row, imm(pitch), a);
  b.add(a, a, imm(offset));
  return a;
}

// cp.async of rows first_row .. first_row + 127 of one head (`head`: the address of its row 0) into the
// raw buffer at `raw_offset` (rows of `cols` bytes, unpadded).
void issue_rows(MmaSyncEmitter &e, int raw_offset, int cols, Reg head, size_t seq_stride_field, Reg first_row) {
  Builder &b = e.b;
  const Reg seqlen = e.param(Type::kS32, offsetof(P, seqlen), "seqlen");
  const Reg seq_stride = e.param(Type::kS64, seq_stride_field, "seq_stride");
  for (int i = 0; i < chunks_per_thread(cols); ++i) {
    const Chunk c = chunk(e, i, cols);
    const Reg grow = b.temp(Type::kS32, "global_row");
    b.add(grow, first_row, c.row);
    const Reg in_range = b.temp(Type::kPred, "row_in_range");
    b.setp(in_range, Cmp::kLt, Type::kS32, grow, seqlen);
    const Reg grow64 = b.temp(Type::kS64, "global_row64");
    b.cvt(grow64, grow, Type::kS32, Round::kNone);
    const Reg col64 = b.temp(Type::kS64, "col64");
    b.mul_wide(col64, c.col, imm(kChunk));
    const Reg addr = b.temp(Type::kU64, "row_addr");
    b.mad_lo(addr, grow64, seq_stride, head);
    b.add(addr, addr, col64);
    b.selp(addr, addr, head, in_range);  // a row past seqlen reads nothing; keep its address in bounds anyway
    const Reg bytes = b.temp(Type::kU32, "copy_bytes");
    b.selp(bytes, imm(kChunk), imm(0), in_range);
    b.cp_async_16(chunk_address(e, c, raw_offset, cols, kChunk), 0, addr, bytes);
  }
}

// The landed raw rows at `raw_offset` to f16 rows at `f16_offset` (`pitch` bytes apart). Every chunk is
// loaded before the first conversion.
void widen_rows(MmaSyncEmitter &e, int raw_offset, int cols, int f16_offset, int pitch) {
  Builder &b = e.b;
  const int n = chunks_per_thread(cols);
  std::vector<std::array<Reg, 4>> raw(static_cast<size_t>(n));
  std::vector<Reg> dst(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const Chunk c = chunk(e, i, cols);
    for (Reg &w : raw[size_t(i)]) w = b.temp(Type::kB32, "e4m3x4");
    b.ld_shared({raw[size_t(i)].begin(), raw[size_t(i)].end()}, chunk_address(e, c, raw_offset, cols, kChunk), 0);
    dst[size_t(i)] = chunk_address(e, c, f16_offset, pitch, kChunk * kF16Bytes);
  }
  for (int i = 0; i < n; ++i) {
    std::array<Reg, 8> wide;  // the chunk's 16 values as f16, in order
    for (int w = 0; w < 4; ++w) {
      const Reg lo = b.temp(Type::kB16, "e4m3x2"), hi = b.temp(Type::kB16, "e4m3x2");
      b.unpack16x2(lo, hi, raw[size_t(i)][size_t(w)]);
      wide[size_t(2 * w)] = b.temp(Type::kB32, "f16x2");
      wide[size_t(2 * w + 1)] = b.temp(Type::kB32, "f16x2");
      b.cvt_f16x2_e4m3x2(wide[size_t(2 * w)], lo);
      b.cvt_f16x2_e4m3x2(wide[size_t(2 * w + 1)], hi);
    }
    b.st_shared(Type::kB32, dst[size_t(i)], 0, {wide[0], wide[1], wide[2], wide[3]});
    b.st_shared(Type::kB32, dst[size_t(i)], kChunk, {wide[4], wide[5], wide[6], wide[7]});
  }
}

}  // namespace

void MmaSyncEmitter::issue_q() {
  issue_rows(*this, layout.raw_q_offset, layout.d_qk, q_head, offsetof(P, q_seq_stride), row0);
}

void MmaSyncEmitter::issue_kv(Reg key0) {
  issue_rows(*this, layout.raw_k_offset, layout.d_qk, k_head, offsetof(P, k_seq_stride), key0);
  issue_rows(*this, layout.raw_v_offset, kDv, v_head, offsetof(P, v_seq_stride), key0);
}

void MmaSyncEmitter::widen_q() {
  widen_rows(*this, layout.raw_q_offset, layout.d_qk, layout.q_offset, layout.qk_pitch);
}

void MmaSyncEmitter::widen_kv() {
  widen_rows(*this, layout.raw_k_offset, layout.d_qk, layout.k_offset, layout.qk_pitch);
  widen_rows(*this, layout.raw_v_offset, kDv, layout.v_offset, kVPitch);
}

}  // namespace zyfa::asmgen::fp8ms
