// Numerics study: which of zyfa's BF16 softmax choices costs accuracy on the bench's inputs.
// Regenerates the bench's exact tensors and rows (bench/inputs.hpp's make_activations, bench/sampled_reference.hpp's
// sample_rows, both seeded by case_seed), computes the fp64 oracle, and runs variants of the recurrence on the
// scores the CPU backend forms (ref::fp32_dot). Relative RMS as src/ref/error_norms.cpp (pooled over all rows,
// each weighted by the rows it stands for).
//
// usage: errstudy FAMILY S INPUTS [rows_per_head=64] [max_heads=0(all)]
//   FAMILY: gqa-d128 | gqa-d192 | mha-d128 | mha-d192 | llama3.1-8b;  INPUTS: structured | gaussian | outlier
// Build, from the repository root, on a configured bench build in BUILD (e.g. /work/build-cand-main-bench of
// tools/device/prepare_candidate.sh):
//   g++ -O2 -std=c++17 -Iinclude -Isrc -Itest -Ibench -I/usr/local/cuda/include
//       bench/candidates/bf16-rounding-study.cpp bench/inputs.cpp bench/shapes.cpp bench/sampled_reference.cpp
//       BUILD/bench/libzyfa_bench_support.a BUILD/libzyfa_static.a -L/usr/local/cuda/lib64 -lcudart -ldl -lpthread
//       -o errstudy
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "inputs.hpp"
#include "kernels/numerics.h"
#include "ref/fp32_dot.hpp"
#include "ref/parallel_for.hpp"
#include "sampled_reference.hpp"
#include "support/activations.hpp"

namespace nx = zyfa::numerics;
using namespace zyfa;
using bench::RowId;

enum PMode { kPBf16, kPFp32 };
enum LMode { kLBf16P, kLFp32P };
enum OutMode { kOutRcpMulBf16, kOutDivBf16, kOutFp32 };

struct Variant {
  const char *name;
  float tau;       // lazy-rescale threshold; 0 = m follows every block max (FA3/cuDNN)
  PMode p;         // P in the numerator
  LMode l;         // what the denominator sums
  OutMode out;
  int block = nx::kKeyBlock;
  int pround = 0;  // 0: bf16(exp2(c s - m)); 1: bf16(exp2(c s - bmax)) * exp2(bmax - m) in fp32 (block max exact);
                   // 2: as 0 but P > 1 (keys above the stale reference) left unrounded (fp32)
};

static std::vector<Variant> variants() {
  return {
      {"A zyfa   tau8 l=sum bf16P", 8, kPBf16, kLBf16P, kOutRcpMulBf16},
      {"B fa3    tau0 l=sum fp32P", 0, kPBf16, kLFp32P, kOutRcpMulBf16},
      {"C        tau8 l=sum fp32P", 8, kPBf16, kLFp32P, kOutRcpMulBf16},
      {"D        tau0 l=sum bf16P", 0, kPBf16, kLBf16P, kOutRcpMulBf16},
      {"E1 A, out=O/l (div)     ", 8, kPBf16, kLBf16P, kOutDivBf16},
      {"E2 B, out=O/l (div)     ", 0, kPBf16, kLFp32P, kOutDivBf16},
      {"F  exact fp32 P, tau0   ", 0, kPFp32, kLFp32P, kOutRcpMulBf16},
      {"A' A, fp32 out (no rnd) ", 8, kPBf16, kLBf16P, kOutFp32},
      {"B' B, fp32 out (no rnd) ", 0, kPBf16, kLFp32P, kOutFp32},
      {"C' C, fp32 out (no rnd) ", 8, kPBf16, kLFp32P, kOutFp32},
      {"D' D, fp32 out (no rnd) ", 0, kPBf16, kLBf16P, kOutFp32},
      {"G1 tau0.5 l=sum bf16P   ", 0.5f, kPBf16, kLBf16P, kOutRcpMulBf16},
      {"G2 tau2   l=sum bf16P   ", 2, kPBf16, kLBf16P, kOutRcpMulBf16},
      {"G3 tau4   l=sum bf16P   ", 4, kPBf16, kLBf16P, kOutRcpMulBf16},
      {"G7 tau3   l=sum bf16P   ", 3, kPBf16, kLBf16P, kOutRcpMulBf16},
      {"G4 tau8 blk64 bf16P     ", 8, kPBf16, kLBf16P, kOutRcpMulBf16, 64},
      {"G5 tau0 blk176 fp32P    ", 0, kPBf16, kLFp32P, kOutRcpMulBf16, 176},
      {"G6 tau0 blk112 fp32P    ", 0, kPBf16, kLFp32P, kOutRcpMulBf16, 112},
      {"H1 tau8 P vs blockmax   ", 8, kPBf16, kLBf16P, kOutRcpMulBf16, 128, 1},
      {"H2 tau8 P>1 unrounded   ", 8, kPBf16, kLBf16P, kOutRcpMulBf16, 128, 2},
      {"H1'H1 fp32 out          ", 8, kPBf16, kLBf16P, kOutFp32, 128, 1},
      {"H2'H2 fp32 out          ", 8, kPBf16, kLBf16P, kOutFp32, 128, 2},
  };
}

// One query row under one variant. scores: fp32 raw q.k for keys 0..n-1, v: rows of d_v (bf16 values).
static void run_variant(const Variant &var, const float *scores, int64_t n, const float *v, int64_t d_v, float c,
                        float *out, std::vector<float> &o, double *stats) {
  std::fill(o.begin(), o.end(), 0.0f);
  float m = -INFINITY, l = 0.0f;
  int rescales = 0;
  float pmax = 0.0f;
  for (int64_t j0 = 0; j0 < n; j0 += var.block) {
    const int64_t nb = std::min<int64_t>(var.block, n - j0);
    float smax = -INFINITY;
    for (int64_t j = 0; j < nb; ++j) smax = std::max(smax, scores[j0 + j]);
    const float bmax = c * smax;
    if (m == -INFINITY || bmax > m + var.tau) {
      const float alpha = std::exp2(m - bmax);
      for (auto &x : o) x *= alpha;
      l *= alpha;
      m = bmax;
      ++rescales;
    }
    for (int64_t j = 0; j < nb; ++j) {
      const float pf = std::exp2(std::fma(scores[j0 + j], c, -m));
      float pb = nx::round_bf16(pf);
      if (var.pround == 1) pb = nx::round_bf16(std::exp2(std::fma(scores[j0 + j], c, -bmax))) * std::exp2(bmax - m);
      if (var.pround == 2 && pf > 1.0f) pb = pf;
      pmax = std::max(pmax, pf);
      const float pn = var.p == kPBf16 ? pb : pf;
      l += var.l == kLBf16P ? pb : pf;
      if (pn == 0.0f) continue;
      const float *vr = v + (j0 + j) * d_v;
      for (int64_t d = 0; d < d_v; ++d) o[size_t(d)] += pn * vr[d];
    }
  }
  if (stats) stats[0] += rescales + (pmax > 1.0f ? 1000.0 : 0.0);  // thousands: rows whose top P > 1
  const float scale = 1.0f / l;
  for (int64_t d = 0; d < d_v; ++d) {
    switch (var.out) {
      case kOutRcpMulBf16: out[d] = nx::round_bf16(o[size_t(d)] * scale); break;
      case kOutDivBf16: out[d] = nx::round_bf16(o[size_t(d)] / l); break;
      case kOutFp32: out[d] = o[size_t(d)] * scale; break;
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FAMILY S INPUTS [rows_per_head=64] [max_heads=0]\n", argv[0]);
    return 2;
  }
  const std::string family = argv[1];
  const int64_t S = std::atoll(argv[2]);
  const int64_t per_head = argc > 4 ? std::atoll(argv[4]) : 64;
  const int64_t max_heads = argc > 5 ? std::atoll(argv[5]) : 0;
  bench::Inputs inputs;
  if (!bench::parse_inputs(argv[3], &inputs)) { std::fprintf(stderr, "unknown inputs %s\n", argv[3]); return 2; }
  bench::Shape shape;
  try { shape = bench::family_shape(family, S); } catch (const std::invalid_argument &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const int64_t d_qk = shape.d_qk, d_v = shape.d_v, H = shape.nheads, Hk = shape.nheads_k, group = H / Hk;
  const uint64_t seed = bench::case_seed(shape, inputs);
  test::Activations a =
      bench::make_activations(shape, inputs, bench::activation_spec(inputs, bench::Purpose::kAccuracy));
  for (auto *t : {&a.q, &a.k, &a.v})
    for (float &x : *t) x = nx::round_bf16(x);
  std::vector<RowId> rows = bench::sample_rows(shape, per_head, seed);
  if (max_heads > 0) {
    std::vector<RowId> kept;
    for (auto &r : rows) if (r.h < max_heads) kept.push_back(r);
    rows.swap(kept);
  }
  const float softmax_scale = 1.0f / std::sqrt(float(d_qk));
  const float c = softmax_scale * nx::kLog2e;
  const std::vector<Variant> vars = variants();
  const size_t NV = vars.size(), NR = rows.size();
  std::vector<double> ref(NR * d_v);
  std::vector<float> got(NV * NR * d_v);
  std::vector<double> rescales(NV * NR, 0.0);
  std::vector<double> top_weight(NR);  // largest normalized softmax weight of the row (fp64)
  zyfa::ref::parallel_for(int64_t(NR), [&](int, int64_t ri) {
    const RowId r = rows[size_t(ri)];
    const int64_t hk = r.h / group, n = r.s + 1;
    const float *q = &a.q[size_t((r.s * H + r.h) * d_qk)];
    std::vector<float> k(static_cast<size_t>(n * d_qk)), v(static_cast<size_t>(n * d_v));
    std::vector<float> sc(static_cast<size_t>(n)), o(static_cast<size_t>(d_v));
    for (int64_t j = 0; j < n; ++j) {
      std::copy_n(&a.k[size_t((j * Hk + hk) * d_qk)], d_qk, &k[size_t(j * d_qk)]);
      std::copy_n(&a.v[size_t((j * Hk + hk) * d_v)], d_v, &v[size_t(j * d_v)]);
    }
    // fp64 oracle
    std::vector<double> sd(static_cast<size_t>(n));
    double mx = -INFINITY;
    for (int64_t j = 0; j < n; ++j) {
      double dd = 0;
      for (int64_t d = 0; d < d_qk; ++d) dd += double(q[d]) * double(k[size_t(j * d_qk + d)]);
      sd[size_t(j)] = double(softmax_scale) * dd;
      mx = std::max(mx, sd[size_t(j)]);
      sc[size_t(j)] = ref::fp32_dot(q, &k[size_t(j * d_qk)], d_qk);
    }
    double sum = 0, wmax = 0;
    double *out = &ref[size_t(ri) * d_v];
    std::fill(out, out + d_v, 0.0);
    for (int64_t j = 0; j < n; ++j) {
      const double w = std::exp(sd[size_t(j)] - mx);
      sum += w;
      wmax = std::max(wmax, w);
      for (int64_t d = 0; d < d_v; ++d) out[d] += w * double(v[size_t(j * d_v + d)]);
    }
    for (int64_t d = 0; d < d_v; ++d) out[d] /= sum;
    top_weight[size_t(ri)] = wmax / sum;
    for (size_t vi = 0; vi < NV; ++vi)
      run_variant(vars[vi], sc.data(), n, v.data(), d_v, c, &got[(vi * NR + size_t(ri)) * d_v], o,
                  &rescales[vi * NR + size_t(ri)]);
  });
  // pooled relative RMS, also split by the row's top weight (peaked rows vs spread rows)
  std::printf("case %s S=%lld H=%lld:%lld inputs=%s rows=%zu seed=%016llx\n", family.c_str(), (long long)S,
              (long long)H, (long long)Hk, argv[3], NR, (unsigned long long)seed);
  double tw_mean = 0;
  for (double t : top_weight) tw_mean += t;
  int64_t peaked = 0;
  for (double t : top_weight) peaked += t >= 0.5;
  std::printf("mean top softmax weight per row: %.3f; rows with top weight >= 0.5: %.3f\n", tw_mean / double(NR),
              double(peaked) / double(NR));
  std::printf("%-26s %10s %10s %10s %9s %8s\n", "variant", "rel_rms", "rel(tw<.5)", "rel(tw>=.5)",
              "rescales", "Pmax>1");
  double err_b = 0;
  for (size_t vi = 0; vi < NV; ++vi) {
    double e2 = 0, r2 = 0, e2lo = 0, r2lo = 0, e2hi = 0, r2hi = 0, resc = 0, above = 0;
    for (size_t ri = 0; ri < NR; ++ri) {
      const bool hi = top_weight[ri] >= 0.5;
      for (int64_t d = 0; d < d_v; ++d) {
        const double e = double(got[(vi * NR + ri) * d_v + size_t(d)]) - ref[ri * d_v + size_t(d)];
        const double rr = ref[ri * d_v + size_t(d)];
        const double w = rows[ri].weight;  // the rows it stands for (sampled_reference.hpp)
        e2 += w * e * e; r2 += w * rr * rr;
        (hi ? e2hi : e2lo) += w * e * e;
        (hi ? r2hi : r2lo) += w * rr * rr;
      }
      resc += std::fmod(rescales[vi * NR + ri], 1000.0);
      above += rescales[vi * NR + ri] >= 1000.0;
    }
    const double rel = std::sqrt(e2 / r2);
    if (vi == 1) err_b = rel;
    std::printf("%-26s %10.4e %10.4e %10.4e %9.2f %8.3f\n", vars[vi].name, rel,
                r2lo > 0 ? std::sqrt(e2lo / r2lo) : 0.0, r2hi > 0 ? std::sqrt(e2hi / r2hi) : 0.0,
                resc / double(NR), above / double(NR));
  }
  // ratios to B, printed after (B is known only after its row)
  std::printf("ratios to B:");
  for (size_t vi = 0; vi < NV; ++vi) {
    double e2 = 0, r2 = 0;
    for (size_t i = 0; i < NR * size_t(d_v); ++i) {
      const double e = double(got[vi * NR * d_v + i]) - ref[i], w = rows[i / size_t(d_v)].weight;
      e2 += w * e * e; r2 += w * ref[i] * ref[i];
    }
    std::printf(" %s=%.3f", std::string(vars[vi].name).substr(0, 2).c_str(), std::sqrt(e2 / r2) / err_b);
  }
  std::printf("\n");
  return 0;
}
