#include "sampled_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "ref/parallel_for.hpp"
#include "ref/reference.hpp"

namespace zyfa::bench {

std::vector<RowId> sample_rows(const Shape &shape, int64_t per_head, uint64_t seed) {
  std::vector<RowId> rows;
  std::mt19937_64 rng(seed);
  std::vector<int64_t> positions(size_t(shape.seqlen));
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.nheads; ++h) {
      for (int64_t s = 0; s < shape.seqlen; ++s) positions[size_t(s)] = s;
      int64_t take = std::min(per_head, shape.seqlen);
      if (take < shape.seqlen) {
        // First and last rows, then a partial Fisher-Yates shuffle of the middle rows.
        std::swap(positions[1], positions[size_t(shape.seqlen - 1)]);
        for (int64_t i = 2; i < take; ++i) {
          std::uniform_int_distribution<int64_t> pick(i, shape.seqlen - 1);
          std::swap(positions[size_t(i)], positions[size_t(pick(rng))]);
        }
      }
      std::vector<int64_t> chosen(positions.begin(), positions.begin() + take);
      std::sort(chosen.begin(), chosen.end());
      for (int64_t s : chosen) rows.push_back({b, h, s});
    }
  }
  return rows;
}

SampledReference reference_rows(const Problem &p, std::vector<RowId> rows) {
  SampledReference ref;
  ref.rows = std::move(rows);
  ref.out.assign(ref.rows.size() * size_t(p.d_v), 0.0);
  ref.lse.assign(ref.rows.size(), 0.0);
  // Rows grouped by (batch, kv head): each worker decodes one head's keys and values once.
  const int64_t units = p.batch * p.nheads_k;
  std::vector<std::vector<size_t>> by_unit(static_cast<size_t>(units));
  for (size_t i = 0; i < ref.rows.size(); ++i) {
    const RowId &r = ref.rows[i];
    by_unit[size_t(r.b * p.nheads_k + r.h / p.group())].push_back(i);
  }
  ref::parallel_for(units, [&](int, int64_t unit) {
    const auto &mine = by_unit[size_t(unit)];
    if (mine.empty()) return;
    const int64_t b = unit / p.nheads_k, hk = unit % p.nheads_k;
    int64_t keys = 0;
    for (size_t i : mine) keys = std::max(keys, ref.rows[i].s + 1);
    std::vector<double> k(static_cast<size_t>(keys * p.d_qk)), v(static_cast<size_t>(keys * p.d_v));
    std::vector<double> q(static_cast<size_t>(p.d_qk)), scores(static_cast<size_t>(keys));
    for (int64_t j = 0; j < keys; ++j) {
      for (int64_t d = 0; d < p.d_qk; ++d) k[size_t(j * p.d_qk + d)] = ref::input_value(p, p.k, p.k_descale, b, j, hk, hk, d);
      for (int64_t d = 0; d < p.d_v; ++d) v[size_t(j * p.d_v + d)] = ref::input_value(p, p.v, p.v_descale, b, j, hk, hk, d);
    }
    const double scale = double(p.softmax_scale);
    for (size_t i : mine) {
      const RowId &r = ref.rows[i];
      for (int64_t d = 0; d < p.d_qk; ++d) q[size_t(d)] = ref::input_value(p, p.q, p.q_descale, b, r.s, r.h, hk, d);
      double row_max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j <= r.s; ++j) {
        double dot = 0.0;
        for (int64_t d = 0; d < p.d_qk; ++d) dot += q[size_t(d)] * k[size_t(j * p.d_qk + d)];
        scores[size_t(j)] = scale * dot;
        row_max = std::max(row_max, scores[size_t(j)]);
      }
      double sum = 0.0;
      double *out = &ref.out[i * size_t(p.d_v)];
      for (int64_t j = 0; j <= r.s; ++j) {
        const double w = std::exp(scores[size_t(j)] - row_max);
        sum += w;
        for (int64_t d = 0; d < p.d_v; ++d) out[d] += w * v[size_t(j * p.d_v + d)];
      }
      for (int64_t d = 0; d < p.d_v; ++d) out[d] /= sum;
      ref.lse[i] = row_max + std::log(sum);
    }
  });
  return ref;
}

void gather_rows(const Shape &shape, const std::vector<RowId> &rows, const std::vector<float> &out,
                 const std::vector<float> &lse, std::vector<double> *out_rows, std::vector<double> *lse_rows) {
  out_rows->clear();
  lse_rows->clear();
  for (const RowId &r : rows) {
    const size_t at = size_t(((r.b * shape.seqlen + r.s) * shape.nheads + r.h) * shape.d_v);
    for (int64_t d = 0; d < shape.d_v; ++d) out_rows->push_back(out[at + size_t(d)]);
    if (!lse.empty()) lse_rows->push_back(lse[size_t((r.b * shape.nheads + r.h) * shape.seqlen + r.s)]);
  }
}

}  // namespace zyfa::bench
