// Internal to the FP8 kernel's mma.sync schedule: its shape constants, shared-memory layout and the registers that
// live across stages, with one method per stage. fp8_mma_sync_schedule.cpp strings the stages together;
// each fp8_mma_sync_<stage>.cpp writes one of them.
//
// Shape (first version: mma.sync, cp.async, no TMA, no warp specialization): a CTA of 8 warps takes one
// query tile of 128 rows, 16 per warp, and walks its key blocks of 128 keys. All 256 threads copy K and V
// into shared memory (the next block's copies in flight during this block's work), then each warp
// computes its 16 x 128 scores, the block's P codes and P V into a fresh accumulator, and folds that into O.
//
// The matrix products run on mma.sync m16n8k16 with f16 operands: every e4m3 value (inputs and P codes)
// is an f16 value exactly, so the products and their fp32 sums are those of an e4m3 MMA. An e4m3
// mma.sync (m16n8k32) is no faster on sm_90a: ptxas emulates it with F2FP unpacks, two HMMA.16816 into
// zero accumulators and four FADDs each (seen in its SASS), which also doubled the register demand.
// Inputs are widened once, while staging; P codes are widened by cvt.rn.f16x2.e4m3x2.
#ifndef ZYFA_ASMGEN_FP8_MMA_SYNC_EMITTER_HPP_
#define ZYFA_ASMGEN_FP8_MMA_SYNC_EMITTER_HPP_

#include <array>
#include <cstddef>
#include <functional>

#include "asmgen/builder.hpp"
#include "asmgen/fp8_kernel_params.h"
#include "asmgen/variants.hpp"
#include "kernels/numerics.h"

namespace zyfa::asmgen::fp8ms {

namespace nx = zyfa::numerics;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kRowsPerWarp = 16;  // M of m16n8k16
constexpr int kMmaN = 8;          // N of m16n8k16
constexpr int kMmaK = 16;         // K of m16n8k16
constexpr int kF16Bytes = 2;
constexpr int kScoreTiles = nx::kKeyBlock / kMmaN;  // n8 tiles of scores per warp and key block
constexpr int kOutTiles = kDv / kMmaN;              // n8 tiles of O per warp
constexpr int kPvSteps = nx::kKeyBlock / kMmaK;     // k16 steps of P V
// P V runs in two halves of the output columns, each into a fresh accumulator folded into O before the
// next: half the accumulator registers, the same arithmetic per column.
constexpr int kPvHalves = 2;
constexpr int kAccTiles = kOutTiles / kPvHalves;
// Every shared row (f16) is padded to an odd multiple of 16 bytes, so that the 8 rows one ldmatrix phase
// reads fall in 8 different 16-byte bank groups.
constexpr int kRowPad = 16;
constexpr int kVPitch = kDv * kF16Bytes + kRowPad;
// Bytes of e4m3 one thread loads at a time (16 values, 32 bytes once widened).
constexpr int kChunk = 16;
// f16 1.0 twice: the B operand whose products are the row sums of P.
constexpr uint32_t kOnesF16x2 = 0x3c003c00u;

static_assert(nx::kKeyBlock == nx::kQueryTile, "the diagonal of a query tile must be exactly one key block");
static_assert(nx::kQueryTile == kWarps * kRowsPerWarp, "each warp owns 16 rows of the tile");

struct Layout {
  int d_qk = 0;
  int qk_steps = 0;  // k16 steps of Q K^T
  int qk_pitch = 0;  // bytes per shared row of Q and K (f16)
  int q_offset = 0, k_offset = 0, v_offset = 0;        // f16 rows, padded: what the MMAs read
  int raw_q_offset = 0, raw_k_offset = 0, raw_v_offset = 0;  // e4m3 rows as cp.async lands them
  int bytes = 0;
};
Layout layout_of(const Variant &v);

class MmaSyncEmitter {
 public:
  MmaSyncEmitter(Program &program, const Variant &variant);

  // ---- stages, in the order the schedule runs them
  void thread_constants();                          // fp8_mma_sync_setup.cpp
  void tile_setup();                                // fp8_mma_sync_setup.cpp (batch, head, tile set)
  void issue_q();                                   // fp8_mma_sync_load.cpp
  void issue_kv(Reg key0);                          // fp8_mma_sync_load.cpp
  void widen_q();                                   // fp8_mma_sync_load.cpp
  void widen_kv();                                  // fp8_mma_sync_load.cpp
  void init_row_state();                            // fp8_mma_sync_softmax.cpp
  void scores();                                    // fp8_mma_sync_matmul.cpp
  void mask_diagonal();                             // fp8_mma_sync_softmax.cpp
  void block_max_and_rescale();                     // fp8_mma_sync_softmax.cpp
  void p_codes();                                   // fp8_mma_sync_softmax.cpp
  void pv(int half);                                // fp8_mma_sync_matmul.cpp
  void fold(int half);                              // fp8_mma_sync_softmax.cpp
  void epilogue();                                  // fp8_mma_sync_epilogue.cpp

  // A kernel parameter (ld.param into a fresh register, so that ptxas keeps it in the constant bank).
  Reg param(Type type, size_t offset, const char *name);
  // O's element (n8 tile, row 0 or 1 of the thread, column 0 or 1 of the pair), as fp8_recurrence takes it.
  std::function<Reg(int, int, int)> o_element();

  Builder b;
  const Variant variant;
  const Layout layout;

  // ---- per thread, the whole kernel
  Reg tid, warp, lane, quad_row, quad_col;  // quad_row = lane / 4 ("groupID"), quad_col = lane % 4
  std::array<Reg, 2> tile_row;               // rows of the thread within a tile: 16 warp + quad_row (+ 8)
  Reg q_frag_addr, k_frag_addr, v_frag_addr;  // this lane's ldmatrix addresses

  // ---- per query tile
  Reg batch, head, tile, kv_head, row0;
  Reg q_head, k_head, v_head;  // global addresses of row 0 of this (batch, head)
  Reg c, lean_scale, v_descale;  // c = softmax_scale * log2(e) * q_descale * k_descale
  std::array<Reg, 2> diag_limit;  // the diagonal block keeps key (8 j + e) iff it is <= this

  // ---- softmax state of the thread's two rows (quad_row and quad_row + 8 of its warp)
  std::array<std::array<Reg, 4>, kOutTiles> o;
  std::array<Reg, 2> m, l;

  // ---- per key block
  std::array<std::array<Reg, 4>, kScoreTiles> s;
  std::array<Reg, 2> unscale;
  std::array<Reg, 2> code_offset, exp_bias;  // the block's lean code offset or exact exponent bias, per row
  std::array<std::array<Reg, 4>, kPvSteps> p;  // A fragments of P V
  std::array<std::array<Reg, 4>, kAccTiles> acc;  // output columns of one half
  std::array<Reg, 4> rowsum;                      // the row sums of P (ones-column MMA, first half)
};

}  // namespace zyfa::asmgen::fp8ms

#endif  // ZYFA_ASMGEN_FP8_MMA_SYNC_EMITTER_HPP_
