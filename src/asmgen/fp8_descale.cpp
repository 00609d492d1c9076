#include "asmgen/fp8_descale.hpp"

#include <cstddef>

#include "asmgen/fp8_job_loop.hpp"
#include "asmgen/fp8_kernel_params.h"
#include "kernels/numerics.h"

namespace zyfa::asmgen {
namespace {

// d = the descale at `field`: its value, or the float at ptr + batch * batch_stride + kv_head * head_stride.
void descale(Builder &b, Reg d, size_t field, Reg b64, Reg hk64) {
  using P = Fp8DescaleParam;
  b.mov(d, load_param(b, Type::kF32, field + offsetof(P, value), "descale_value"));
  const Reg ptr = load_param(b, Type::kU64, field + offsetof(P, ptr), "descale_ptr");
  const Reg on_device = b.temp(Type::kPred, "descale_on_device");
  b.setp(on_device, Cmp::kNe, Type::kU64, ptr, imm(0));
  const Reg index = b.temp(Type::kS64, "descale_index");
  b.mul_lo(index, b64, load_param(b, Type::kS64, field + offsetof(P, batch_stride), "descale_batch_stride"));
  b.mad_lo(index, hk64, load_param(b, Type::kS64, field + offsetof(P, head_stride), "descale_head_stride"), index);
  const Reg addr = b.temp(Type::kU64, "descale_addr");
  b.mad_lo(addr, index, imm(int64_t(sizeof(float))), ptr);
  auto g = b.when(on_device);
  b.ld_global({d}, addr, 0, /*non_coherent=*/true);
}

}  // namespace

void emit_score_constants(Builder &b, Reg batch, Reg kv_head, Reg c, Reg lean_scale, Reg v_descale) {
  using P = Fp8AttentionParams;
  const Reg b64 = b.temp(Type::kS64, "batch64");
  const Reg hk64 = b.temp(Type::kS64, "kv_head64");
  b.cvt(b64, batch, Type::kS32, Round::kNone);
  b.cvt(hk64, kv_head, Type::kS32, Round::kNone);
  const Reg qd = b.temp(Type::kF32, "q_descale");
  const Reg kd = b.temp(Type::kF32, "k_descale");
  descale(b, qd, offsetof(P, q_descale), b64, hk64);
  descale(b, kd, offsetof(P, k_descale), b64, hk64);
  descale(b, v_descale, offsetof(P, v_descale), b64, hk64);
  b.mul(c, load_param(b, Type::kF32, offsetof(P, score_scale), "score_scale"), qd);
  b.mul(c, c, kd);
  b.mul(lean_scale, c, f32(numerics::fp8_lean_p_scale(1.0f)));  // c / 8, exact
}

}  // namespace zyfa::asmgen
