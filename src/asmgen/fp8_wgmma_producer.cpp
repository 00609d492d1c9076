// The producer warpgroup: TMA copies of Q, K and V (thread 0), and the transposition of every V block into
// V^T by all four warps.
//
// The transposition. An e4m3 wgmma takes B K-major only, so P V needs V^T: for each output column
// (dimension) the 128 keys of the block contiguous. P arrives in the registers of the S accumulator,
// whose thread t of a quad holds keys {2t, 2t+1, 8+2t, 9+2t} of every 16; the A operand of a k32 step
// expects keys {4t .. 4t+3} of every 16 in one register. Rather than move bytes between threads, V^T
// stores its keys in that order: logical position 4t + j of each 16 holds key 8 (j / 2) + 2t + j % 2.
// ldmatrix.trans of V (as pairs of dimensions) hands thread (j = lane / 4, t = lane % 4) the bytes
// {V[2t][2j], V[2t][2j+1], V[2t+1][2j], V[2t+1][2j+1]} of an 8-key block; two such blocks (keys +0 and
// +8) give, by one PRMT each, the four bytes of V^T rows 2j and 2j + 1 at logical positions 4t .. 4t+3.
#include "asmgen/fp8_wgmma_emitter.hpp"

namespace zyfa::asmgen::fp8w {
namespace {

// PRMT selectors over (a = keys +0..7 block, b = keys +8..15 block): even and odd dimension of the pair.
constexpr int kEvenDims = 0x6420;
constexpr int kOddDims = 0x7531;
constexpr int kKeysPerWarp = nx::kKeyBlock / kWarpsPerWarpgroup;  // 32: two groups of 16
constexpr int kColumnPairs = kDv / 32;                           // ldmatrix.x4 covers 32 dimensions
constexpr int kKeyGroupBytes = 16 * kVRowBytes;                  // 16 keys of V

}  // namespace

void WgmmaEmitter::producer_setup() {
  issuer = b.reg(Type::kPred, "issuer");
  b.setp(issuer, Cmp::kEq, Type::kS32, tid, imm(0));
  issue_ring = {b.reg(Type::kU32, "issue_stage"), b.reg(Type::kU32, "issue_phase")};
  transpose_ring = {b.reg(Type::kU32, "transpose_stage"), b.reg(Type::kU32, "transpose_phase")};
  producer_q_phase = b.reg(Type::kU32, "q_phase");
  for (Reg r : {issue_ring.index, issue_ring.phase, transpose_ring.index, transpose_ring.phase, producer_q_phase})
    b.mov(r, imm(0));

  // ldmatrix.x4: lane l gives row l % 8 of matrix l / 8; matrices (keys +0..7, +8..15) x (16 dims, next 16).
  const Reg r8 = b.temp(Type::kU32, "lane_mod8");
  b.and_(r8, lane, imm(7));
  const Reg key = b.temp(Type::kU32, "ld_key");  // key within the block: 32 warp + 8 ((lane / 8) % 2) + lane % 8
  b.shr(key, lane, imm(3));
  b.and_(key, key, imm(1));
  b.shl(key, key, imm(3));
  b.add(key, key, r8);
  b.mad_lo(key, warp, imm(kKeysPerWarp), key);
  const Reg hi = b.temp(Type::kU32, "ld_chunk_hi");  // lane / 16: the second 16 dimensions
  b.shr(hi, lane, imm(4));
  for (int cp = 0; cp < kColumnPairs; ++cp) {
    v_load_offset[size_t(cp)] = b.reg(Type::kU32, indexed("v_load_offset", cp));
    const Reg chunk = b.temp(Type::kU32, "ld_chunk");  // 16-byte chunk (2 cp + hi), swizzled by key % 8
    b.add(chunk, hi, imm(2 * cp));
    b.xor_(chunk, chunk, r8);
    b.shl(chunk, chunk, imm(4));
    b.mad_lo(v_load_offset[size_t(cp)], key, imm(kVRowBytes), chunk);
  }
  // Stores: thread (j, t) writes the word at logical keys 4t.. of V^T row 32 cp + 16 half + 2 j + parity, in
  // key group 2 warp + g of the block; 128-byte swizzle: chunk (2 warp + g) ^ (row % 8).
  const Reg j = b.temp(Type::kU32, "st_j");
  b.shr(j, lane, imm(2));
  const Reg t4 = b.temp(Type::kU32, "st_t4");
  b.and_(t4, lane, imm(3));
  b.shl(t4, t4, imm(2));
  for (int g = 0; g < 2; ++g)
    for (int parity = 0; parity < 2; ++parity) {
      const Reg off = b.reg(Type::kU32, indexed("vt_store_offset", g, parity));
      vt_store_offset[size_t(2 * g + parity)] = off;
      const Reg row = b.temp(Type::kU32, "st_row");
      b.shl(row, j, imm(1));
      b.add(row, row, imm(parity));
      const Reg sw = b.temp(Type::kU32, "st_swizzle");
      b.and_(sw, row, imm(kSwizzleGroupRows - 1));
      const Reg group = b.temp(Type::kU32, "st_group");
      b.shl(group, warp, imm(1));
      b.add(group, group, imm(g));
      b.xor_(sw, sw, group);
      b.shl(sw, sw, imm(4));
      b.mad_lo(off, row, imm(kVRowBytes), sw);
      b.add(off, off, t4);
    }
}

void WgmmaEmitter::issue_q() {
  const Reg parity = b.temp(Type::kU32, "q_empty_parity");
  b.xor_(parity, producer_q_phase, imm(1));
  b.mbar_wait(barrier(kQEmpty), parity);
  const Reg full = barrier(kQFull);
  b.mbar_arrive_expect_tx(full, layout.q_bytes);
  const Reg row0 = b.temp(Type::kS32, "q_row0");
  b.shl(row0, tile, imm(7));
  static_assert(nx::kQueryTile == 1 << 7, "row0 = tile << 7");
  for (int cb = 0; cb < layout.qk_blocks; ++cb) {
    const Reg dst = b.temp(Type::kU32, "q_dst");
    b.add(dst, smem, imm(layout.q + cb * nx::kQueryTile * layout.qk_block_bytes));
    b.tma_load_4d(dst, tensor_map(offsetof(Fp8AttentionParams, q_map)), {imm(cb * layout.qk_block_bytes), row0, head, batch}, full, imm(int64_t(kEvictFirst)));
  }
}

void WgmmaEmitter::issue_kv(Reg key0) {
  const Reg parity = b.temp(Type::kU32, "empty_parity");
  b.xor_(parity, issue_ring.phase, imm(1));
  b.mbar_wait(barrier(kKEmpty, issue_ring.index), parity);
  const Reg k_full = barrier(kKFull, issue_ring.index);
  b.mbar_arrive_expect_tx(k_full, layout.k_bytes);
  const Reg k_dst = b.temp(Type::kU32, "k_dst");
  b.mad_lo(k_dst, issue_ring.index, imm(layout.k_bytes), smem);
  for (int cb = 0; cb < layout.qk_blocks; ++cb) {
    const Reg dst = b.temp(Type::kU32, "k_dst_block");
    b.add(dst, k_dst, imm(layout.k + cb * nx::kKeyBlock * layout.qk_block_bytes));
    b.tma_load_4d(dst, tensor_map(offsetof(Fp8AttentionParams, k_map)), {imm(cb * layout.qk_block_bytes), key0, kv_head, batch}, k_full, imm(int64_t(kEvictLast)));
  }
  b.mbar_wait(barrier(kVEmpty, issue_ring.index), parity);
  const Reg v_full = barrier(kVFull, issue_ring.index);
  b.mbar_arrive_expect_tx(v_full, layout.v_bytes);
  const Reg v_dst = b.temp(Type::kU32, "v_dst");
  b.mad_lo(v_dst, issue_ring.index, imm(layout.v_bytes), smem);
  b.add(v_dst, v_dst, imm(layout.v));
  b.tma_load_4d(v_dst, tensor_map(offsetof(Fp8AttentionParams, v_map)), {imm(0), key0, kv_head, batch}, v_full, imm(int64_t(kEvictLast)));
}

void WgmmaEmitter::transpose_v() {
  const Ring &x = transpose_ring;
  b.mbar_wait(barrier(kVFull, x.index), x.phase);
  const Reg parity = b.temp(Type::kU32, "vt_empty_parity");
  b.xor_(parity, x.phase, imm(1));
  b.mbar_wait(barrier(kVtEmpty, x.index), parity);
  const Reg v_buf = b.temp(Type::kU32, "v_buf");
  b.mad_lo(v_buf, x.index, imm(layout.v_bytes), smem);
  b.add(v_buf, v_buf, imm(layout.v));
  const Reg vt_buf = b.temp(Type::kU32, "vt_buf");
  b.mad_lo(vt_buf, x.index, imm(layout.vt_bytes), smem);
  b.add(vt_buf, vt_buf, imm(layout.vt));
  for (int g = 0; g < 2; ++g)
    for (int cp = 0; cp < kColumnPairs; ++cp) {
      const Reg ld = b.temp(Type::kU32, "v_ld_addr");
      b.add(ld, v_buf, v_load_offset[size_t(cp)]);
      std::array<Reg, 4> mat;
      for (Reg &r : mat) r = b.temp(Type::kB32, "v_pairs");
      b.ldmatrix_x4(mat, ld, g * kKeyGroupBytes, /*transpose=*/true);
      for (int half = 0; half < 2; ++half)  // dimensions 32 cp + 16 half + (2 j, 2 j + 1)
        for (int odd = 0; odd < 2; ++odd) {
          const Reg word = b.temp(Type::kB32, "vt_word");
          b.prmt(word, mat[size_t(2 * half)], mat[size_t(2 * half + 1)], imm(odd ? kOddDims : kEvenDims));
          const Reg st = b.temp(Type::kU32, "vt_st_addr");
          b.add(st, vt_buf, vt_store_offset[size_t(2 * g + odd)]);
          b.st_shared(Type::kB32, st, (32 * cp + 16 * half) * kVRowBytes, {word});
        }
    }
  b.fence_proxy_async();  // the consumers' wgmma reads V^T through the async proxy
  b.mbar_arrive(barrier(kVEmpty, x.index));
  b.mbar_arrive(barrier(kVtFull, x.index));
  advance(transpose_ring);
}

void WgmmaEmitter::producer_tile() {
  if_(issuer, false, [&] {
    issue_q();
    const Reg zero = b.temp(Type::kS32, "key0");
    b.mov(zero, imm(0));
    issue_kv(zero);
  });
  b.xor_(producer_q_phase, producer_q_phase, imm(1));
  advance(issue_ring);
  const Reg kb = b.temp(Type::kS32, "producer_kb");
  b.mov(kb, imm(0));
  const int loop = b.new_label("PRODUCER_KEYS");
  b.place(loop);
  const Reg more = b.temp(Type::kPred, "more_blocks");
  b.setp(more, Cmp::kLt, Type::kS32, kb, tile);
  if_(more, false, [&] {
    if_(issuer, false, [&] {
      const Reg key0 = b.temp(Type::kS32, "next_key0");
      b.add(key0, kb, imm(1));
      b.shl(key0, key0, imm(7));
      static_assert(nx::kKeyBlock == 1 << 7, "key0 = block << 7");
      issue_kv(key0);
    });
    advance(issue_ring);
  });
  transpose_v();
  b.add(kb, kb, imm(1));
  b.bra_if(Cmp::kLe, Type::kS32, kb, tile, loop, "again");
}

}  // namespace zyfa::asmgen::fp8w
