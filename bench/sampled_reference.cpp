#include "sampled_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "ref/parallel_for.hpp"
#include "ref/reference.hpp"

namespace zyfa::bench {

namespace {

// A range of query positions [lo, hi) and how many of its rows are drawn.
struct Stratum {
  int64_t lo, hi, take = 0;
  int64_t size() const { return hi - lo; }
};

// Positions 1 .. seqlen - 2 in strata that double in length ([1, 2), [2, 4), [4, 8), ...): a row at position s
// averages about s + 1 values, so its output's squared norm falls as 1 / (s + 1), and every stratum holds
// about the same share of the output's. The draws are shared out evenly (a stratum smaller than its share is
// taken whole), which keeps the weighted estimate's variance low where uniform draws were dominated by the
// few short rows they happened to hit.
std::vector<Stratum> strata(int64_t seqlen, int64_t draws) {
  std::vector<Stratum> out;
  for (int64_t lo = 1; lo < seqlen - 1; lo *= 2) out.push_back({lo, std::min(2 * lo, seqlen - 1)});
  // Fewer draws than strata: the lowest strata merge, so that every stratum has a draw to stand for its rows.
  while (int64_t(out.size()) > std::max<int64_t>(draws, 1)) {
    out[1].lo = out[0].lo;
    out.erase(out.begin());
  }
  std::vector<Stratum *> open;
  for (Stratum &st : out) open.push_back(&st);
  // Small strata first: each one at or under the even share is taken whole, and the rest share what is left.
  std::sort(open.begin(), open.end(), [](const Stratum *a, const Stratum *b) { return a->size() < b->size(); });
  size_t i = 0;
  for (; i < open.size(); ++i) {
    const int64_t share = draws / int64_t(open.size() - i);
    if (open[i]->size() > share) break;
    open[i]->take = open[i]->size();
    draws -= open[i]->take;
  }
  const int64_t left = int64_t(open.size() - i);
  for (size_t j = i; j < open.size(); ++j) open[j]->take = draws / left + (int64_t(j - i) < draws % left ? 1 : 0);
  return out;
}

}  // namespace

std::vector<RowId> sample_rows(const Shape &shape, int64_t per_head, uint64_t seed) {
  std::vector<RowId> rows;
  std::mt19937_64 rng(seed);
  const int64_t S = shape.seqlen;
  const bool all = per_head >= S;
  // The first and last rows (the shortest and the longest softmax), then per_head - 2 drawn over the strata.
  const std::vector<Stratum> parts = all ? std::vector<Stratum>{} : strata(S, std::max<int64_t>(per_head - 2, 0));
  std::vector<int64_t> positions;
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.nheads; ++h) {
      if (all) {
        for (int64_t s = 0; s < S; ++s) rows.push_back({b, h, s, 1.0});
        continue;
      }
      rows.push_back({b, h, 0, 1.0});
      for (const Stratum &st : parts) {
        if (st.take == 0) continue;
        positions.resize(size_t(st.size()));
        for (int64_t k = 0; k < st.size(); ++k) positions[size_t(k)] = st.lo + k;
        for (int64_t k = 0; k < st.take; ++k) {  // a partial Fisher-Yates shuffle
          std::uniform_int_distribution<int64_t> pick(k, st.size() - 1);
          std::swap(positions[size_t(k)], positions[size_t(pick(rng))]);
        }
        std::sort(positions.begin(), positions.begin() + st.take);
        const double weight = double(st.size()) / double(st.take);
        for (int64_t k = 0; k < st.take; ++k) rows.push_back({b, h, positions[size_t(k)], weight});
      }
      if (S > 1 && per_head > 1) rows.push_back({b, h, S - 1, 1.0});
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

size_t out_row_offset(const Shape &shape, const RowId &r) {
  return size_t(((r.b * shape.seqlen + r.s) * shape.nheads + r.h) * shape.d_v);
}

size_t lse_offset(const Shape &shape, const RowId &r) {
  return size_t((r.b * shape.nheads + r.h) * shape.seqlen + r.s);
}

std::vector<double> value_weights(const std::vector<RowId> &rows, int64_t values_per_row) {
  std::vector<double> w;
  w.reserve(rows.size() * size_t(values_per_row));
  for (const RowId &r : rows) w.insert(w.end(), size_t(values_per_row), r.weight);
  return w;
}

void gather_rows(const Shape &shape, const std::vector<RowId> &rows, const std::vector<float> &out,
                 const std::vector<float> &lse, std::vector<double> *out_rows, std::vector<double> *lse_rows) {
  out_rows->clear();
  lse_rows->clear();
  for (const RowId &r : rows) {
    const size_t at = out_row_offset(shape, r);
    for (int64_t d = 0; d < shape.d_v; ++d) out_rows->push_back(out[at + size_t(d)]);
    if (!lse.empty()) lse_rows->push_back(lse[lse_offset(shape, r)]);
  }
}

}  // namespace zyfa::bench
