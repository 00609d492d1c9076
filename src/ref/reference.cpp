// The fp64 oracle: a plain two-pass softmax per query row, every input read through input_value, so
// that it shares nothing with the CPU backend's recurrence beyond the input decoding of numerics.h.
#include "ref/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/numerics.h"
#include "ref/parallel_for.hpp"

namespace zyfa::ref {

double input_value(const Problem &problem, const TensorRef &t, const Descale &descale, int64_t b,
                   int64_t s, int64_t h, int64_t kv_head, int64_t d) {
  const int64_t at = t.offset(b, s, h) + d;
  if (!problem.fp8()) return numerics::bf16_value(static_cast<const uint16_t *>(t.ptr)[at]);
  return double(numerics::e4m3_value(static_cast<const uint8_t *>(t.ptr)[at])) *
         double(descale.host_value(b, kv_head));
}

namespace {

// Keys and values of one (batch, kv head) in fp64, rows of d_qk and d_v.
struct KvRows {
  std::vector<double> k, v;
};

// Query rows per work unit: enough rows that loading their keys (up to the chunk's last row) costs little
// beside attending to them, few enough that one head of a long sequence spreads over every core.
constexpr int64_t kRowsPerUnit = 128;

// Rows 0 .. rows - 1 of keys and values.
void load_kv(const Problem &p, int64_t b, int64_t hk, int64_t rows, KvRows &kv) {
  for (int64_t s = 0; s < rows; ++s) {
    for (int64_t d = 0; d < p.d_qk; ++d)
      kv.k[size_t(s * p.d_qk + d)] = input_value(p, p.k, p.k_descale, b, s, hk, hk, d);
    for (int64_t d = 0; d < p.d_v; ++d)
      kv.v[size_t(s * p.d_v + d)] = input_value(p, p.v, p.v_descale, b, s, hk, hk, d);
  }
}

// One query row against keys 0..i (causal): out_row gets d_v values, the return value is the LSE.
double attend_row(const Problem &p, const double *q_row, const KvRows &kv, int64_t i,
                  std::vector<double> &scores, double *out_row) {
  const double scale = double(p.softmax_scale);
  double row_max = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j <= i; ++j) {
    const double *k_row = &kv.k[size_t(j * p.d_qk)];
    // Four partial sums break the add latency chain; in fp64 their order is far below any tolerance.
    double part[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t d = 0;
    for (; d + 4 <= p.d_qk; d += 4)
      for (int l = 0; l < 4; ++l) part[l] += q_row[d + l] * k_row[d + l];
    for (; d < p.d_qk; ++d) part[0] += q_row[d] * k_row[d];
    scores[size_t(j)] = scale * ((part[0] + part[1]) + (part[2] + part[3]));
    row_max = std::max(row_max, scores[size_t(j)]);
  }
  double sum = 0.0;
  std::fill(out_row, out_row + p.d_v, 0.0);
  for (int64_t j = 0; j <= i; ++j) {
    const double w = std::exp(scores[size_t(j)] - row_max);
    sum += w;
    const double *v_row = &kv.v[size_t(j * p.d_v)];
    for (int64_t d = 0; d < p.d_v; ++d) out_row[d] += w * v_row[d];
  }
  for (int64_t d = 0; d < p.d_v; ++d) out_row[d] /= sum;
  return row_max + std::log(sum);
}

}  // namespace

ReferenceResult attention_fp64(const Problem &p) {
  ReferenceResult result;
  result.out.assign(size_t(p.batch * p.seqlen * p.nheads * p.d_v), 0.0);
  result.lse.assign(size_t(p.batch * p.nheads * p.seqlen), 0.0);
  const RowBlocks chunks{p.batch, p.nheads, p.seqlen, kRowsPerUnit};
  const int workers = worker_count(chunks.count());
  // Every buffer is sized here, before the threads start: a worker never allocates.
  std::vector<KvRows> kv(static_cast<size_t>(workers));
  for (KvRows &rows : kv) {
    rows.k.resize(size_t(p.seqlen * p.d_qk));
    rows.v.resize(size_t(p.seqlen * p.d_v));
  }
  std::vector<std::vector<double>> scores(size_t(workers), std::vector<double>(size_t(p.seqlen)));
  std::vector<std::vector<double>> q_rows(size_t(workers), std::vector<double>(size_t(p.d_qk)));
  parallel_for(chunks.count(), [&](int w, int64_t unit) {
    const RowBlocks::Unit u = chunks[unit];
    const int64_t b = u.b, h = u.h, hk = h / p.group();
    load_kv(p, b, hk, u.row1, kv[size_t(w)]);
    double *q_row = q_rows[size_t(w)].data();
    for (int64_t i = u.row0; i < u.row1; ++i) {
      for (int64_t d = 0; d < p.d_qk; ++d) q_row[d] = input_value(p, p.q, p.q_descale, b, i, h, hk, d);
      double *out_row = &result.out[size_t(((b * p.seqlen + i) * p.nheads + h) * p.d_v)];
      result.lse[size_t((b * p.nheads + h) * p.seqlen + i)] =
          attend_row(p, q_row, kv[size_t(w)], i, scores[size_t(w)], out_row);
    }
  });
  return result;
}

}  // namespace zyfa::ref
