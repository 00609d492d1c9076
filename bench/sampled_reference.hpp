// The fp64 oracle on a fixed random subset of query rows. A full fp64 reference at S = 16K and 32 heads
// costs about 1e12 fp64 operations, minutes on the device's CPU for each of the study's 60 cases; causal
// attention of one row needs only its own keys, so rows can be computed alone. Every row is computed
// exactly as zyfa::ref::attention_fp64 computes it (inputs read through ref::input_value, two-pass
// softmax in fp64); the dry mode checks the two agree on a small problem.
#ifndef ZYFA_BENCH_SAMPLED_REFERENCE_HPP_
#define ZYFA_BENCH_SAMPLED_REFERENCE_HPP_

#include <cstdint>
#include <vector>

#include "host/problem.hpp"
#include "shapes.hpp"

namespace zyfa::bench {

struct RowId {
  int64_t b = 0, h = 0, s = 0;  // batch, query head, query position
  // The rows of its (batch, head) this row stands for (1 for a row always taken): an error summed with
  // these weights estimates the whole output's. Unweighted, the first row (one key, its output exactly v_0,
  // so no error and the largest norm of any row) held 75% of the reference's sum of squares at 4K and 94% at
  // 16K among 64 rows a head, and the relative RMS read 2x (4K) to 3.5x (16K) too low (session 52).
  double weight = 1.0;
};

// `per_head` distinct positions per (batch, head): always the first and (per_head > 1) the last row (the
// shortest and the longest softmax), the rest drawn without replacement from a seeded generator in strata of positions
// [1, 2), [2, 4), [4, 8), ... (sampled_reference.cpp says why), each weighted by its stratum's size over its
// draws (with fewer draws than strata the lowest strata merge); all rows, of weight 1, when per_head >= seqlen.
// The weights of a head sum to seqlen when per_head >= 3 (kMinRowsPerHead). Ordered by (b, h, s).
std::vector<RowId> sample_rows(const Shape &shape, int64_t per_head, uint64_t seed);

// Where row `r`'s output starts in a BSHD output (batch, seqlen, nheads, d_v), and its LSE in (batch, nheads,
// seqlen): elements, not bytes.
size_t out_row_offset(const Shape &shape, const RowId &r);
size_t lse_offset(const Shape &shape, const RowId &r);

// One weight per value of rows of `values_per_row` values each (d_v for outputs, 1 for the LSE), in the order
// gather_rows lays them out: the `weights` of compare_to_reference.
std::vector<double> value_weights(const std::vector<RowId> &rows, int64_t values_per_row);

struct SampledReference {
  std::vector<RowId> rows;
  std::vector<double> out;  // rows.size() x d_v
  std::vector<double> lse;  // rows.size(), natural log
};

// `problem` over host memory. Multi-threaded over (batch, kv head).
SampledReference reference_rows(const Problem &problem, std::vector<RowId> rows);

// The same rows picked out of a full output (batch, seqlen, nheads, d_v) and LSE (batch, nheads, seqlen).
void gather_rows(const Shape &shape, const std::vector<RowId> &rows, const std::vector<float> &out,
                 const std::vector<float> &lse, std::vector<double> *out_rows, std::vector<double> *lse_rows);

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_SAMPLED_REFERENCE_HPP_
