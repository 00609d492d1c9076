// numerics.h's recurrence for one row of one key block, as both FP8 schedules emit it.
#include "asmgen/fp8_recurrence.hpp"

#include <cmath>
#include <vector>

#include "kernels/numerics.h"

namespace zyfa::asmgen {

namespace nx = zyfa::numerics;

void emit_block_key0(Builder &b, Reg key0, Reg block) { b.shl(key0, block, imm(kKeyBlockLog2)); }

void emit_key_block(Builder &b, Reg block, Reg key) { b.shr(block, key, imm(kKeyBlockLog2)); }

std::vector<Reg> emit_block_maxes(Builder &b, const std::vector<std::vector<Reg>> &rows, Reg c) {
  // Level by level over all rows, and each shuffle round for all rows before the next: the rows' chains are
  // independent, and emitted one row after the other ptxas kept them apart, so that a thread's second row
  // started its two shuffle round trips only after the first row's had returned. Measured (session 14, fp8-maxpair):
  // +0.4-0.6% at d = 128, neutral at d_qk = 192.
  std::vector<std::vector<Reg>> levels = rows;
  for (bool more = true; more;) {
    more = false;
    for (auto &level : levels) {
      if (level.size() <= 1) continue;
      std::vector<Reg> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2) {
        const Reg x = b.temp(Type::kF32, "rmax");
        b.max(x, level[i], level[i + 1]);
        next.push_back(x);
      }
      if (level.size() % 2 != 0) next.push_back(level.back());
      level = next;
      more = more || level.size() > 1;
    }
  }
  std::vector<Reg> mx;
  for (const auto &level : levels) mx.push_back(level[0]);
  for (int lane_mask : {1, 2}) {
    std::vector<Reg> other;
    for (const Reg x : mx) {
      other.push_back(b.temp(Type::kF32, "rmax_other"));
      b.shfl_bfly(other.back(), x, lane_mask);
    }
    for (size_t r = 0; r < mx.size(); ++r) {
      const Reg joined = b.temp(Type::kF32, "rmax");  // a new register: a one-score row's is the caller's score
      b.max(joined, mx[r], other[r]);
      mx[r] = joined;
    }
  }
  std::vector<Reg> bmax;
  for (const Reg x : mx) {
    bmax.push_back(b.temp(Type::kF32, "bmax"));
    b.mul(bmax.back(), c, x);
  }
  return bmax;
}

Reg emit_block_max(Builder &b, const std::vector<Reg> &scores, Reg c) { return emit_block_maxes(b, {scores}, c)[0]; }

Reg emit_lazy_rescale(Builder &b, Reg m, Reg bmax, Reg *alpha) {
  const Reg need = b.temp(Type::kPred, "need_rescale");
  const Reg threshold = b.temp(Type::kF32, "rescale_threshold");
  b.add(threshold, m, f32(nx::kFp8LazyRescaleThreshold));
  b.setp(need, Cmp::kGt, Type::kF32, bmax, threshold);
  const Reg m_new = b.temp(Type::kF32, "m_new");
  b.mul(m_new, bmax, f32(float(nx::kE4m3CodesPerBinade)));
  b.cvt(m_new, m_new, Type::kF32, Round::kRpi);
  b.mul(m_new, m_new, f32(1.0f / float(nx::kE4m3CodesPerBinade)));
  if (alpha != nullptr) {
    const Reg diff = b.temp(Type::kF32, "m_diff");
    b.sub(diff, m, m_new);
    const Reg a = b.temp(Type::kF32, "alpha_exp");
    b.ex2(a, diff);
    *alpha = b.temp(Type::kF32, "alpha");
    b.selp(*alpha, a, f32(1.0f), need);
  }
  b.selp(m, m_new, m, need);
  return need;
}

void emit_causal_mask(Builder &b, const std::array<Reg, 2> &diag_limit, int chunks,
                      const std::function<Reg(int, int, int)> &score) {
  for (int i = 0; i < chunks; ++i)
    for (int h = 0; h < 2; ++h)
      for (int e = 0; e < 2; ++e) {
        const Reg masked = b.temp(Type::kPred, "masked");
        b.setp(masked, Cmp::kLt, Type::kS32, diag_limit[size_t(h)], imm(8 * i + e));
        auto g = b.when(masked);
        b.mov(score(i, h, e), f32(-INFINITY));
      }
}

void emit_rescale_o(Builder &b, const std::array<Reg, 2> &need, const std::array<Reg, 2> &alpha, int chunks,
                    const std::function<Reg(int, int, int)> &o, const std::array<Reg, 2> &l,
                    const char *skip_label) {
  const Reg either = b.temp(Type::kPred, "need_either");
  b.or_(either, need[0], need[1]);
  const Reg any = b.temp(Type::kPred, "need_any");
  b.vote_any(any, either);
  const int skip = b.new_label(skip_label);
  {
    auto g = b.unless(any);
    b.bra(skip);
  }
  for (int i = 0; i < chunks; ++i)
    for (int h = 0; h < 2; ++h)
      for (int e = 0; e < 2; ++e) {
        const Reg r = o(i, h, e);
        b.mul(r, r, alpha[size_t(h)]);
      }
  for (int h = 0; h < 2; ++h) b.mul(l[size_t(h)], l[size_t(h)], alpha[size_t(h)]);
  b.place(skip);
}

void emit_fold(Builder &b, const std::array<Reg, 2> &unscale, int first_chunk, int chunks,
               const std::function<Reg(int, int, int)> &o, const std::function<Reg(int, int, int)> &acc,
               const std::array<Reg, 2> &l, const std::function<Reg(int)> &rowsum) {
  for (int i = first_chunk; i < first_chunk + chunks; ++i)
    for (int h = 0; h < 2; ++h)
      for (int e = 0; e < 2; ++e) {
        const Reg r = o(i, h, e);
        b.fma(r, acc(i, h, e), unscale[size_t(h)], r);
      }
  if (!rowsum) return;
  for (int h = 0; h < 2; ++h) b.fma(l[size_t(h)], rowsum(h), unscale[size_t(h)], l[size_t(h)]);
}

namespace {

// prmt selector {y0.bytes 2-3, y1.bytes 2-3}: the two codes' 16-bit fields (numerics.h) side by side.
constexpr int kLeanFieldsOfTwo = prmt_selector(2, 3, 6, 7);

}  // namespace

void emit_unscale(Builder &b, Reg m, Reg bmax, Reg unscale, bool lean_p) {
  const Reg x = b.temp(Type::kF32, "unscale_log2");
  b.sub(x, bmax, m);
  b.sub(x, x, f32(nx::fp8_top_binade(lean_p)));
  b.max(x, x, f32(-float(nx::kMaxBlockShift + nx::kFp8HeadroomBinades)));
  b.ex2(unscale, x);
}

Reg emit_code_offset(Builder &b, Reg bmax, bool lean_p) {
  if (!lean_p) {
    const Reg bias = b.temp(Type::kF32, "exp_bias");
    b.sub(bias, f32(float(nx::kFp8HeadroomBinades)), bmax);
    return bias;
  }
  const Reg offset = b.temp(Type::kF32, "code_offset");
  b.fma(offset, bmax, f32(nx::kLeanOffsetPerBmax), f32(nx::kLeanOffsetAtZero));  // numerics::fp8_lean_p_offset
  return offset;
}

void emit_lean_code(Builder &b, Reg dst, Reg s, Reg lean_scale, Reg offset) { b.fma(dst, s, lean_scale, offset); }

void emit_lean_code_pairs(Builder &b, Reg dst, Reg y0, Reg y1, Reg code_zero) {
  b.prmt(dst, y0, y1, imm(kLeanFieldsOfTwo));
  b.max_s16x2(dst, dst, code_zero);
}

void emit_exact_exponent(Builder &b, Reg dst, Reg s, Reg c, Reg bias) { b.fma(dst, s, c, bias); }

Reg emit_lean_code_zero(Builder &b) {
  const Reg code_zero = b.temp(Type::kB32, "code_zero");  // ptxas folds it into VIMNMX's immediate
  b.mov(code_zero, imm(int64_t(nx::kLeanFieldOfCodeZero) * 0x10001));
  return code_zero;
}

void emit_exact_p(Builder &b, Reg dst, Reg s, Reg c, Reg bias) {
  emit_exact_exponent(b, dst, s, c, bias);
  b.ex2(dst, dst);
}

}  // namespace zyfa::asmgen
