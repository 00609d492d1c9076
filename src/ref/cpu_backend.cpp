// The GPU kernels' recurrence (src/kernels/numerics.h) on the host. One work unit is one (batch, head,
// query tile); every query row runs the recurrence over key blocks of numerics::kKeyBlock keys itself,
// so the only freedom left is the order of fp32 sums, which is fixed here (see README).
#include "ref/cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/numerics.h"
#include "ref/fp32_dot.hpp"
#include "ref/parallel_for.hpp"
#include "ref/tensor_core_sums.hpp"

namespace zyfa::ref {
namespace {

namespace nx = numerics;

// The value of every e4m3 code: the backend reads FP8 inputs and P codes through it.
struct E4m3Table {
  float value[256];
  E4m3Table() {
    for (int c = 0; c < 256; ++c) value[c] = nx::e4m3_value(uint8_t(c));
  }
};
const E4m3Table &e4m3_table() {
  static const E4m3Table table;
  return table;
}

// Raw input element as fp32: the BF16 value or the FP8 code's value, without its descale (the kernels
// multiply raw codes and fold the descales into c and into the final scaling).
float raw_input(const Problem &p, const TensorRef &t, int64_t b, int64_t s, int64_t h, int64_t d) {
  const int64_t at = t.offset(b, s, h) + d;
  if (p.fp8()) return e4m3_table().value[static_cast<const uint8_t *>(t.ptr)[at]];
  return nx::bf16_value(static_cast<const uint16_t *>(t.ptr)[at]);
}
// The exponent the tensor cores align an FP8 input element by.
int16_t raw_exponent(const TensorRef &t, int64_t b, int64_t s, int64_t h, int64_t d) {
  return fp8_exponent(static_cast<const uint8_t *>(t.ptr)[t.offset(b, s, h) + d]);
}

// What stays fixed for one (batch, kv head): the scale c of numerics.h and the recurrence's choices.
struct HeadConstants {
  float c;          // base-2 score scale: softmax_scale * log2(e) [* q_descale * k_descale]
  float v_descale;  // FP8 only
  bool fp8;
  bool lean_p;
  bool split_p;  // exact P's codes plus a second product of their e4m3 residuals
  bool tensor_core_sums;  // FP8 products summed as the tensor cores do (tensor_core_sums.hpp)
};

HeadConstants head_constants(const Problem &p, Fp8Sums sums, int64_t b, int64_t hk) {
  HeadConstants k;
  k.fp8 = p.fp8();
  k.tensor_core_sums = k.fp8 && sums == Fp8Sums::kTensorCores;
  k.lean_p = k.fp8 && p.lean_p;  // validation resolved the descriptor's p_rounding
  k.split_p = k.fp8 && p.split_p;
  k.c = p.softmax_scale * nx::kLog2e;
  if (k.fp8) {
    k.c = k.c * p.q_descale.host_value(b, hk);
    k.c = k.c * p.k_descale.host_value(b, hk);
  }
  k.v_descale = k.fp8 ? p.v_descale.host_value(b, hk) : 1.0f;
  return k;
}

// Per-worker buffers, sized once for the whole problem.
struct Scratch {
  std::vector<float> k, v;  // keys 0..n of one (batch, kv head), raw, rows of d_qk and d_v
  std::vector<float> q;     // one query row, raw
  std::vector<float> scores, o, acc;
  // FP8 with tensor-core sums (the rest stay empty): K transposed (kt[d * seqlen + j], so that a block's
  // scores are the columns of one product), the exponents of kt, v and q, and a block's P values and
  // exponents (twice with split P), and the ones rows of V^T
  std::vector<float> kt, p, ones;
  std::vector<int16_t> kt_exp, v_exp, q_exp, p_exp, ones_exp;
  Scratch(const Problem &pr, bool tensor_core_sums)
      : k(size_t(pr.seqlen * pr.d_qk)), v(size_t(pr.seqlen * pr.d_v)), q(size_t(pr.d_qk)),
        scores(size_t(nx::kKeyBlock)), o(size_t(pr.d_v)), acc(size_t(pr.d_v)) {
    if (!tensor_core_sums) return;
    kt.resize(k.size());
    kt_exp.resize(k.size());
    v_exp.resize(v.size());
    q_exp.resize(q.size());
    p.resize(size_t(2 * nx::kKeyBlock));
    p_exp.resize(p.size());
    ones.assign(size_t(nx::kKeyBlock), 1.0f);
    ones_exp.assign(ones.size(), fp8_exponent(uint8_t(nx::kE4m3CodeOfOne)));
  }
};

// The running state of one query row.
struct Row {
  float m = -INFINITY;  // reference max, base 2
  float l = 0.0f;       // denominator in units of 2^m
  float *o;             // unnormalized output, d_v values
};

void add_scaled(float *dst, const float *v_row, float p, int64_t n) {
  for (int64_t d = 0; d < n; ++d) dst[d] += p * v_row[d];
}

void lazy_rescale(Row &row, float bmax, const HeadConstants &k, int64_t d_v) {
  if (!nx::lazy_rescale_due(row.m, bmax, nx::lazy_rescale_threshold(k.fp8))) return;
  const float m_new = k.fp8 ? nx::fp8_reference_max(bmax) : bmax;
  const float alpha = std::exp2(row.m - m_new);
  for (int64_t d = 0; d < d_v; ++d) row.o[d] *= alpha;
  row.l *= alpha;
  row.m = m_new;
}

// BF16: P rounded to bf16, the denominator summed from the same rounded values.
void block_bf16(Row &row, const float *scores, int64_t n, const float *v, const HeadConstants &k,
                int64_t d_v) {
  for (int64_t j = 0; j < n; ++j) {
    const float p = nx::round_bf16(std::exp2(std::fma(scores[j], k.c, -row.m)));
    if (p == 0.0f) continue;
    row.l += p;
    add_scaled(row.o, v + j * d_v, p, d_v);
  }
}

// acc = sum_j p_j v_j and rs = sum_j p_j over the block's n keys as the tensor cores form them: one P V
// product (m64n136: V^T's ones rows give rs) in k-steps of 32 keys into a fresh accumulator, and with split P
// a second product of the residuals into the same one. v_exp: the exponents of the block's V.
void tensor_core_pv(Scratch &s, int64_t n, int products, const float *v, const int16_t *v_exp, int64_t d_v, float *acc,
                    float &rs) {
  for (int i = 0; i < products; ++i) {
    const float *p = &s.p[size_t(i * nx::kKeyBlock)];
    const int16_t *p_exp = &s.p_exp[size_t(i * nx::kKeyBlock)];
    qgmma_columns(acc, p, p_exp, v, v_exp, d_v, int(d_v), int(n));
    qgmma_columns(&rs, p, p_exp, s.ones.data(), s.ones_exp.data(), 1, 1, int(n));
  }
}

// FP8: P as e4m3 codes of the block scaled up (numerics.h), PV into a fresh accumulator, folded back.
// v_exp (the exponents of the block's V) only with tensor-core sums.
void block_fp8(Row &row, float bmax, const float *scores, int64_t n, const float *v, const int16_t *v_exp,
               const HeadConstants &k, int64_t d_v, float *acc, Scratch &s) {
  const float *code_value = e4m3_table().value;
  const float lean_scale = nx::fp8_lean_p_scale(k.c);
  const float lean_offset = nx::fp8_lean_p_offset(bmax);
  const float exp_bias = nx::fp8_exact_p_bias(bmax);
  std::fill(acc, acc + d_v, 0.0f);
  float rs = 0.0f;
  auto exact_p = [&](int64_t j) { return std::exp2(std::fma(scores[j], k.c, exp_bias)); };
  // P's code for key j of product i (0: the codes, 1: split P's residuals).
  auto add = [&](int i, int64_t j, uint8_t code) {
    const float p = code_value[code];
    if (k.tensor_core_sums) {
      s.p[size_t(i * nx::kKeyBlock + j)] = p;
      s.p_exp[size_t(i * nx::kKeyBlock + j)] = fp8_exponent(code);
      return;
    }
    if (p == 0.0f) return;
    rs += p;
    add_scaled(acc, v + j * d_v, p, d_v);
  };
  for (int64_t j = 0; j < n; ++j)
    add(0, j, k.lean_p ? nx::lean_p_code(scores[j], lean_scale, lean_offset) : nx::e4m3_code(exact_p(j)));
  // Split P: the residuals' product, after the block's first one, into the same sums.
  if (k.split_p)
    for (int64_t j = 0; j < n; ++j) {
      const float p = exact_p(j);
      add(1, j, nx::e4m3_code(nx::fp8_split_p_lo(p, code_value[nx::e4m3_code(p)])));
    }
  if (k.tensor_core_sums) tensor_core_pv(s, n, k.split_p ? 2 : 1, v, v_exp, d_v, acc, rs);
  const float unscale = std::exp2(nx::fp8_unscale_log2(row.m, bmax, k.lean_p));
  for (int64_t d = 0; d < d_v; ++d) row.o[d] += unscale * acc[d];
  row.l += unscale * rs;
}

void load_kv(const Problem &p, int64_t b, int64_t hk, int64_t n_keys, Scratch &s) {
  const bool tensor_core_sums = !s.kt.empty();
  for (int64_t j = 0; j < n_keys; ++j) {
    for (int64_t d = 0; d < p.d_qk; ++d) {
      s.k[size_t(j * p.d_qk + d)] = raw_input(p, p.k, b, j, hk, d);
      if (!tensor_core_sums) continue;
      s.kt[size_t(d * p.seqlen + j)] = s.k[size_t(j * p.d_qk + d)];
      s.kt_exp[size_t(d * p.seqlen + j)] = raw_exponent(p.k, b, j, hk, d);
    }
    for (int64_t d = 0; d < p.d_v; ++d) {
      s.v[size_t(j * p.d_v + d)] = raw_input(p, p.v, b, j, hk, d);
      if (tensor_core_sums) s.v_exp[size_t(j * p.d_v + d)] = raw_exponent(p.v, b, j, hk, d);
    }
  }
}

// One query row i against key blocks 0..i/kKeyBlock; writes its output and LSE.
void attend_row(const Problem &p, const HeadConstants &k, int64_t b, int64_t h, int64_t i, Scratch &s) {
  for (int64_t d = 0; d < p.d_qk; ++d) s.q[size_t(d)] = raw_input(p, p.q, b, i, h, d);
  if (k.tensor_core_sums)
    for (int64_t d = 0; d < p.d_qk; ++d) s.q_exp[size_t(d)] = raw_exponent(p.q, b, i, h, d);
  std::fill(s.o.begin(), s.o.end(), 0.0f);
  Row row;
  row.o = s.o.data();
  for (int64_t j0 = 0; j0 <= i; j0 += nx::kKeyBlock) {
    const int64_t n = std::min<int64_t>(nx::kKeyBlock, i + 1 - j0);
    float smax = -INFINITY;
    if (k.tensor_core_sums) {  // the block's scores: one product's columns
      std::fill(s.scores.begin(), s.scores.end(), 0.0f);
      qgmma_columns(s.scores.data(), s.q.data(), s.q_exp.data(), &s.kt[size_t(j0)], &s.kt_exp[size_t(j0)], p.seqlen,
                    int(n), int(p.d_qk));
    }
    for (int64_t j = 0; j < n; ++j) {
      if (!k.tensor_core_sums) s.scores[size_t(j)] = fp32_dot(s.q.data(), &s.k[size_t((j0 + j) * p.d_qk)], p.d_qk);
      smax = std::max(smax, s.scores[size_t(j)]);
    }
    const float bmax = k.c * smax;
    lazy_rescale(row, bmax, k, p.d_v);
    const float *v = &s.v[size_t(j0 * p.d_v)];
    if (k.fp8)
      block_fp8(row, bmax, s.scores.data(), n, v, k.tensor_core_sums ? &s.v_exp[size_t(j0 * p.d_v)] : nullptr, k,
                p.d_v, s.acc.data(), s);
    else block_bf16(row, s.scores.data(), n, v, k, p.d_v);
  }
  uint16_t *out = static_cast<uint16_t *>(p.out_ptr()) + p.out.offset(b, i, h);
  const float scale = nx::output_scale(row.l, k.fp8 ? k.v_descale : 1.0f);
  for (int64_t d = 0; d < p.d_v; ++d) out[d] = nx::bf16_bits(row.o[d] * scale);
  if (p.lse) p.lse[(b * p.nheads + h) * p.seqlen + i] = (row.m + std::log2(row.l)) * nx::kLn2;
}

}  // namespace

void attention_cpu_backend(const Problem &p, Fp8Sums fp8_sums) {
  const RowBlocks tiles{p.batch, p.nheads, p.seqlen, nx::kQueryTile};
  std::vector<Scratch> scratch(size_t(worker_count(tiles.count())),
                               Scratch(p, p.fp8() && fp8_sums == Fp8Sums::kTensorCores));
  parallel_for(tiles.count(), [&](int w, int64_t unit) {
    const RowBlocks::Unit u = tiles[unit];
    const int64_t hk = u.h / p.group();
    Scratch &s = scratch[size_t(w)];
    load_kv(p, u.b, hk, u.row1, s);
    const HeadConstants k = head_constants(p, fp8_sums, u.b, hk);
    for (int64_t i = u.row0; i < u.row1; ++i) attend_row(p, k, u.b, u.h, i, s);
  });
}

}  // namespace zyfa::ref
