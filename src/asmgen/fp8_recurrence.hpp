// numerics.h's recurrence for one row of one key block (block max, lazy rescale, codes, fold, causal mask),
// emitted the same way by the mma.sync schedule (fp8_mma_sync_*.cpp) and the wgmma one (fp8_wgmma_*.cpp).
// Each schedule keeps only what is its own: where the scores and accumulators live, and how the tiles get there.
#ifndef ZYFA_ASMGEN_FP8_RECURRENCE_HPP_
#define ZYFA_ASMGEN_FP8_RECURRENCE_HPP_

#include <array>
#include <functional>
#include <vector>

#include "asmgen/builder.hpp"
#include "kernels/numerics.h"

namespace zyfa::asmgen {

// ---- key blocks
// A key's block is key >> kKeyBlockLog2 and a block's first key block << kKeyBlockLog2: one shift, no multiply.
constexpr int kKeyBlockLog2 = 7;
static_assert(numerics::kKeyBlock == 1 << kKeyBlockLog2, "kKeyBlockLog2 is log2 of numerics::kKeyBlock");
// key0 (s32) = the first key of key block `block`.
void emit_block_key0(Builder &b, Reg key0, Reg block);
// block (s32) = the key block that holds key `key` (block may be key itself).
void emit_key_block(Builder &b, Reg block, Reg key);

// ---- one row of one key block (numerics.h)
// bmax = c * max(scores), the max taken over the thread's scores (a tree, for independent FMNMX) and then
// over the four lanes of its quad, which hold the rest of the row. A new f32 register.
Reg emit_block_max(Builder &b, const std::vector<Reg> &scores, Reg c);
// The same for several rows at once, their trees and shuffle rounds interleaved (one bmax per row).
std::vector<Reg> emit_block_maxes(Builder &b, const std::vector<std::vector<Reg>> &rows, Reg c);
// The lazy rescale: need = bmax > m + tau (numerics::kFp8LazyRescaleThreshold); then m = ceil(8 bmax) / 8
// where need. With `alpha`, also *alpha = need ? 2^(m_old - m_new) : 1 (a new register). Returns need.
Reg emit_lazy_rescale(Builder &b, Reg m, Reg bmax, Reg *alpha);
// The per-block scale (numerics.h), in two parts that a schedule may place apart: the codes need only
// bmax, the unscale also the reference m, and it replaces the one that the previous block's fold reads.
// unscale = 2^max((bmax - m) - G, lowest), G = numerics::fp8_top_binade(lean_p).
void emit_unscale(Builder &b, Reg m, Reg bmax, Reg unscale, bool lean_p);
// Lean P: the code offset fl(2 + (118.5 - 8 bmax) / 64), as numerics::fp8_lean_p_offset forms it. Exact P:
// the exponent bias H - bmax. A new register.
Reg emit_code_offset(Builder &b, Reg bmax, bool lean_p);
// dst = y = fma(s, c / 8, offset), the lean code of a score before its clamp: bits 16-22 of y (numerics.h).
void emit_lean_code(Builder &b, Reg dst, Reg s, Reg lean_scale, Reg offset);
// dst (b32) = two clamped codes, in the low byte of each half: the 16-bit fields of y0 and y1 gathered by one
// PRMT, then max.s16x2 with code_zero (a b32 register holding numerics::kLeanFieldOfCodeZero in both halves),
// so that negative levels, negative y and -inf (masked scores) give code 0 (numerics::lean_p_code).
void emit_lean_code_pairs(Builder &b, Reg dst, Reg y0, Reg y1, Reg code_zero);
// dst = fma(s, c, bias), the exponent of exact P (emit_exact_p without its exp2).
void emit_exact_exponent(Builder &b, Reg dst, Reg s, Reg c, Reg bias);
// A new b32 register holding the code_zero of emit_lean_code_pairs: numerics::kLeanFieldOfCodeZero in both halves.
Reg emit_lean_code_zero(Builder &b);
// dst = exp2(fma(s, c, bias)), the exact P before its conversion to e4m3.
void emit_exact_p(Builder &b, Reg dst, Reg s, Reg c, Reg bias);

// The diagonal block's causal mask: score (chunk, row, col), the thread's key 8 chunk + 2 quad_col + col of
// its row `row`, becomes -inf where 8 chunk + col > diag_limit[row].
void emit_causal_mask(Builder &b, const std::array<Reg, 2> &diag_limit, int chunks,
                      const std::function<Reg(int chunk, int row, int col)> &score);
// The lazy rescale of O and l: O's elements (chunk, row, col) of chunks [0, chunks) and l[row] times alpha[row],
// only in warps where need[0] or need[1] holds in some thread (alpha = 1 elsewhere is exact): a warp-uniform
// branch to the label `skip_label`, which each schedule names.
void emit_rescale_o(Builder &b, const std::array<Reg, 2> &need, const std::array<Reg, 2> &alpha, int chunks,
                    const std::function<Reg(int chunk, int row, int col)> &o, const std::array<Reg, 2> &l,
                    const char *skip_label);
// The fold of a block's P V (numerics.h), one FFMA per element: O += unscale[row] acc over O's chunks
// [first_chunk, first_chunk + chunks), with acc indexed by the same chunk as O; then, where `rowsum` is given,
// l[row] += unscale[row] rowsum(row).
void emit_fold(Builder &b, const std::array<Reg, 2> &unscale, int first_chunk, int chunks,
               const std::function<Reg(int chunk, int row, int col)> &o,
               const std::function<Reg(int chunk, int row, int col)> &acc, const std::array<Reg, 2> &l,
               const std::function<Reg(int row)> &rowsum);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_FP8_RECURRENCE_HPP_
