// The kernel's schedule, read top to bottom:
//
//   per thread once:     lane addresses for ldmatrix and the V transposition
//   job loop:            CTA x takes jobs x, x + grid, ... of the plan's table (persistent grid)
//     per query tile:    heads, base addresses, descales; O, m, l reset; cp.async of Q and key block 0
//       key loop (kb = 0 .. tile), the steady state:
//         wait for block kb's copies; barrier; widen Q (kb = 0) and K, V to f16 rows; barrier
//         cp.async of block kb + 1 (unless kb is the diagonal block): in flight during the rest
//         S = Q K^T (mma.sync, e4m3 values as f16)
//         diagonal block only: causal and seqlen mask
//         block max, lazy rescale, per-block scale, P codes (lean or exact)
//         per half of the output columns: acc = P V (and rowsum = P 1) in fresh accumulators, then
//           O = O + unscale acc, l = l + unscale rowsum
//       epilogue: out = bf16(O * ((1 / l) * v_descale)), lse
//
// The mma.sync schedule: register-level mma.sync, cp.async staging, no warp specialization, any strides.
// The Hopper schedule (TMA, wgmma, warp specialization) is fp8_wgmma_schedule.cpp; the numerics are the same.
#include "asmgen/fp8_attention.hpp"

#include "asmgen/fp8_job_loop.hpp"
#include "asmgen/fp8_mma_sync_emitter.hpp"
#include "asmgen/fp8_recurrence.hpp"

namespace zyfa::asmgen {

Program build_fp8_mma_sync_attention(const Variant &v) {
  using fp8ms::MmaSyncEmitter;
  Program prog = fp8_attention_program(v, fp8ms::kThreads, fp8ms::layout_of(v).bytes);
  MmaSyncEmitter e(prog, v);
  Builder &b = e.b;

  e.thread_constants();

  // ---- the persistent job loop; per query tile: heads, base addresses, descales, O, m, l, and the copies of Q
  // and key block 0. The raw buffers are free here: the previous tile consumed them before its last block's
  // second barrier, which every warp has passed.
  const Reg job_index = b.reg(Type::kS32, "job_index");
  const Reg tile_next = b.reg(Type::kS32, "tile_next");
  const Reg key_block = b.reg(Type::kS32, "key_block");
  const int key_loop = b.new_label("KEY_LOOP");
  const int after_q = b.new_label("AFTER_Q");
  const int after_prefetch = b.new_label("AFTER_PREFETCH");
  const int after_mask = b.new_label("AFTER_MASK");
  emit_job_loop(b, {job_index, e.batch, e.head, e.tile, tile_next, e.kv_head}, [&] {
    e.tile_setup();
    e.init_row_state();
    b.mov(key_block, imm(0));
    e.issue_q();
    const Reg first_key0 = b.temp(Type::kS32, "first_key0");
    b.mov(first_key0, imm(0));
    e.issue_kv(first_key0);
    b.cp_async_commit();

    // ---- the key loop: the steady state
    b.place(key_loop);
    b.cp_async_wait(0);
    b.bar_sync(0);  // block kb has landed, and every warp is done reading block kb - 1's K and V (and Q)
    b.bra_if(Cmp::kNe, Type::kS32, key_block, imm(0), after_q, "later_block");
    e.widen_q();
    b.place(after_q);
    e.widen_kv();
    b.bar_sync(0);  // K and V (and Q) are f16 rows; the raw buffers are free again
    b.bra_if(Cmp::kGe, Type::kS32, key_block, e.tile, after_prefetch, "last_block");
    const Reg next_key0 = b.temp(Type::kS32, "next_key0");
    emit_block_key0(b, next_key0, key_block);
    b.add(next_key0, next_key0, imm(numerics::kKeyBlock));
    e.issue_kv(next_key0);  // in flight during this block's work
    b.cp_async_commit();
    b.place(after_prefetch);
    e.scores();
    b.bra_if(Cmp::kNe, Type::kS32, key_block, e.tile, after_mask, "off_diagonal");
    e.mask_diagonal();
    b.place(after_mask);
    e.block_max_and_rescale();
    e.p_codes();
    for (int half = 0; half < fp8ms::kPvHalves; ++half) {
      e.pv(half);
      e.fold(half);
    }
    b.add(key_block, key_block, imm(1));
    b.bra_if(Cmp::kLe, Type::kS32, key_block, e.tile, key_loop, "more_keys");
    e.epilogue();
  });
  b.exit();
  return prog;
}

}  // namespace zyfa::asmgen
