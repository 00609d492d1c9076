// The emitter's registers, the shared-memory layout, the per-thread constants and the per-tile setup
// (heads, base addresses, descales, the diagonal mask's limits).
#include <cmath>

#include "asmgen/fp8_descale.hpp"
#include "asmgen/fp8_job_loop.hpp"
#include "asmgen/fp8_mma_sync_emitter.hpp"

namespace zyfa::asmgen::fp8ms {

Layout layout_of(const Variant &v) {
  Layout L;
  L.d_qk = v.d_qk;
  L.qk_steps = v.d_qk / kMmaK;
  L.qk_pitch = v.d_qk * kF16Bytes + kRowPad;
  L.q_offset = 0;
  L.k_offset = L.q_offset + nx::kQueryTile * L.qk_pitch;
  L.v_offset = L.k_offset + nx::kKeyBlock * L.qk_pitch;
  L.raw_q_offset = L.v_offset + nx::kKeyBlock * kVPitch;
  L.raw_k_offset = L.raw_q_offset + nx::kQueryTile * v.d_qk;
  L.raw_v_offset = L.raw_k_offset + nx::kKeyBlock * v.d_qk;
  L.bytes = L.raw_v_offset + nx::kKeyBlock * kDv;
  return L;
}

MmaSyncEmitter::MmaSyncEmitter(Program &program, const Variant &v) : b(program), variant(v), layout(layout_of(v)) {
  tid = b.reg(Type::kS32, "thread");
  warp = b.reg(Type::kS32, "warp");
  lane = b.reg(Type::kS32, "lane");
  quad_row = b.reg(Type::kS32, "quad_row");
  quad_col = b.reg(Type::kS32, "quad_col");
  for (int r = 0; r < 2; ++r) tile_row[size_t(r)] = b.reg(Type::kS32, indexed("tile_row", r));
  q_frag_addr = b.reg(Type::kU32, "q_frag_addr");
  k_frag_addr = b.reg(Type::kU32, "k_frag_addr");
  v_frag_addr = b.reg(Type::kU32, "v_frag_addr");

  batch = b.reg(Type::kS32, "batch");
  head = b.reg(Type::kS32, "head");
  tile = b.reg(Type::kS32, "tile");
  kv_head = b.reg(Type::kS32, "kv_head");
  row0 = b.reg(Type::kS32, "row0");
  q_head = b.reg(Type::kU64, "q_head");
  k_head = b.reg(Type::kU64, "k_head");
  v_head = b.reg(Type::kU64, "v_head");
  c = b.reg(Type::kF32, "c");
  lean_scale = b.reg(Type::kF32, "lean_scale");
  v_descale = b.reg(Type::kF32, "v_descale");
  for (int r = 0; r < 2; ++r) {
    diag_limit[r] = b.reg(Type::kS32, indexed("diag_limit", r));
    m[r] = b.reg(Type::kF32, indexed("m", r));
    l[r] = b.reg(Type::kF32, indexed("l", r));
    unscale[r] = b.reg(Type::kF32, indexed("unscale", r));
  }
  for (int j = 0; j < kOutTiles; ++j)
    for (int e = 0; e < 4; ++e) o[j][e] = b.reg(Type::kF32, indexed("o", j, e));
  for (int j = 0; j < kAccTiles; ++j)
    for (int e = 0; e < 4; ++e) acc[j][e] = b.reg(Type::kF32, indexed("acc", j, e));
  for (int j = 0; j < kScoreTiles; ++j)
    for (int e = 0; e < 4; ++e) s[j][e] = b.reg(Type::kF32, indexed("s", j, e));
  for (int kk = 0; kk < kPvSteps; ++kk)
    for (int i = 0; i < 4; ++i) p[kk][i] = b.reg(Type::kB32, indexed("p", kk, i));
  for (int e = 0; e < 4; ++e) rowsum[e] = b.reg(Type::kF32, indexed("rowsum", e));
}

Reg MmaSyncEmitter::param(Type type, size_t offset, const char *name) { return load_param(b, type, offset, name); }

void MmaSyncEmitter::thread_constants() {
  const Reg tid_u = b.temp(Type::kU32, "tid_u");
  b.read_special(tid_u, Special::kTidX);
  b.mov(tid, tid_u);
  b.shr(warp, tid, imm(5));
  b.and_(lane, tid, imm(31));
  b.shr(quad_row, lane, imm(2));
  b.and_(quad_col, lane, imm(3));
  b.shl(tile_row[0], warp, imm(4));
  b.add(tile_row[0], tile_row[0], quad_row);
  b.add(tile_row[1], tile_row[0], imm(8));

  const Reg smem = b.temp(Type::kU32, "smem");
  b.read_special(smem, Special::kSmemBase);
  const Reg lane_lo8 = b.temp(Type::kU32, "lane_lo8");   // lane % 8
  const Reg lane_hi = b.temp(Type::kU32, "lane_hi");     // lane / 16
  const Reg lane_bit3 = b.temp(Type::kU32, "lane_bit3"); // (lane / 8) % 2
  const Reg lane_lo16 = b.temp(Type::kU32, "lane_lo16"); // lane % 16
  b.and_(lane_lo8, lane, imm(7));
  b.shr(lane_hi, lane, imm(4));
  b.shr(lane_bit3, lane, imm(3));
  b.and_(lane_bit3, lane_bit3, imm(1));
  b.and_(lane_lo16, lane, imm(15));

  // ldmatrix.x4 lane addresses (lane l supplies row l % 8 of matrix l / 8).
  // A (Q rows): matrices (rows 0-7, 8-15) x (k 0-7, 8-15), the order of the A fragment's registers:
  // lane -> row lane % 16, k 8 (lane / 16).
  const Reg row = b.temp(Type::kU32, "row");
  b.shl(row, warp, imm(4));
  b.add(row, row, lane_lo16);
  b.mad_lo(q_frag_addr, row, imm(layout.qk_pitch), smem);
  const Reg col = b.temp(Type::kU32, "col");
  b.shl(col, lane_hi, imm(4));
  b.add(q_frag_addr, q_frag_addr, col);
  b.add(q_frag_addr, q_frag_addr, imm(layout.q_offset));

  // B from K rows: matrices (keys 0-7: k 0-7, 8-15), (keys 8-15: k 0-7, 8-15), the two registers of one
  // n8 tile of scores, then of the next: lane -> key lane % 8 + 8 (lane / 16), k 8 ((lane / 8) % 2).
  const Reg k_row = b.temp(Type::kU32, "k_row");
  b.shl(k_row, lane_hi, imm(3));
  b.add(k_row, k_row, lane_lo8);
  const Reg k_col = b.temp(Type::kU32, "k_col");
  b.shl(k_col, lane_bit3, imm(4));
  b.mad_lo(k_frag_addr, k_row, imm(layout.qk_pitch), smem);
  b.add(k_frag_addr, k_frag_addr, k_col);
  b.add(k_frag_addr, k_frag_addr, imm(layout.k_offset));

  // B from V rows, transposed by ldmatrix: matrices (keys 0-7, 8-15) x (columns 0-7), then columns 8-15:
  // lane -> key lane % 8 + 8 ((lane / 8) % 2), column 8 (lane / 16).
  const Reg v_row = b.temp(Type::kU32, "v_row");
  b.shl(v_row, lane_bit3, imm(3));
  b.add(v_row, v_row, lane_lo8);
  b.mad_lo(v_frag_addr, v_row, imm(kVPitch), smem);
  b.add(v_frag_addr, v_frag_addr, col);
  b.add(v_frag_addr, v_frag_addr, imm(layout.v_offset));
}

namespace {

// *addr = base + b * batch_stride + h * head_stride (element strides, 1-byte elements).
void head_address(MmaSyncEmitter &e, Reg addr, size_t base, size_t batch_stride, size_t head_stride, Reg b64, Reg h64) {
  Builder &b = e.b;
  b.mov(addr, e.param(Type::kU64, base, "tensor"));
  const Reg off = b.temp(Type::kS64, "head_off");
  b.mul_lo(off, b64, e.param(Type::kS64, batch_stride, "batch_stride"));
  b.mad_lo(off, h64, e.param(Type::kS64, head_stride, "head_stride"), off);
  b.add(addr, addr, off);
}

}  // namespace

void MmaSyncEmitter::tile_setup() {
  using P = Fp8AttentionParams;
  emit_tile_row0(b, row0, tile, nx::kQueryTile, /*shifted=*/false);

  const Reg b64 = b.temp(Type::kS64, "batch64");
  const Reg h64 = b.temp(Type::kS64, "head64");
  const Reg hk64 = b.temp(Type::kS64, "kv_head64");
  b.cvt(b64, batch, Type::kS32, Round::kNone);
  b.cvt(h64, head, Type::kS32, Round::kNone);
  b.cvt(hk64, kv_head, Type::kS32, Round::kNone);
  head_address(*this, q_head, offsetof(P, q), offsetof(P, q_batch_stride), offsetof(P, q_head_stride), b64, h64);
  head_address(*this, k_head, offsetof(P, k), offsetof(P, k_batch_stride), offsetof(P, k_head_stride), b64, hk64);
  head_address(*this, v_head, offsetof(P, v), offsetof(P, v_batch_stride), offsetof(P, v_head_stride), b64, hk64);

  emit_score_constants(b, batch, kv_head, c, lean_scale, v_descale);

  // Diagonal block: row i of the tile keeps key j iff j <= i and key0 + j < seqlen. With the thread's
  // keys at 8 tile + 2 quad_col + (0, 1), that is 8 tile + (0, 1) <= min(i, seqlen - row0 - 1) - 2 quad_col.
  const Reg valid_m1 = b.temp(Type::kS32, "valid_m1");
  b.sub(valid_m1, param(Type::kS32, offsetof(P, seqlen), "seqlen"), row0);
  b.sub(valid_m1, valid_m1, imm(1));
  const Reg two_col = b.temp(Type::kS32, "two_col");
  b.shl(two_col, quad_col, imm(1));
  for (int r = 0; r < 2; ++r) {
    b.min(diag_limit[size_t(r)], tile_row[size_t(r)], valid_m1);
    b.sub(diag_limit[size_t(r)], diag_limit[size_t(r)], two_col);
  }
}

}  // namespace zyfa::asmgen::fp8ms
