// The transpose of a row's output words across the four lanes of a quad, so that each lane stores whole
// 16-byte chunks (the tile store of both FP8 schedules).
#ifndef ZYFA_ASMGEN_FP8_QUAD_TRANSPOSE_HPP_
#define ZYFA_ASMGEN_FP8_QUAD_TRANSPOSE_HPP_

#include <array>
#include <vector>

#include "asmgen/builder.hpp"

namespace zyfa::asmgen {

constexpr int kQuad = 4;  // the lanes that hold one accumulator row

// The quad transpose's exchange rounds, in order: the lane distance of each.
constexpr std::array<int, 2> kQuadTransposeDistances = {2, 1};
// Per round, whether the lane is the upper half of its exchange pair.
using QuadTransposeMasks = std::array<Reg, kQuadTransposeDistances.size()>;

// emit_quad_transpose's masks, round by round: made once per tile, for every row's transpose.
QuadTransposeMasks quad_transpose_masks(Builder &b, Reg quad_col);

// A row's output as words of two bf16, transposed across the quad in groups of four: before, lane q holds
// word q of chunks j .. j + 3 (words[j + c] = chunk j + c); after, words[j + c] holds word c of chunk j + q,
// so each lane writes whole 16-byte chunks. Two exchange rounds (kQuadTransposeDistances; `upper` from
// quad_transpose_masks), each one SHFL and three SELPs per pair. The whole warp must take part.
void emit_quad_transpose(Builder &b, std::vector<Reg> &words, const QuadTransposeMasks &upper);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_FP8_QUAD_TRANSPOSE_HPP_
