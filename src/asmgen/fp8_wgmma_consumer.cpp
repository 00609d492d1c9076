// A consumer warpgroup: 64 query rows of the tile, the two products on wgmma, and numerics.h's softmax
// recurrence for the thread's two rows (quad_row and quad_row + 8 of its warp's 16).
//
// Accumulator fragments (PTX ISA, wgmma m64nN f32): register 4 i + 2 h + e holds row (h ? g + 8 : g),
// column 8 i + 2 t + e, for g = lane / 4 and t = lane % 4. So S's register 4 i + 2 h + e is the score of
// key 8 i + 2 t + e; the P V accumulator's registers 64 .. 67 are its row-sum columns.
#include <cmath>

#include "asmgen/fp8_descale.hpp"
#include "asmgen/fp8_recurrence.hpp"
#include "asmgen/fp8_store_tile.hpp"
#include "asmgen/fp8_wgmma_emitter.hpp"

namespace zyfa::asmgen::fp8w {
namespace {

constexpr int reg_of(int chunk, int half, int e) { return 4 * chunk + 2 * half + e; }
// Named barrier ids 1 and 2 (0 is the CTA's): barrier 1 + w opens consumer w's turn at the tensor cores.
constexpr int kFirstTurnBarrier = 1;
constexpr int kTurnThreads = kPairedConsumers * kWarpgroupThreads;
// At d_qk = 192 the consumers issue as soon as they are ready, without turns (FA3's BF16 kernel drops its
// turns at 192 too): S takes 1.5x the tensor time of d = 128 while the softmax is the same, so the other
// warpgroup's softmax is already covered and a turn only adds a barrier wait. Measured: session 12's interleaved
// A/B (2 rounds) gave mha-d192 +3.1% at S = 16K and -0.6% at 2K; session 13's longer one gave 1.000x at 16K and
// 1.008x at 32K, inside each build's spread: neutral, kept for the barrier instructions it drops. At d = 128,
// dropping the turns of a tile's first S and last P V alone (freeturns) gained 0.2-0.4%, noise, so d = 128 keeps
// them all. Three consumers take no turns either: each warpgroup's products wait for its own softmax anyway.
bool takes_turns(const Variant &v) { return v.d_qk != kWideHeadDimQK && v.consumers == kPairedConsumers; }
// Three consumers run their products and softmax one after the other, S on the P V accumulator's registers.
bool serialized(const Variant &v) { return v.consumers == kSerialConsumers; }
// Shared-memory matrix descriptor fields (PTX ISA, wgmma): addresses and offsets in 16-byte units, the start
// address in bits 0-13, the leading byte offset from bit 16, the stride byte offset from bit 32 and the swizzle
// mode in bits 62-63. The interpreter decodes them on its own (interpreter.cpp), so that its tests would catch an
// encoding error here rather than share it.
constexpr uint64_t kDescUnit = 16;
constexpr int kDescUnitLog2 = 4;
static_assert(kDescUnit == 1u << kDescUnitLog2, "an address in 16-byte units is the address >> 4");
constexpr uint64_t kDescAddressMask = 0x3FFF;
constexpr int kDescLeadingShift = 16;
constexpr int kDescStrideShift = 32;
constexpr int kDescSwizzleShift = 62;
// A K-major swizzled operand ignores the leading byte offset; one unit goes there, as CUTLASS writes it.
constexpr uint64_t kUnusedLeading = 1;
// The P V k-steps (of kPvSteps, 32 keys each) whose codes' multiply-adds (lean P's y, exact P's exponent; in
// place, so no register more) run between the S wait and the P V wait, after the block max, while the
// previous block's P V still runs; the rest of the codes (exact P's exp2, the clamps and packs) follow the
// fold, with which ptxas interleaves them. fp8-turn (session 6) moved whole codes there, outlasted P V and
// lost 1.5-3%; fp8-maxfirst (session 8) moved the max alone and gained 0.4-3.5% (bench/NOTES-fp8.md).
// Measured per kind of P (session 11, interleaved A/B of 0, 2 and 4 steps): lean P gains 1.6-2.0% with 2
// and nothing with 4; exact P (d_qk = 192) gains up to 1.5% at 16K with 4 and loses 0.8% at 2K with 2 (exact P
// at d = 128, on request, takes the same count; not measured on its own). Lean P at d_qk = 192 (on request),
// whose S takes 1.5x the tensor time of d = 128's, gains with all 4 (session 18, two interleaved A/Bs against
// 2: 1.015-1.034x at gqa-d192 and mha-d192 16K and gqa-d192 4K, 0.985x at mha-d192 4K).
constexpr int kEarlyCodeStepsLeanP = 2;
constexpr int kEarlyCodeStepsLeanPWideQK = 4;
constexpr int kEarlyCodeStepsExactP = 4;
int early_code_steps(const Variant &v) {
  if (!v.lean_p) return kEarlyCodeStepsExactP;
  return v.d_qk == kWideHeadDimQK ? kEarlyCodeStepsLeanPWideQK : kEarlyCodeStepsLeanP;
}
// Of those, exact P's steps whose exp2 (in place too) is also taken there: 16 MUFU.EX2 per step, 8 cycles
// each on the quarter-rate unit, beside the FFMAs. One step measured no faster (session 11).
constexpr int kEarlyExp2Steps = 0;
static_assert(kEarlyCodeStepsLeanP <= kPvSteps && kEarlyCodeStepsLeanPWideQK <= kPvSteps &&
                  kEarlyCodeStepsExactP <= kPvSteps,
              "early steps of one block");
static_assert(kEarlyExp2Steps <= kEarlyCodeStepsExactP, "exact P's early exp2 steps are early code steps");
static_assert(kChunks == 4 * kPvSteps, "a P V k-step covers four n8 chunks of S");

}  // namespace

void WgmmaEmitter::consumer_setup() {
  // The consumer index, broadcast from lane 0: ptxas then knows it is warp-uniform, so the turn barriers'
  // ids and Q's descriptor, which derive from it, live in uniform registers (no R2UR and 64-bit vector adds
  // before every wgmma, no %tid reread before every turn).
  consumer = b.reg(Type::kS32, "consumer");
  const Reg own = b.temp(Type::kS32, "consumer_of_lane");
  b.sub(own, warpgroup, imm(1));
  b.shfl_idx(consumer, own, 0);
  if (takes_turns(variant)) {  // without turns the ids stay unset: nothing reads them
    turn_mine = b.reg(Type::kU32, "turn_mine");
    turn_other = b.reg(Type::kU32, "turn_other");
    b.add(turn_mine, consumer, imm(kFirstTurnBarrier));
    b.sub(turn_other, imm(kFirstTurnBarrier + 1), consumer);
  }
  quad_row = b.reg(Type::kS32, "quad_row");
  quad_col = b.reg(Type::kS32, "quad_col");
  b.shr(quad_row, lane, imm(2));
  b.and_(quad_col, lane, imm(3));
  for (int h = 0; h < 2; ++h) {
    tile_row[size_t(h)] = b.reg(Type::kS32, indexed("tile_row", h));
    b.mad_lo(tile_row[size_t(h)], consumer, imm(kRowsPerConsumer), quad_row);
    b.mad_lo(tile_row[size_t(h)], warp, imm(kRowsPerWarp), tile_row[size_t(h)]);
    if (h) b.add(tile_row[size_t(h)], tile_row[size_t(h)], imm(kSecondRowOffset));
  }

  // Shared-memory matrix descriptors (the fields above): the start address, the unused leading offset, the
  // stride between 8-row groups and the swizzle mode.
  auto descriptor = [&](Reg d, Reg addr, uint64_t group_stride, uint64_t swizzle) {
    const Reg a64 = b.temp(Type::kU64, "desc_addr");
    b.cvt(a64, addr, Type::kU32, Round::kNone);
    b.shr(a64, a64, imm(kDescUnitLog2));
    b.and_(a64, a64, imm(int64_t(kDescAddressMask)));
    const uint64_t fixed = (swizzle << kDescSwizzleShift) | ((group_stride / kDescUnit) << kDescStrideShift) |
                           (kUnusedLeading << kDescLeadingShift);
    b.or_(d, a64, imm(int64_t(fixed)));
  };
  q_desc = b.reg(Type::kU64, "q_desc");
  k_desc = b.reg(Type::kU64, "k_desc");
  vt_desc = b.reg(Type::kU64, "vt_desc");
  const Reg q_addr = b.temp(Type::kU32, "q_addr");
  b.mad_lo(q_addr, consumer, imm(kRowsPerConsumer * layout.qk_block_bytes), smem);
  b.add(q_addr, q_addr, imm(layout.q));
  const uint64_t qk_swizzle = layout.qk_block_bytes == 128 ? kDescSwizzle128 : kDescSwizzle64;
  descriptor(q_desc, q_addr, kSwizzleGroupRows * layout.qk_block_bytes, qk_swizzle);
  const Reg k_addr = b.temp(Type::kU32, "k_addr");
  b.add(k_addr, smem, imm(layout.k));
  descriptor(k_desc, k_addr, kSwizzleGroupRows * layout.qk_block_bytes, qk_swizzle);
  const Reg vt_addr = b.temp(Type::kU32, "vt_addr");
  b.add(vt_addr, smem, imm(layout.vt));
  descriptor(vt_desc, vt_addr, kSwizzleGroupRows * kVRowBytes, kDescSwizzle128);

  k_ring = {b.reg(Type::kU32, "k_stage"), b.reg(Type::kU32, "k_phase")};
  vt_ring = {b.reg(Type::kU32, "vt_stage"), b.reg(Type::kU32, "vt_phase")};
  consumer_q_phase = b.reg(Type::kU32, "consumer_q_phase");
  for (Reg r : {k_ring.index, k_ring.phase, vt_ring.index, vt_ring.phase, consumer_q_phase}) b.mov(r, imm(0));
  c = b.reg(Type::kF32, "c");
  lean_scale = b.reg(Type::kF32, "lean_scale");
  v_descale = b.reg(Type::kF32, "v_descale");
  for (int h = 0; h < 2; ++h) {
    m[size_t(h)] = b.reg(Type::kF32, indexed("m", h));
    l[size_t(h)] = b.reg(Type::kF32, indexed("l", h));
    unscale[size_t(h)] = b.reg(Type::kF32, indexed("unscale", h));
  }
  for (int i = 0; i < kORegs; ++i) o[size_t(i)] = b.reg(Type::kF32, indexed("o", i));
  for (int i = 0; i < kAccRegs; ++i) acc[size_t(i)] = b.reg(Type::kF32, indexed("acc", i));
  // Serialized, S is written only after the fold has read acc: it takes acc's registers (the budget of three
  // consumers holds O, acc and P, not S as well).
  for (int i = 0; i < kScoreRegs; ++i)
    s[size_t(i)] = serialized(variant) ? acc[size_t(i)] : b.reg(Type::kF32, indexed("s", i));
  for (int i = 0; i < kPRegs; ++i) pk[size_t(i)] = b.reg(Type::kB32, indexed("p", i));
  if (variant.split_p)
    for (int i = 0; i < kPRegs; ++i) pk_lo[size_t(i)] = b.reg(Type::kB32, indexed("p_lo", i));

  if (!takes_turns(variant)) return;
  // Consumer 0 takes the first turn: consumer 1 opens it (the predicate is its warpgroup's).
  const Reg second = b.temp(Type::kPred, "second_consumer");
  b.setp(second, Cmp::kEq, Type::kS32, consumer, imm(1));
  auto g = b.when_uniform(second);
  b.bar_arrive(imm(kFirstTurnBarrier), kTurnThreads);
}

// ---- the products
void WgmmaEmitter::scores(Reg k_stage) {
  const Reg k_base = b.temp(Type::kU64, "k_desc_stage");
  const Reg stage64 = b.temp(Type::kU64, "k_stage64");
  b.cvt(stage64, k_stage, Type::kU32, Round::kNone);
  b.mad_lo(k_base, stage64, imm(layout.k_bytes / int(kDescUnit)), k_desc);
  for (int kk = 0; kk < layout.qk_steps; ++kk) {
    const int steps_per_block = layout.qk_block_bytes / kMmaK;
    // Column block kk / steps_per_block of Q (tile_rows rows) and of K (a key block's rows).
    const int column = (kk % steps_per_block) * kMmaK;
    const int q_offset = (kk / steps_per_block) * layout.tile_rows * layout.qk_block_bytes + column;
    const int k_offset = (kk / steps_per_block) * nx::kKeyBlock * layout.qk_block_bytes + column;
    const Reg a = b.temp(Type::kU64, "q_desc_k");
    const Reg bd = b.temp(Type::kU64, "k_desc_k");
    b.add(a, q_desc, imm(q_offset / int(kDescUnit)));
    b.add(bd, k_base, imm(k_offset / int(kDescUnit)));
    b.wgmma_e4m3(std::vector<Reg>(s.begin(), s.end()), a, bd, kk == 0 ? p_false : p_true);
  }
}

void WgmmaEmitter::pv(Reg vt_stage) {
  const Reg vt_base = b.temp(Type::kU64, "vt_desc_stage");
  const Reg stage64 = b.temp(Type::kU64, "vt_stage64");
  b.cvt(stage64, vt_stage, Type::kU32, Round::kNone);
  b.mad_lo(vt_base, stage64, imm(layout.vt_bytes / int(kDescUnit)), vt_desc);
  // Split P: P_lo V after P_hi V, into the same accumulator (its ones rows add P_lo to the row sums).
  std::vector<const std::array<Reg, kPRegs> *> chains = {&pk};
  if (variant.split_p) chains.push_back(&pk_lo);
  std::array<Reg, kPvSteps> bd;
  for (int kk = 0; kk < kPvSteps; ++kk) {
    bd[size_t(kk)] = b.temp(Type::kU64, "vt_desc_k");
    b.add(bd[size_t(kk)], vt_base, imm(kk * kMmaK / int(kDescUnit)));
  }
  for (size_t chain = 0; chain < chains.size(); ++chain)
    for (int kk = 0; kk < kPvSteps; ++kk) {
      const std::array<Reg, kPRegs> &p = *chains[chain];
      const std::array<Reg, 4> a = {p[size_t(4 * kk)], p[size_t(4 * kk + 1)], p[size_t(4 * kk + 2)],
                                    p[size_t(4 * kk + 3)]};
      b.wgmma_e4m3(std::vector<Reg>(acc.begin(), acc.end()), a, bd[size_t(kk)],
                   chain == 0 && kk == 0 ? p_false : p_true);
    }
}

// One arrival per warp on a barrier that counts consumer_warps (4 per consumer) per phase.
void WgmmaEmitter::release(int which, Reg stage) {
  const Reg first_lane = b.temp(Type::kPred, "first_lane");
  b.setp(first_lane, Cmp::kEq, Type::kS32, lane, imm(0));
  const Reg addr = barrier(which, stage);
  auto g = b.when(first_lane);
  b.mbar_arrive(addr);
}

// ---- the softmax
void WgmmaEmitter::mask_diagonal() {
  // Key 8 i + 2 t + e of the consumer's diagonal block survives iff it is <= the row: 8 i + e <= diag_limit =
  // row - 2 t, the row counted from the block's first key. Formed here, not per tile: the key loop has no
  // register to spare.
  std::array<Reg, 2> diag_limit;
  const Reg two_col = b.temp(Type::kS32, "two_col");
  b.shl(two_col, quad_col, imm(1));
  if (layout.tile_rows != nx::kKeyBlock) {  // the tile's first row is not the block's first key
    const Reg block_key0 = b.temp(Type::kS32, "block_key0");
    emit_block_key0(b, block_key0, last_block);
    const Reg shift = b.temp(Type::kS32, "diag_shift");
    b.sub(shift, tile_row0(), block_key0);
    b.sub(two_col, two_col, shift);
  }
  for (int h = 0; h < 2; ++h) {
    diag_limit[size_t(h)] = b.temp(Type::kS32, "diag_limit");
    b.sub(diag_limit[size_t(h)], tile_row[size_t(h)], two_col);
  }
  emit_causal_mask(b, diag_limit, kChunks, [&](int i, int h, int e) { return s[size_t(reg_of(i, h, e))]; });
}

WgmmaEmitter::BlockScale WgmmaEmitter::block_max(bool first_block) {
  BlockScale scale;
  std::vector<std::vector<Reg>> rows(2);
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < kChunks; ++i)
      for (int e = 0; e < 2; ++e) rows[size_t(h)].push_back(s[size_t(reg_of(i, h, e))]);
  const std::vector<Reg> bmax = emit_block_maxes(b, rows, c);
  for (int h = 0; h < 2; ++h) {
    scale.bmax[size_t(h)] = bmax[size_t(h)];
    // A tile's first block always takes a new reference max (m = -inf, O = 0).
    const Reg mh = m[size_t(h)];
    if (first_block) b.mov(mh, f32(-INFINITY));
    scale.need[size_t(h)] =
        emit_lazy_rescale(b, mh, scale.bmax[size_t(h)], first_block ? nullptr : &scale.alpha[size_t(h)]);
  }
  return scale;
}

// Per-block scaling (numerics.h): the codes' offset (lean P) or exponent bias (exact P) of each row.
std::array<Reg, 2> WgmmaEmitter::code_offsets(const BlockScale &scale) {
  std::array<Reg, 2> offset;
  for (int h = 0; h < 2; ++h) offset[size_t(h)] = emit_code_offset(b, scale.bmax[size_t(h)], variant.lean_p);
  return offset;
}

// The block's unscale, into the register that the previous block's fold reads: after that fold.
void WgmmaEmitter::unscales(const BlockScale &scale) {
  for (int h = 0; h < 2; ++h)
    emit_unscale(b, m[size_t(h)], scale.bmax[size_t(h)], unscale[size_t(h)], variant.lean_p);
}

// Each score register of P V's k-steps [first, last), with its row (0 or 1 of the thread's two).
void WgmmaEmitter::for_step_scores(int first, int last, const std::function<void(Reg, int)> &body) {
  for (int kk = first; kk < last; ++kk)
    for (int h = 0; h < 2; ++h)
      for (int chunk = 4 * kk; chunk < 4 * (kk + 1); ++chunk)
        for (int e = 0; e < 2; ++e) body(s[size_t(reg_of(chunk, h, e))], h);
}

// For P V's k-steps [first, last), in place on S: lean P's y (emit_lean_code) or exact P's exponent.
void WgmmaEmitter::code_exponents(int first, int last, const std::array<Reg, 2> &offset) {
  for_step_scores(first, last, [&](Reg x, int h) {
    if (variant.lean_p) emit_lean_code(b, x, x, lean_scale, offset[size_t(h)]);
    else emit_exact_exponent(b, x, x, c, offset[size_t(h)]);
  });
}

// Exact P from its exponent, in place, for P V's k-steps [first, last).
void WgmmaEmitter::exact_p_values(int first, int last) {
  for_step_scores(first, last, [&](Reg x, int) { b.ex2(x, x); });
}

// The whole block's scale and codes, into pk.
void WgmmaEmitter::block_codes(const BlockScale &scale) {
  unscales(scale);
  code_exponents(0, kPvSteps, code_offsets(scale));
  if (!variant.lean_p) exact_p_values(0, kPvSteps);
  pack_p();
}

void WgmmaEmitter::rescale_o(const BlockScale &scale) {
  const auto o_element = [&](int i, int h, int e) { return o[size_t(reg_of(i, h, e))]; };
  emit_rescale_o(b, scale.need, scale.alpha, kDv / 8, o_element, l, "SKIP");
}

// The whole softmax of a block, after its P V (if any) is folded: scale, codes, then O's rescale.
void WgmmaEmitter::softmax(bool first_block) {
  const BlockScale scale = block_max(first_block);
  block_codes(scale);
  if (!first_block) rescale_o(scale);  // O and l are still zero after a first block
}

// O = O + unscale acc, l = l + unscale rowsum (numerics.h): one FFMA per element.
void WgmmaEmitter::fold() {
  emit_fold(b, unscale, 0, kDv / 8, [&](int i, int h, int e) { return o[size_t(reg_of(i, h, e))]; },
            [&](int i, int h, int e) { return acc[size_t(reg_of(i, h, e))]; }, l,
            [&](int h) { return acc[size_t(kRowSumReg + 2 * h)]; });
}

// The A fragments of P V from lean P's y (code_exponents) or exact P's values (exact_p_values): step kk,
// register 2 half + h holds row h's codes of keys {8 c + 2 t, +1} for the chunks c = 4 kk + 2 half and
// 4 kk + 2 half + 1, in the key order V^T was written in (fp8_wgmma_producer.cpp).
void WgmmaEmitter::pack_p() {
  const Reg code_zero = variant.lean_p ? emit_lean_code_zero(b) : Reg{};
  for (int kk = 0; kk < kPvSteps; ++kk)
    for (int half = 0; half < 2; ++half)
      for (int h = 0; h < 2; ++h) {
        const int c0 = 4 * kk + 2 * half, c1 = c0 + 1;
        const Reg dst = pk[size_t(4 * kk + 2 * half + h)];
        if (variant.lean_p) {
          const Reg lo = b.temp(Type::kB32, "codes_lo");
          const Reg hi = b.temp(Type::kB32, "codes_hi");
          emit_lean_code_pairs(b, lo, s[size_t(reg_of(c0, h, 0))], s[size_t(reg_of(c0, h, 1))], code_zero);
          emit_lean_code_pairs(b, hi, s[size_t(reg_of(c1, h, 0))], s[size_t(reg_of(c1, h, 1))], code_zero);
          // The codes in the low byte of each half of both pairs (emit_lean_code_pairs), in key order.
          b.prmt(dst, lo, hi, imm(prmt_selector(0, 2, 4, 6)));
        } else {
          const std::array<Reg, 2> codes = {b.temp(Type::kB16, "codes_lo"), b.temp(Type::kB16, "codes_hi")};
          std::array<Reg, 2> residual_codes;
          for (int i = 0; i < 2; ++i) {
            const Reg p0 = s[size_t(reg_of(c0 + i, h, 0))], p1 = s[size_t(reg_of(c0 + i, h, 1))];
            b.cvt_e4m3x2(codes[size_t(i)], p1, p0);
            if (variant.split_p) residual_codes[size_t(i)] = split_p_lo(p1, p0, codes[size_t(i)]);
          }
          b.pack16x2(dst, codes[0], codes[1]);
          if (variant.split_p) b.pack16x2(pk_lo[size_t(4 * kk + 2 * half + h)], residual_codes[0], residual_codes[1]);
        }
      }
}

// Split P's low codes of a pair (numerics::fp8_split_p_lo): e4m3(f16(p) - hi) on f16x2, from the pair's
// exact P values and their codes hi.
Reg WgmmaEmitter::split_p_lo(Reg p1, Reg p0, Reg hi) {
  const Reg p16 = b.temp(Type::kB32, "p_f16x2");
  const Reg hi16 = b.temp(Type::kB32, "p_hi_f16x2");
  const Reg residual = b.temp(Type::kB32, "p_residual");
  const Reg lo = b.temp(Type::kB16, "codes_residual");
  b.cvt_f16x2_f32(p16, p1, p0);
  b.cvt_f16x2_e4m3x2(hi16, hi);
  b.sub_f16x2(residual, p16, hi16);
  b.cvt_e4m3x2_f16x2(lo, residual);
  return lo;
}

// ---- one query tile
void WgmmaEmitter::consumer_tile() {
  const bool spans_blocks = layout.tile_rows != nx::kKeyBlock;
  if (spans_blocks) {
    const Reg first_row = b.temp(Type::kS32, "consumer_first_row");
    b.mad_lo(first_row, consumer, imm(kRowsPerConsumer), tile_row0());
    // This consumer's last block: its last row's. A consumer whose rows all lie outside the sequence (before
    // row 0, in a tile 0 that overhangs it: fp8_query_tile_shift) stops after block 0 and only hands the rest
    // back below. Its rows are negative or past seqlen alike in one unsigned compare.
    const Reg last_row = b.temp(Type::kS32, "consumer_last_row");
    b.add(last_row, first_row, imm(kRowsPerConsumer - 1));
    const Reg idle = b.temp(Type::kPred, "rows_outside_seqlen");
    b.setp(idle, Cmp::kGe, Type::kU32, first_row, param(Type::kS32, offsetof(Fp8AttentionParams, seqlen), "seqlen"));
    b.selp(last_block, imm(0), last_key_block(last_row), idle);
  }
  emit_score_constants(b, batch, kv_head, c, lean_scale, v_descale);
  for (Reg r : o) b.mov(r, f32(0.0f));
  for (Reg r : l) b.mov(r, f32(0.0f));

  b.mbar_wait(barrier(kQFull), consumer_q_phase);
  b.xor_(consumer_q_phase, consumer_q_phase, imm(1));
  const bool turns = takes_turns(variant);
  auto wait_turn = [&] {
    if (turns) b.bar_sync_count(turn_mine, kTurnThreads);
  };
  auto pass_turn = [&] {
    if (turns) b.bar_arrive(turn_other, kTurnThreads);
  };
  auto issue_scores = [&] {
    b.mbar_wait(barrier(kKFull, k_ring.index), k_ring.phase);
    b.wgmma_fence();
    scores(k_ring.index);
    b.wgmma_commit();
  };
  auto issue_pv = [&] {
    b.mbar_wait(barrier(kVtFull, vt_ring.index), vt_ring.phase);
    b.wgmma_fence();  // P's registers are read by this product: order their writes before it
    pv(vt_ring.index);
    b.wgmma_commit();
  };
  auto scores_done = [&] {
    release(kKEmpty, k_ring.index);
    advance(k_ring);
  };
  auto pv_done = [&] {
    release(kVtEmpty, vt_ring.index);
    advance(vt_ring);
  };
  auto mask_if_diagonal = [&](Reg kb) {
    const Reg diagonal = b.temp(Type::kPred, "diagonal");
    b.setp(diagonal, Cmp::kEq, Type::kS32, kb, last_block);
    if_(diagonal, false, [&] {
      release(kQEmpty, Reg{});
      mask_diagonal();
    });
  };

  // Block 0: scores only.
  const Reg kb = b.temp(Type::kS32, "kb");
  b.mov(kb, imm(0));
  wait_turn();
  issue_scores();
  pass_turn();
  b.wgmma_wait(0);
  scores_done();
  mask_if_diagonal(kb);
  softmax(/*first_block=*/true);

  // Blocks 1 .. last_block: S_kb and acc = P_{kb-1} V_{kb-1} in one turn; then fold, softmax, codes.
  const int last_pv = b.new_label("LAST_PV");
  const int key_loop = b.new_label("KEY_LOOP");
  b.add(kb, kb, imm(1));
  b.bra_if(Cmp::kGt, Type::kS32, kb, last_block, last_pv, "single_block");
  b.place(key_loop);
  wait_turn();
  if (serialized(variant)) {
    // P V and its fold, then S (into acc's registers, which the fold has read) and its softmax: nothing of
    // this warpgroup's own is in flight during its softmax; the other two warpgroups' products are.
    issue_pv();
    b.wgmma_wait(0);
    pv_done();
    fold();
    issue_scores();
    b.wgmma_wait(0);
    scores_done();
    mask_if_diagonal(kb);
    softmax(/*first_block=*/false);
  } else if (variant.split_p) {
    // Split P's two chains read 32 registers of codes: with S's and the accumulator's 132 in flight too, the
    // consumer's budget spills. So P V goes first and completes (its codes die) before S is issued.
    issue_pv();
    b.wgmma_wait(0);
    issue_scores();
    pass_turn();
    b.wgmma_wait(0);
    scores_done();
    pv_done();
    // One basic block from the fold to the P codes, so that ptxas can fill the latencies of the row max
    // (a tree and two shuffles) and of the lazy-rescale arithmetic with the fold's independent FFMAs: the
    // diagonal mask goes before it and the rescale of O after it (it needs the fold, not the codes).
    mask_if_diagonal(kb);
    fold();
    softmax(/*first_block=*/false);
  } else {
    issue_scores();
    issue_pv();
    pass_turn();
    // S_kb completes first (wgmma groups complete in order): its row max, lazy rescale and the codes'
    // multiply-adds of the early steps (in place on S) run while P_{kb-1} V is still in flight; none of them
    // touches acc, the P registers it reads, or the unscale the fold reads. The fold, the unscale, the rest
    // of the codes, their packing and O's rescale wait for it. Session 6 moved the whole softmax there
    // (fp8-turn) and lost 1.5-3%: the work before the wait outlasted P V and split the fold's FFMAs from the
    // max's FMNMX chain that they had filled (bench/NOTES-fp8.md); the packs stay after the wait for that.
    b.wgmma_wait(1);
    scores_done();
    mask_if_diagonal(kb);
    const int max_start = b.new_label("BLOCK_MAX");
    b.place(max_start);
    const BlockScale scale = block_max(/*first_block=*/false);
    const int early_codes = early_code_steps(variant);
    const int early_exp2 = variant.lean_p ? 0 : kEarlyExp2Steps;
    if (early_codes > 0) code_exponents(0, early_codes, code_offsets(scale));
    if (early_exp2 > 0) exact_p_values(0, early_exp2);
    // ptxas starts a wgmma wait's basic block with it and would sink the max below it. A branch back to
    // BLOCK_MAX on kb > last_block, which never holds here (the loop runs only while kb <= last_block, and
    // both are the same in every thread of the warpgroup, so all four warps reach the wait together; with
    // two consumers last_block is the tile register itself), keeps the max
    // and the early steps above: m, which the max writes, and S, which they rewrite in place, are read again
    // at BLOCK_MAX. (Taken, it would rerun them on the rewritten S: it must stay never taken.)
    b.bra_if(Cmp::kGt, Type::kS32, kb, last_block, max_start, "kb_past_tile");
    b.wgmma_wait(0);
    pv_done();
    fold();  // with the previous block's unscale, which unscales then replaces
    unscales(scale);
    // The offsets again (one instruction a row) rather than two more registers live across the wait.
    if (early_codes < kPvSteps) code_exponents(early_codes, kPvSteps, code_offsets(scale));
    if (!variant.lean_p) exact_p_values(early_exp2, kPvSteps);
    pack_p();
    rescale_o(scale);
  }
  b.add(kb, kb, imm(1));
  b.bra_if(Cmp::kLe, Type::kS32, kb, last_block, key_loop, "more_keys");

  // The last P V.
  b.place(last_pv);
  wait_turn();
  issue_pv();
  pass_turn();
  b.wgmma_wait(0);
  pv_done();
  fold();
  if (spans_blocks) {
    // The tile's later rows see more key blocks (one, or all but block 0 for a consumer before the sequence):
    // wait for their copies and hand them back, so that every consumer's rings stay in step with the
    // producer's. (An arrival before the full barrier's phase completes could count toward the stage's
    // previous use, whose empty phase may still be open.)
    const Reg tile_last_row = b.temp(Type::kS32, "tile_last_row");
    b.add(tile_last_row, tile_row0(), imm(layout.tile_rows - 1));
    const Reg tile_last = last_key_block(tile_last_row);
    const int drain = b.new_label("DRAIN");
    const int drained = b.new_label("DRAINED");
    b.place(drain);
    b.bra_if(Cmp::kGt, Type::kS32, kb, tile_last, drained, "rows_done");
    b.mbar_wait(barrier(kKFull, k_ring.index), k_ring.phase);
    scores_done();
    b.mbar_wait(barrier(kVtFull, vt_ring.index), vt_ring.phase);
    pv_done();
    b.add(kb, kb, imm(1));
    b.bra(drain);
    b.place(drained);
  }
  epilogue();
}

void WgmmaEmitter::epilogue() {
  TileRows t{batch, head, tile, quad_col, v_descale, tile_row, m, l, kDv / 8, {}, layout.tile_rows,
             reads_tile_shift(variant)};
  t.o = [&](int chunk, int row, int col) { return o[size_t(reg_of(chunk, row, col))]; };
  emit_store_tile(b, t);
}

}  // namespace zyfa::asmgen::fp8w
