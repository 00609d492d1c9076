// Internal to the FP8 kernel's Hopper schedule (stage 3): shape constants, the shared-memory layout, the
// registers that live across stages, and one method per stage. fp8_wgmma_schedule.cpp strings them
// together; fp8_wgmma_producer.cpp and fp8_wgmma_consumer.cpp write them.
//
// The CTA is a producer and two or three consumer warpgroups over one query tile of 64 rows per consumer at a
// time (the plan's persistent job loop):
//   producer   thread 0 issues TMA copies of Q, K and V into rings of shared buffers (mbarriers); all
//              four warps transpose each V block into V^T (keys contiguous), the K-major B operand that
//              an e4m3 wgmma needs, in the key order that makes P's registers the A operand as they are
//   consumers  two warpgroups of 64 rows each take turns at the tensor cores (named barriers; at d_qk = 192
//              each issues when ready, without turns); or three, each issuing when ready, whose products and
//              softmax run one after the other within the warpgroup (Variant::consumers):
//              S = Q K^T (wgmma, both operands in shared memory), softmax and P codes in registers while
//              the other warpgroup's products run, O += P V^T (wgmma, A from registers)
// V^T carries 8 extra rows of ones: the product's columns 128..135 are then the row sums of exactly the
// P codes that multiplied V, the denominator of the rounded P, at no extra instruction.
//
// Each block's P V goes into a fresh accumulator, folded into O (fp32 registers) by one FFMA per element,
// O = O + unscale acc, exactly numerics.h's recurrence: accumulating O across blocks inside the tensor
// cores instead was measured 0.25-0.86x the error against fp64 away from the CPU backend at 1000-4097
// keys, since an e4m3 wgmma keeps only about 14 bits of its running sum (as DeepSeek-V3 reports for
// FP8 GEMMs, which promote to CUDA cores every 128 products for the same reason).
//
// Each warpgroup's turn at the tensor cores issues S_kb = Q K_kb^T and acc = P_{kb-1} V^T_{kb-1} together;
// the fold of acc, the softmax of S_kb and the P codes then run while the other warpgroup's products do.
#ifndef ZYFA_ASMGEN_FP8_WGMMA_EMITTER_HPP_
#define ZYFA_ASMGEN_FP8_WGMMA_EMITTER_HPP_

#include <array>
#include <cstddef>
#include <functional>

#include "asmgen/builder.hpp"
#include "asmgen/fp8_kernel_params.h"
#include "asmgen/fp8_vt_transpose.hpp"
#include "asmgen/variants.hpp"
#include "kernels/numerics.h"

namespace zyfa::asmgen::fp8w {

namespace nx = zyfa::numerics;

// ---- the CTA
constexpr int kWarpSize = 32;
constexpr int kWarpgroupThreads = 128;
constexpr int kWarpsPerWarpgroup = 4;
// A thread's warp is tid >> kWarpShift, its warpgroup tid >> kWarpgroupShift.
constexpr int kWarpShift = 5;
constexpr int kWarpgroupShift = 7;
static_assert(1 << kWarpShift == kWarpSize && 1 << kWarpgroupShift == kWarpgroupThreads, "the shifts divide tid");
constexpr int threads(int consumers) { return (1 + consumers) * kWarpgroupThreads; }
constexpr int kPairedConsumers = 2;  // the ping-pong schedule's
constexpr int kSerialConsumers = 3;  // the serialized schedule's
// Register budgets (setmaxnreg): the producer's transposition needs a few dozen; consumers hold O (64),
// S (64) and the P V accumulator (68) at once, plus P (16), addresses and the recurrence's state.
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;
constexpr int kRegisterFile = 65536;
// setmaxnreg moves registers within the CTA's pool, which is what the launch allocated: ptxas's per-thread
// count for the CTA's threads (the register file over the threads, in units of 8) times the threads. A budget
// over the pool blocks setmaxnreg.inc forever, with no error.
constexpr int launch_registers(int consumers) { return (kRegisterFile / threads(consumers)) / 8 * 8; }
constexpr bool budget_fits(int producer, int consumer, int consumers) {
  return producer + consumers * consumer <= (1 + consumers) * launch_registers(consumers);
}
static_assert(budget_fits(kProducerRegisters, kConsumerRegisters, kPairedConsumers),
              "the three warpgroups' budgets must fit the registers the launch allocated");
// A producer that only copies (vt_prepass: one thread issues TMA) needs the least setmaxnreg allows, and the
// consumers can take the rest. Measured on the H200 (bench/NOTES.md, session 16): 1.03x at mha-d192 4K and
// 16K, but 0.988-0.993x at gqa-d128 4K-16K, where ptxas schedules the consumer worse at 240; so d_qk = 192
// only.
constexpr int kCopyProducerRegisters = 24;
constexpr int kWideConsumerRegisters = 240;
static_assert(budget_fits(kCopyProducerRegisters, kWideConsumerRegisters, kPairedConsumers),
              "the three warpgroups' budgets must fit the registers the launch allocated");
// Three consumers (vt_prepass only: its producer only copies) share what is left: O (64), the P V accumulator
// (68), on whose registers S lands, P (16) and the row state, with no second S or accumulator in flight.
constexpr int kSerialConsumerRegisters = 160;
static_assert(budget_fits(kCopyProducerRegisters, kSerialConsumerRegisters, kSerialConsumers),
              "the four warpgroups' budgets must fit the registers the launch allocated");
// d_qk = 192: S takes 1.5x the tensor time of d = 128's for the same softmax, which changes the register budget
// below and two choices of the consumer (fp8_wgmma_consumer.cpp).
constexpr int kWideHeadDimQK = 192;
struct RegisterBudget {
  int producer, consumer;
};
constexpr RegisterBudget register_budget(bool vt_prepass, int d_qk, int consumers) {
  if (consumers == kSerialConsumers) return {kCopyProducerRegisters, kSerialConsumerRegisters};
  return vt_prepass && d_qk == kWideHeadDimQK ? RegisterBudget{kCopyProducerRegisters, kWideConsumerRegisters}
                                               : RegisterBudget{kProducerRegisters, kConsumerRegisters};
}

// ---- the products
constexpr int kMmaK = 32;                // e4m3 wgmma: k32, 32 bytes of a row
constexpr int kOnesRows = 8;             // rows of 1.0 appended to V^T: an n8 of row sums
constexpr int kPvN = kDv + kOnesRows;    // N of O += P V^T
constexpr int kScoreRegs = nx::kKeyBlock / 2;  // m64n128 fp32: 64 per thread
constexpr int kAccRegs = kPvN / 2;             // m64n136 fp32: 68 per thread
constexpr int kORegs = kDv / 2;                // O: 64 per thread
constexpr int kChunks = nx::kKeyBlock / 8;     // n8 column chunks of S
constexpr int kPvSteps = nx::kKeyBlock / kMmaK;
constexpr int kPRegs = 4 * kPvSteps;           // A fragments: 4 registers of 4 codes per k32 step
constexpr int kRowSumReg = 4 * (kDv / 8);      // the row-sum chunk: register 64 (row g), 66 (row g + 8)
// A consumer's rows by warp: the wgmma accumulator gives each warp 16 rows, and each thread rows g and g + 8 of
// them (g = lane / 4).
constexpr int kRowsPerWarp = kRowsPerConsumer / kWarpsPerWarpgroup;
constexpr int kSecondRowOffset = 8;
static_assert(kRowsPerWarp == 2 * kSecondRowOffset, "a thread's two rows are g and g + 8 of its warp's 16");
static_assert(nx::kKeyBlock == 2 * kRowsPerConsumer,
              "a consumer's 64 rows start at 0 or 64 within a key block: its diagonal lies in one block");
static_assert(kPvN % 8 == 0 && kPvN <= 256, "the N of an e4m3 wgmma");
static_assert(kVtWarps == kWarpsPerWarpgroup, "the producer warpgroup transposes V");

// ---- shared memory
// K, V and V^T buffers each: as many as shared memory holds, up to kMaxStages (an FP8 block is consumed
// in about half the time of a BF16 one, so copies need more blocks of lead).
constexpr int kMaxStages = 4;
constexpr int kMaxSharedBytes = 227 * 1024;  // a CTA's dynamic shared memory on sm_90
// V as TMA lands it and V^T: 128-byte rows, 128-byte swizzle.
constexpr int kVRowBytes = 128;
constexpr int kSwizzleGroupRows = 8;  // a swizzle atom is 8 rows
static_assert(kVRowBytes == kVtRowBytes && kSwizzleGroupRows == kVtSwizzleRows, "one swizzle rule for V and V^T");
constexpr int kAtomAlign = 1024;
constexpr int kMbarrierBytes = sizeof(uint64_t);  // an mbarrier object: 8 bytes, 8-aligned
constexpr uint32_t kE4m3OneX4 = 0x38383838u;  // four e4m3 1.0
// wgmma descriptor swizzle modes (bits 62-63).
constexpr uint64_t kDescSwizzle128 = 1, kDescSwizzle64 = 2;
// TMA cache hints (createpolicy encodings): Q is read once; K and V by every tile of the head.
constexpr uint64_t kEvictFirst = 0x12F0000000000000ull;
constexpr uint64_t kEvictLast = 0x14F0000000000000ull;

struct SharedLayout {
  int d_qk = 0;
  int stages = 0;        // K, V and V^T buffers each
  int qk_block_bytes = 0;  // Q and K: column blocks of this many bytes, swizzled as wide (fp8_qk_block_bytes)
  int qk_blocks = 0;       // column blocks of a Q or K row
  int qk_steps = 0;      // k32 steps of S = Q K^T
  int q = 0, k = 0, v = 0, vt = 0, barriers = 0;  // offsets from the 1024-aligned base
  int tile_rows = 0;     // query rows of a tile: 64 per consumer; Q's column blocks hold this many rows
  int q_bytes = 0, k_bytes = 0, v_bytes = 0, vt_bytes = 0;  // one buffer each
  int bytes = 0;         // what the launch asks for, with the alignment slack
};
SharedLayout shared_layout(const Variant &v);

// mbarriers, in this order after the tiles; the ringed ones kMaxStages each (the layout's stages used).
enum Barrier : int { kQFull, kQEmpty, kKFull, kKEmpty = kKFull + kMaxStages, kVFull = kKEmpty + kMaxStages,
                     kVEmpty = kVFull + kMaxStages, kVtFull = kVEmpty + kMaxStages, kVtEmpty = kVtFull + kMaxStages,
                     kBarrierCount = kVtEmpty + kMaxStages };

// A ring position: the buffer in use and the parity of its barriers' current phase.
struct Ring {
  Reg index, phase;
};

class WgmmaEmitter {
 public:
  WgmmaEmitter(Program &program, const Variant &variant);

  // fp8_wgmma_schedule.cpp
  void kernel_setup();  // thread ids, shared base, barriers, V^T's ones rows
  // Runs `tile_body` for every query tile of this CTA's jobs, with batch/head/kv_head/tile set.
  void for_each_tile(const std::function<void()> &tile_body);
  // fp8_wgmma_producer.cpp
  void producer_setup();
  void producer_tile();
  // fp8_wgmma_consumer.cpp
  void consumer_setup();
  void consumer_tile();

  // Helpers shared by the stages.
  Reg param(Type type, size_t offset, const char *name);
  Reg tensor_map(size_t field);  // the generic address of a tensor map of the parameter block
  Reg barrier(int which, Reg stage);  // address of a ringed barrier (stage may be invalid: not ringed)
  Reg barrier(int which);
  void advance(Ring &r);
  // if (pred) body: a branch around the body (so that it may contain waits).
  void if_(Reg pred, bool negated, const std::function<void()> &body);

  Builder b;
  const Variant variant;
  const SharedLayout layout;
  const int consumer_warps;  // arrivals that hand a buffer back

  // The first query row of the tile, and the last key block that rows up to `last_row` see: that row's
  // block, or the sequence's last if that comes first (temporaries).
  Reg tile_row0(const char *name = "row0");
  Reg last_key_block(Reg last_row);

  // ---- every thread
  Reg tid, warpgroup, warp, lane, smem;  // warp: within the warpgroup; smem: the 1024-aligned base
  Reg p_true, p_false;

  // ---- the job loop
  Reg job_index, tile_next;
  Reg batch, head, tile, kv_head;
  // The tile's last key block for the producer (every consumer's) and for this consumer: `tile` itself with
  // two consumers (the tile is one key block), registers set per tile with three.
  Reg producer_last_block, last_block;

  // ---- producer
  Reg issuer;        // thread 0: issues the copies
  Ring issue_ring, transpose_ring;
  Reg producer_q_phase;  // parity of Q's barriers on the producer side
  VtTransposeLanes vt_lanes;  // this lane's V and V^T addresses and PRMT selectors (fp8_vt_transpose.hpp)

  // ---- consumers
  Reg consumer;                  // 0 .. consumers - 1
  Reg turn_mine, turn_other;     // named barrier ids (unset where the variant takes no turns)
  Reg quad_row, quad_col;        // lane / 4, lane % 4
  std::array<Reg, 2> tile_row;   // rows of the thread's two accumulator rows within the tile
  Reg q_desc, k_desc, vt_desc;   // descriptors of Q (this consumer's rows), K and V^T buffer 0
  Ring k_ring, vt_ring;
  Reg consumer_q_phase;          // parity of Q's barriers on the consumer side
  Reg c, lean_scale, v_descale;
  std::array<Reg, kORegs> o;
  std::array<Reg, kAccRegs> acc;  // one block's P V; registers 64 and 66 are the rows' sums of P
  std::array<Reg, kScoreRegs> s;
  std::array<Reg, kPRegs> pk;
  std::array<Reg, kPRegs> pk_lo;  // split P only: the residuals' codes, a second P V chain's A fragments
  std::array<Reg, 2> m, l, unscale;  // per row: reference max, denominator, the pending block's unscale

 private:
  // fp8_wgmma_producer.cpp
  void issue_q();
  void issue_kv(Reg block);  // K and V (or V^T) of key block `block`
  void issue_vt(Reg key0, Reg empty_parity);
  void issue_tile_copies();
  void transpose_v();
  // fp8_wgmma_consumer.cpp
  void scores(Reg k_stage);
  void pv(Reg vt_stage);
  void release(int which, Reg stage);
  void mask_diagonal();
  // One key block's softmax in parts. block_max: the rows' block max and the lazy rescale (m moves); it
  // reads only S, so it may run while P V is in flight. code_exponents: the codes' multiply-adds in place on
  // S, from the block max alone (code_offsets), so they may run then too, and so may exact P's exp2 of some
  // steps (exact_p_values, in place). After the previous block's fold: unscales (the block's unscale replaces
  // the one that fold reads), the rest of the codes, and pack_p (the codes into pk, which the previous P V
  // reads). block_codes does it all at once.
  struct BlockScale {
    std::array<Reg, 2> bmax;         // c * the block's max score, per row
    std::array<Reg, 2> need, alpha;  // alpha only after a tile's first block (O and l are zero before)
  };
  BlockScale block_max(bool first_block);
  std::array<Reg, 2> code_offsets(const BlockScale &scale);
  void unscales(const BlockScale &scale);
  void for_step_scores(int first, int last, const std::function<void(Reg, int)> &body);
  void code_exponents(int first, int last, const std::array<Reg, 2> &offset);
  void block_codes(const BlockScale &scale);
  // O and l times alpha, in warps where some row's reference moved (alpha = 1 elsewhere is exact).
  void rescale_o(const BlockScale &scale);
  void softmax(bool first_block);
  void fold();
  void exact_p_values(int first, int last);
  void pack_p();
  Reg split_p_lo(Reg p1, Reg p0, Reg hi);  // a b16 of two residual codes
  void epilogue();
};

}  // namespace zyfa::asmgen::fp8w

#endif  // ZYFA_ASMGEN_FP8_WGMMA_EMITTER_HPP_
