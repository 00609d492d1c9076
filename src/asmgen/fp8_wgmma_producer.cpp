// The producer warpgroup: TMA copies of Q, K and V (thread 0), and the transposition of every V block into
// V^T by all four warps (fp8_vt_transpose.hpp); or, in the vt_prepass variants, TMA copies of Q, K and the
// V^T that the call wrote into its workspace, by thread 0 alone.
#include <vector>

#include "asmgen/fp8_recurrence.hpp"
#include "asmgen/fp8_wgmma_emitter.hpp"

namespace zyfa::asmgen::fp8w {

void WgmmaEmitter::producer_setup() {
  issuer = b.reg(Type::kPred, "issuer");
  b.setp(issuer, Cmp::kEq, Type::kS32, tid, imm(0));
  // The vt_prepass variants transpose nothing: no ring or lanes for it (registers never read).
  const bool transposes = !variant.vt_prepass;
  issue_ring = {b.reg(Type::kU32, "issue_stage"), b.reg(Type::kU32, "issue_phase")};
  std::vector<Reg> zeroed = {issue_ring.index, issue_ring.phase};
  if (transposes) {
    transpose_ring = {b.reg(Type::kU32, "transpose_stage"), b.reg(Type::kU32, "transpose_phase")};
    zeroed.insert(zeroed.end(), {transpose_ring.index, transpose_ring.phase});
  }
  producer_q_phase = b.reg(Type::kU32, "q_phase");
  zeroed.push_back(producer_q_phase);
  for (Reg r : zeroed) b.mov(r, imm(0));
  if (transposes) vt_lanes = emit_vt_transpose_setup(b, lane, warp);
}

void WgmmaEmitter::issue_q() {
  const Reg parity = b.temp(Type::kU32, "q_empty_parity");
  b.xor_(parity, producer_q_phase, imm(1));
  b.mbar_wait(barrier(kQEmpty), parity);
  const Reg full = barrier(kQFull);
  b.mbar_arrive_expect_tx(full, layout.q_bytes);
  const Reg row0 = tile_row0("q_row0");
  for (int cb = 0; cb < layout.qk_blocks; ++cb) {
    const Reg dst = b.temp(Type::kU32, "q_dst");
    b.add(dst, smem, imm(layout.q + cb * layout.tile_rows * layout.qk_block_bytes));
    b.tma_load_4d(dst, tensor_map(offsetof(Fp8AttentionParams, q_map)), {imm(cb * layout.qk_block_bytes), row0, head, batch}, full, imm(int64_t(kEvictFirst)));
  }
}

void WgmmaEmitter::issue_kv(Reg block) {
  const Reg key0 = b.temp(Type::kS32, "key0");
  emit_block_key0(b, key0, block);
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
  if (variant.vt_prepass) {
    issue_vt(key0, parity);
    return;
  }
  b.mbar_wait(barrier(kVEmpty, issue_ring.index), parity);
  const Reg v_full = barrier(kVFull, issue_ring.index);
  b.mbar_arrive_expect_tx(v_full, layout.v_bytes);
  const Reg v_dst = b.temp(Type::kU32, "v_dst");
  b.mad_lo(v_dst, issue_ring.index, imm(layout.v_bytes), smem);
  b.add(v_dst, v_dst, imm(layout.v));
  b.tma_load_4d(v_dst, tensor_map(offsetof(Fp8AttentionParams, v_map)), {imm(0), key0, kv_head, batch}, v_full, imm(int64_t(kEvictLast)));
}

// V^T_kb from the workspace (one row per dimension of padded keys, src/kernels/fp8_vt_layout.h) into the
// first kDv rows of the V^T buffer; its rows of ones stay. In a variant that overlaps the pre-pass
// (Variant::overlaps_prepass) the pre-pass may still be running: V^T is the one input that waits for it, so
// Q's and K's first copies do not. Once the pre-pass has completed the wait returns at once.
void WgmmaEmitter::issue_vt(Reg key0, Reg empty_parity) {
  if (variant.overlaps_prepass) b.grid_dependency_wait();
  b.mbar_wait(barrier(kVtEmpty, issue_ring.index), empty_parity);
  const Reg vt_full = barrier(kVtFull, issue_ring.index);
  b.mbar_arrive_expect_tx(vt_full, kDv * kVRowBytes);
  const Reg vt_dst = b.temp(Type::kU32, "vt_dst");
  b.mad_lo(vt_dst, issue_ring.index, imm(layout.vt_bytes), smem);
  b.add(vt_dst, vt_dst, imm(layout.vt));
  b.tma_load_4d(vt_dst, tensor_map(offsetof(Fp8AttentionParams, v_map)), {key0, imm(0), kv_head, batch}, vt_full,
                imm(int64_t(kEvictLast)));
}

// Warp 0 of the vt_prepass variants (thread 0 issues): every block's K and V^T in order, as the consumers
// free buffers.
void WgmmaEmitter::issue_tile_copies() {
  if_(issuer, false, [&] { issue_q(); });
  b.xor_(producer_q_phase, producer_q_phase, imm(1));
  const Reg kb = b.temp(Type::kS32, "producer_kb");
  b.mov(kb, imm(0));
  const int loop = b.new_label("PRODUCER_KEYS");
  b.place(loop);
  if_(issuer, false, [&] { issue_kv(kb); });
  advance(issue_ring);
  b.add(kb, kb, imm(1));
  b.bra_if(Cmp::kLe, Type::kS32, kb, producer_last_block, loop, "again");
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
  emit_vt_transpose_block(b, vt_lanes, v_buf, vt_buf);
  b.fence_proxy_async();  // the consumers' wgmma reads V^T through the async proxy
  b.mbar_arrive(barrier(kVEmpty, x.index));
  b.mbar_arrive(barrier(kVtFull, x.index));
  advance(transpose_ring);
}

void WgmmaEmitter::producer_tile() {
  if (layout.tile_rows != nx::kKeyBlock) {
    const Reg last_row = b.temp(Type::kS32, "tile_last_row");
    b.add(last_row, tile_row0(), imm(layout.tile_rows - 1));
    b.mov(producer_last_block, last_key_block(last_row));
  }
  if (variant.vt_prepass) {
    issue_tile_copies();
    return;
  }
  if_(issuer, false, [&] {
    issue_q();
    const Reg first = b.temp(Type::kS32, "first_block");
    b.mov(first, imm(0));
    issue_kv(first);
  });
  b.xor_(producer_q_phase, producer_q_phase, imm(1));
  advance(issue_ring);
  const Reg kb = b.temp(Type::kS32, "producer_kb");
  b.mov(kb, imm(0));
  const int loop = b.new_label("PRODUCER_KEYS");
  b.place(loop);
  const Reg more = b.temp(Type::kPred, "more_blocks");
  b.setp(more, Cmp::kLt, Type::kS32, kb, producer_last_block);
  if_(more, false, [&] {
    if_(issuer, false, [&] {
      const Reg next = b.temp(Type::kS32, "next_block");
      b.add(next, kb, imm(1));
      issue_kv(next);
    });
    advance(issue_ring);
  });
  transpose_v();
  b.add(kb, kb, imm(1));
  b.bra_if(Cmp::kLe, Type::kS32, kb, producer_last_block, loop, "again");
}

}  // namespace zyfa::asmgen::fp8w
