// The per-tile constants both FP8 schedules derive from the descales, in numerics.h's order:
//   c = (softmax_scale * log2 e) * q_descale * k_descale,
//   lean_scale = c / 8 (exact; numerics::fp8_lean_p_scale),  and v_descale,
// each descale a constant of the parameter block or a float read from device memory at
// (batch, kv head) (asmgen::Fp8DescaleParam).
#ifndef ZYFA_ASMGEN_FP8_DESCALE_HPP_
#define ZYFA_ASMGEN_FP8_DESCALE_HPP_

#include "asmgen/builder.hpp"

namespace zyfa::asmgen {

void emit_score_constants(Builder &b, Reg batch, Reg kv_head, Reg c, Reg lean_scale, Reg v_descale);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_FP8_DESCALE_HPP_
