// V -> V^T, the K-major B operand an e4m3 wgmma needs for P V, by the four warps of one warpgroup, one
// 128-key block at a time (the wgmma schedule's producer; a host test runs it on the interpreter).
//
// An e4m3 wgmma takes B K-major only, so P V needs V^T: for each output column (dimension) the 128 keys of
// the block contiguous. P arrives in the registers of the S accumulator, whose thread t of a quad holds keys
// {2t, 2t+1, 8+2t, 9+2t} of every 16; the A operand of a k32 step expects keys {4t .. 4t+3} of every 16 in
// one register. Rather than move bytes between threads, V^T stores its keys in that order: logical position
// 4t + j of each 16 holds key 8 (j / 2) + 2t + j % 2 (fp8_vt::key_at, src/kernels/fp8_vt_layout.h, which the
// workspace's V^T of the vt_prepass variants follows too). ldmatrix.trans of V (as pairs of dimensions) hands
// thread (j = lane / 4, t = lane % 4) the bytes {V[2t][2j], V[2t][2j+1], V[2t+1][2j], V[2t+1][2j+1]} of an
// 8-key block; two such blocks (keys +0 and +8) give, by one PRMT each, the four bytes of V^T rows 2j and
// 2j + 1 at logical positions 4t .. 4t+3.
//
// The stores. For one key group and 32 dimensions a warp's words are four 8x8 b16 matrices (thread (j, t)
// holds row j, bytes 4t..4t+3 of each), so one stmatrix.x4 writes what four st.shared.b32 did. Both layouts
// swizzle 128-byte rows by 16-byte chunk: chunk c of row r at c ^ (r % 8). Rows 2j + p and 2j + 8 + p share
// r % 8, so if every thread wrote the same parity p the warp's rows would fall on the same banks two by two;
// threads j >= 4 write the other parity (row 2j + (p ^ 1)), which makes each matrix's eight rows land in
// eight distinct chunks: one wavefront per matrix.
#ifndef ZYFA_ASMGEN_FP8_VT_TRANSPOSE_HPP_
#define ZYFA_ASMGEN_FP8_VT_TRANSPOSE_HPP_

#include <array>

#include "asmgen/builder.hpp"
#include "asmgen/variants.hpp"
#include "kernels/numerics.h"

namespace zyfa::asmgen::fp8w {

constexpr int kVtDims = kDv;                          // V's row and V^T's column count
constexpr int kVtRowBytes = numerics::kKeyBlock;      // a V row (kVtDims e4m3) and a V^T row (one key per byte)
constexpr int kVtSwizzleRows = 8;                     // TMA's 128-byte swizzle: an atom is 8 rows
constexpr int kVtWarps = 4;                           // one warpgroup
constexpr int kVtColumnPairs = kVtDims / 32;          // one ldmatrix.x4 (and one stmatrix.x4) covers 32 dimensions
constexpr int kVtKeyGroupsPerWarp = numerics::kKeyBlock / kVtWarps / 16;  // 2 groups of 16 keys
static_assert(kVtDims == kVtRowBytes, "V rows and V^T rows are both 128 bytes: one swizzle rule for both");

// Per-lane offsets and selectors, computed once per kernel; registers that live across blocks.
struct VtTransposeLanes {
  std::array<Reg, kVtColumnPairs> load;        // this lane's ldmatrix row in a V block, per 32 dimensions
  std::array<Reg, kVtKeyGroupsPerWarp> store;  // this lane's stmatrix row in V^T, per key group of the warp
  std::array<Reg, 2> selector;                 // PRMT selector for matrices of parity 0 and 1
};

// `lane` and `warp` (within the warpgroup) are the thread's; the registers it returns are persistent.
VtTransposeLanes emit_vt_transpose_setup(Builder &b, Reg lane, Reg warp);

// Transposes the V block at shared address v_buf (TMA's 128-byte swizzle) into V^T at vt_buf (its first
// kDv rows). Every thread of the warpgroup must run it; the caller fences and signals.
void emit_vt_transpose_block(Builder &b, const VtTransposeLanes &lanes, Reg v_buf, Reg vt_buf);

}  // namespace zyfa::asmgen::fp8w

#endif  // ZYFA_ASMGEN_FP8_VT_TRANSPOSE_HPP_
