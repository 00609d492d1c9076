// The Hopper schedule of the FP8 kernel, read top to bottom:
//
//   every thread:     ids; the shared base rounded up to a swizzle atom; thread 0 initializes the
//                     mbarriers; the producer writes V^T's rows of ones; CTA barrier
//   producer (warpgroup 0, setmaxnreg.dec):
//     per query tile: Q by TMA; K and V of block 0 by TMA
//       per key block kb: K and V of block kb + 1 by TMA (thread 0, one block ahead), then the four warps
//                         transpose V_kb into V^T_kb; or, where the call wrote V^T into its workspace first
//                         (vt_prepass), thread 0 alone copies K_kb and V^T_kb by TMA
//   consumers (warpgroups 1 and 2, setmaxnreg.inc), per query tile (with three consumers, warpgroups 1-3 each
//   run P V, its fold, S and the softmax one after the other, and a consumer whose rows end a key block before
//   the tile's last only waits for and hands back that block's buffers):
//       block 0:      S_0 = Q K_0^T; softmax; P_0 codes
//       block kb > 0: S_kb = Q K_kb^T and O += P_{kb-1} V^T_{kb-1} issued together in this warpgroup's turn;
//                     softmax of S_kb (the diagonal block masked) while P V runs; O rescaled when the
//                     block's unit changed; P_kb codes
//       then:         O += P_last V^T_last; out = bf16(O / rowsum * v_descale), lse
#include "asmgen/fp8_attention.hpp"

#include <algorithm>
#include <stdexcept>

#include "asmgen/fp8_job_loop.hpp"
#include "asmgen/fp8_recurrence.hpp"
#include "asmgen/fp8_wgmma_emitter.hpp"

namespace zyfa::asmgen {
namespace fp8w {

SharedLayout shared_layout(const Variant &v) {
  SharedLayout L;
  L.d_qk = v.d_qk;
  L.qk_block_bytes = fp8_qk_block_bytes(v.d_qk);
  L.qk_blocks = v.d_qk / L.qk_block_bytes;
  L.qk_steps = v.d_qk / kMmaK;
  L.tile_rows = query_tile_rows(v);
  L.q_bytes = L.tile_rows * v.d_qk;
  L.k_bytes = nx::kKeyBlock * v.d_qk;
  L.v_bytes = v.vt_prepass ? 0 : nx::kKeyBlock * kVRowBytes;  // V as TMA lands it, for the transposition
  L.vt_bytes = kPvN * kVRowBytes;
  const int fixed = L.q_bytes + kMbarrierBytes * kBarrierCount + kAtomAlign;  // the base is rounded up to an atom
  const int per_stage = L.k_bytes + L.v_bytes + L.vt_bytes;
  L.stages = std::min(kMaxStages, (kMaxSharedBytes - fixed) / per_stage);
  L.q = 0;
  L.k = L.q + L.q_bytes;
  L.v = L.k + L.stages * L.k_bytes;
  L.vt = L.v + L.stages * L.v_bytes;
  L.barriers = L.vt + L.stages * L.vt_bytes;
  L.bytes = L.barriers + kMbarrierBytes * kBarrierCount + kAtomAlign;
  return L;
}

WgmmaEmitter::WgmmaEmitter(Program &program, const Variant &v)
    : b(program), variant(v), layout(shared_layout(v)), consumer_warps(v.consumers * kWarpsPerWarpgroup) {
  if (v.d_qk % fp8_qk_block_bytes(v.d_qk) != 0 || v.d_v != kDv) throw std::logic_error("fp8 wgmma: unsupported head dims");
  if (v.consumers != kPairedConsumers && v.consumers != kSerialConsumers)
    throw std::logic_error("fp8 wgmma: two or three consumer warpgroups");
  // Three consumers fit the register file only with the copying producer's budget, and split P's second set
  // of codes would not fit theirs.
  if (v.consumers == kSerialConsumers && (!v.vt_prepass || v.split_p))
    throw std::logic_error("fp8 wgmma: three consumers need the V^T workspace and one P rounding");
  // The producer's thread 0 waits for the buffer of block kb + 1 before its warp transposes block kb: with
  // one stage that buffer is block kb's, and the CTA would deadlock.
  if (layout.stages < 2) throw std::logic_error("fp8 wgmma: shared memory holds fewer than two stages");
  if (layout.q_bytes % kAtomAlign || layout.k_bytes % kAtomAlign || layout.v_bytes % kAtomAlign ||
      layout.vt_bytes % kAtomAlign)
    throw std::logic_error("fp8 wgmma: every buffer must start on a swizzle atom");
  tid = b.reg(Type::kS32, "thread");
  warpgroup = b.reg(Type::kS32, "warpgroup");
  warp = b.reg(Type::kS32, "warp");
  lane = b.reg(Type::kS32, "lane");
  smem = b.reg(Type::kU32, "smem");
  p_true = b.reg(Type::kPred, "always");
  p_false = b.reg(Type::kPred, "never");
  job_index = b.reg(Type::kS32, "job_index");
  tile_next = b.reg(Type::kS32, "tile_next");
  // The tile's coordinates are the job's registers themselves (registers are what bounds the producer).
  batch = b.reg(Type::kS32, "batch");
  head = b.reg(Type::kS32, "head");
  tile = b.reg(Type::kS32, "tile");
  kv_head = b.reg(Type::kS32, "kv_head");
  const bool one_block_tiles = layout.tile_rows == nx::kKeyBlock;
  producer_last_block = one_block_tiles ? tile : b.reg(Type::kS32, "producer_last_block");
  last_block = one_block_tiles ? tile : b.reg(Type::kS32, "last_block");
}

Reg WgmmaEmitter::tile_row0(const char *name) {
  const Reg row0 = b.temp(Type::kS32, name);
  emit_tile_row0(b, row0, tile, layout.tile_rows, reads_tile_shift(variant));
  return row0;
}

Reg WgmmaEmitter::last_key_block(Reg last_row) {
  const Reg last = b.temp(Type::kS32, "last_key_block");
  const Reg seq_last = b.temp(Type::kS32, "seq_last_key");
  b.sub(seq_last, param(Type::kS32, offsetof(Fp8AttentionParams, seqlen), "seqlen"), imm(1));
  b.min(last, last_row, seq_last);
  emit_key_block(b, last, last);
  return last;
}

Reg WgmmaEmitter::param(Type type, size_t offset, const char *name) { return load_param(b, type, offset, name); }

Reg WgmmaEmitter::tensor_map(size_t field) {
  const Reg addr = b.temp(Type::kU64, "tensor_map");
  b.param_address(addr, int(field));
  return addr;
}

Reg WgmmaEmitter::barrier(int which, Reg stage) {
  const Reg addr = b.temp(Type::kU32, "mbar");
  if (stage.valid()) {
    b.mad_lo(addr, stage, imm(kMbarrierBytes), smem);
    b.add(addr, addr, imm(layout.barriers + kMbarrierBytes * which));
  } else {
    b.add(addr, smem, imm(layout.barriers + kMbarrierBytes * which));
  }
  return addr;
}
Reg WgmmaEmitter::barrier(int which) { return barrier(which, Reg{}); }

void WgmmaEmitter::advance(Ring &r) {
  b.add(r.index, r.index, imm(1));
  const Reg wrap = b.temp(Type::kPred, "ring_wrap");
  b.setp(wrap, Cmp::kEq, Type::kU32, r.index, imm(layout.stages));
  auto g = b.when(wrap);
  b.mov(r.index, imm(0));
  b.xor_(r.phase, r.phase, imm(1));
}

void WgmmaEmitter::if_(Reg pred, bool negated, const std::function<void()> &body) {
  const int skip = b.new_label("SKIP");
  {
    auto g = negated ? b.when(pred) : b.unless(pred);
    b.bra(skip);
  }
  body();
  b.place(skip);
}

void WgmmaEmitter::kernel_setup() {
  using P = Fp8AttentionParams;
  const Reg tid_u = b.temp(Type::kU32, "tid_u");
  b.read_special(tid_u, Special::kTidX);
  b.mov(tid, tid_u);
  b.shr(warpgroup, tid, imm(kWarpgroupShift));
  b.shr(warp, tid, imm(kWarpShift));
  b.and_(warp, warp, imm(kWarpsPerWarpgroup - 1));
  b.and_(lane, tid, imm(kWarpSize - 1));
  // Constants ptxas can see through: a wgmma's scale-d then becomes PT or !PT, not a VOTEU per product.
  const Reg zero = b.temp(Type::kS32, "zero");
  b.mov(zero, imm(0));
  b.setp(p_true, Cmp::kEq, Type::kS32, zero, imm(0));
  b.setp(p_false, Cmp::kNe, Type::kS32, zero, imm(0));
  const Reg raw = b.temp(Type::kU32, "smem_raw");
  b.read_special(raw, Special::kSmemBase);
  b.add(smem, raw, imm(kAtomAlign - 1));
  b.and_(smem, smem, imm(~int64_t(kAtomAlign - 1) & 0xffffffff));

  const Reg first = b.temp(Type::kPred, "thread0");
  b.setp(first, Cmp::kEq, Type::kS32, tid, imm(0));
  if_(first, false, [&] {
    for (size_t field : {offsetof(P, q_map), offsetof(P, k_map), offsetof(P, v_map)}) b.prefetch_tensormap(tensor_map(field));
    b.mbar_init(barrier(kQFull), 1);
    b.mbar_init(barrier(kQEmpty), consumer_warps);
    for (int st = 0; st < layout.stages; ++st) {
      b.mbar_init(barrier(kKFull + st), 1);
      b.mbar_init(barrier(kKEmpty + st), consumer_warps);
      if (variant.vt_prepass) {
        b.mbar_init(barrier(kVtFull + st), 1);  // the issuer's expect-tx; TMA completes it
      } else {
        b.mbar_init(barrier(kVFull + st), 1);
        b.mbar_init(barrier(kVEmpty + st), kWarpgroupThreads);
        b.mbar_init(barrier(kVtFull + st), kWarpgroupThreads);  // every transposing thread
      }
      b.mbar_init(barrier(kVtEmpty + st), consumer_warps);
    }
    b.fence_mbarrier_init();
  });
  // V^T's rows of ones (never overwritten): each producer thread writes 16 bytes of every buffer's 8 rows.
  const Reg producer = b.temp(Type::kPred, "is_producer");
  b.setp(producer, Cmp::kEq, Type::kS32, warpgroup, imm(0));
  if_(producer, false, [&] {
    static_assert(kOnesRows * kVRowBytes == kWarpgroupThreads * 8, "8 bytes per thread per buffer");
    const Reg addr = b.temp(Type::kU32, "ones_addr");
    b.mad_lo(addr, tid, imm(8), smem);
    const Reg ones = b.temp(Type::kB32, "e4m3_ones");
    b.mov(ones, imm(kE4m3OneX4));
    for (int st = 0; st < layout.stages; ++st)
      b.st_shared(Type::kB32, addr, layout.vt + st * layout.vt_bytes + kDv * kVRowBytes, {ones, ones});
    b.fence_proxy_async();  // wgmma reads them through the async proxy
  });
  b.bar_sync(0);
}

void WgmmaEmitter::for_each_tile(const std::function<void()> &tile_body) {
  emit_job_loop(b, {job_index, batch, head, tile, tile_next, kv_head}, tile_body);
}

}  // namespace fp8w

Program build_fp8_wgmma_attention(const Variant &v) {
  using fp8w::WgmmaEmitter;
  Program prog = fp8_attention_program(v, fp8w::threads(v.consumers), fp8w::shared_layout(v).bytes);
  WgmmaEmitter e(prog, v);
  Builder &b = e.b;

  e.kernel_setup();
  const Reg is_producer = b.temp(Type::kPred, "is_producer");
  b.setp(is_producer, Cmp::kEq, Type::kS32, e.warpgroup, imm(0));
  const int consumers = b.new_label("CONSUMERS");
  {
    auto g = b.unless(is_producer);
    b.bra(consumers);
  }
  const fp8w::RegisterBudget budget = fp8w::register_budget(v.vt_prepass, v.d_qk, v.consumers);
  b.setmaxnreg(/*grow=*/false, budget.producer);
  e.producer_setup();
  if (v.vt_prepass) {  // only thread 0 has work, the copies: warps 1-3 leave (whole warps exit together)
    const Reg idle = b.temp(Type::kPred, "idle_warp");
    b.setp(idle, Cmp::kNe, Type::kS32, e.warp, imm(0));
    e.if_(idle, false, [&] { b.exit(); });
  }
  e.for_each_tile([&] { e.producer_tile(); });
  b.exit();

  b.place(consumers);
  b.setmaxnreg(/*grow=*/true, budget.consumer);
  e.consumer_setup();
  e.for_each_tile([&] { e.consumer_tile(); });
  b.exit();
  return prog;
}

}  // namespace zyfa::asmgen
