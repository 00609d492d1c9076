// The transpose of a row's output words across the four lanes of a quad (SHFL and SELP rounds).
#include "asmgen/fp8_quad_transpose.hpp"

#include <stdexcept>

namespace zyfa::asmgen {
namespace {

// Whether the lane's quad_col has bit `k`: the upper half of its exchange pairs at lane distance k.
Reg quad_half(Builder &b, Reg quad_col, int k) {
  const Reg bit = b.temp(Type::kS32, "quad_bit");
  b.and_(bit, quad_col, imm(k));
  const Reg upper = b.temp(Type::kPred, "quad_upper");
  b.setp(upper, Cmp::kNe, Type::kS32, bit, imm(0));
  return upper;
}

}  // namespace

QuadTransposeMasks quad_transpose_masks(Builder &b, Reg quad_col) {
  QuadTransposeMasks upper;
  for (size_t round = 0; round < kQuadTransposeDistances.size(); ++round)
    upper[round] = quad_half(b, quad_col, kQuadTransposeDistances[round]);
  return upper;
}

void emit_quad_transpose(Builder &b, std::vector<Reg> &words, const QuadTransposeMasks &upper) {
  if (words.size() % kQuad != 0) throw std::logic_error("emit_quad_transpose: words come in groups of 4");
  for (size_t round = 0; round < kQuadTransposeDistances.size(); ++round) {
    const int k = kQuadTransposeDistances[round];
    const Reg up = upper[round];
    for (size_t j = 0; j < words.size(); j += kQuad)
      for (int c = 0; c < kQuad; ++c) {
        if (c & k) continue;
        Reg &lo = words[j + size_t(c)];
        Reg &hi = words[j + size_t(c | k)];
        // The upper lane sends its lo and takes the partner's hi into lo; the lower sends hi, takes lo into hi.
        const Reg send = b.temp(Type::kB32, "xpose_send");
        b.selp(send, lo, hi, up);
        const Reg got = b.temp(Type::kB32, "xpose_got");
        b.shfl_bfly(got, send, k);
        const Reg new_lo = b.temp(Type::kB32, "xpose_lo");
        b.selp(new_lo, got, lo, up);
        const Reg new_hi = b.temp(Type::kB32, "xpose_hi");
        b.selp(new_hi, hi, got, up);
        lo = new_lo;
        hi = new_hi;
      }
  }
}

}  // namespace zyfa::asmgen
