// The BF16 Hopper kernel (src/kernels/bf16_attention.cu) on the device, called through its launcher over
// the plan cache's job table: against the fp64 oracle on fresh inputs, against the CPU backend (the same
// recurrence of numerics.h), with poisoned outputs, bitwise repeatability, CUDA-graph capture, tensors
// whose offsets pass 4 GiB, and the routing predicate. Each case prints one line of measured figures.
// Speed is measured by bench/zyfa_bench, not here.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "host/cuda_api.hpp"
#include "host/error.hpp"
#include "host/plan_cache.hpp"
#include "host/validate.hpp"
#include "kernels/launch.hpp"
#include "kernels/numerics.h"
#include "ref/cpu_backend.hpp"
#include "ref/reference.hpp"
#include "support/cuda_handles.hpp"
#include "support/support.hpp"

namespace zyfa::test {
namespace {
// The brief's bound on the rel RMS against fp64 (the bound on the distance to the CPU backend is in
// support/backend_ratio.hpp).
constexpr double kMaxRelRms = 3e-3;
// LSE against fp64, absolute (natural log): rounding each p to bf16 moves log l by at most 2^-9.
constexpr double kMaxLseAbs = 4e-3;
constexpr int kRepeats = 20;
// A grid smaller than the job count makes every CTA walk several jobs.
constexpr int kSmallGrid = 3;

// The plan cache's schedule for a validated device problem, built for this kernel's grid shape.
// heads_per_job 0: the kernel's preference.
std::string bf16_schedule(const Problem &p, std::shared_ptr<const Plan> *plan, int heads_per_job = 0) {
  int device = 0;
  if (std::string s = cuda_message("cudaGetDevice", cudaGetDevice(&device)); !s.empty()) return s;
  const GridShape grid{kernels::bf16_attention_ctas_per_sm(),
                       heads_per_job > 0 ? heads_per_job : kernels::bf16_attention_heads_per_job(p)};
  unsigned long long context = 0;
  if (cuda::current_context_id(&context) != 0) return "cuCtxGetId failed";
  if (PlanCache::global().acquire(plan_key_of(p, device, context), grid, /*may_build=*/true, /*pin=*/false, plan) !=
      ZYFA_STATUS_SUCCESS)
    return std::string("plan cache: ") + last_error();
  return "";
}

// One launch of the kernel, then a wait: every launch error and every asynchronous fault is reported.
std::string launch_and_wait(const Problem &p, const kernels::Schedule &s, cudaStream_t stream = nullptr) {
  std::string m = cuda_message("launch_bf16_attention", kernels::launch_bf16_attention(p, s, stream));
  if (m.empty()) m = cuda_message("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  return m;
}

// One case: host inputs (fresh, from `spec`), poisoned outputs, device copies, a validated device Problem
// and the plan's schedule; run() launches and brings the outputs back into host() for its checks.
class Case {
 public:
  Case(const AttentionShape &sh, const ActivationSpec &spec, uint64_t seed) : host_(sh) {
    host_.set_inputs(generate_activations(sh.qkv(), spec, seed));
    host_.poison_outputs();
    dev_ = std::make_unique<DeviceAttention>(host_);
    status_ = dev_->status();
    if (!status_.empty()) return;
    desc_ = dev_->desc();
    if (validate_attention(&desc_, PointerCheck::kRequired, &problem_) != ZYFA_STATUS_SUCCESS) {
      status_ = std::string("validate_attention: ") + last_error();
      return;
    }
    if (!kernels::bf16_attention_supports(problem_)) {
      status_ = "bf16_attention_supports refused " + sh.name();
      return;
    }
    status_ = bf16_schedule(problem_, &plan_);
  }
  const std::string &status() const { return status_; }
  HostAttention &host() { return host_; }
  const Problem &problem() const { return problem_; }
  kernels::Schedule schedule(int grid = 0) const {
    kernels::Schedule s = plan_->schedule;
    if (grid > 0) s.grid = grid;
    return s;
  }  // Poisons the device outputs, launches, and downloads out and lse into host().
  std::string run(int grid = 0) { return run_schedule(schedule(grid)); }
  std::string run_schedule(const kernels::Schedule &s) {
    std::string m = poison_device_outputs();
    if (m.empty()) m = launch_and_wait(problem_, s);
    return m.empty() ? dev_->download_outputs() : m;
  }
  std::string poison_device_outputs() const { return cuda_message("poison outputs", dev_->poison_outputs()); }
  std::string download() { return dev_->download_outputs(); }

 private:
  HostAttention host_;
  std::unique_ptr<DeviceAttention> dev_;
  zyfa_attn_desc desc_{};
  Problem problem_;
  std::shared_ptr<const Plan> plan_;
  std::string status_;
};

std::string case_name(const ::testing::TestParamInfo<AttentionShape> &param) { return param.param.name(); }

// ---------------------------------------------------------------- accuracy against fp64 and the CPU backend

// Where a wrong result lies, to tell a broken stage from a broken layout: the relative RMS error by
// 16-row group of the query tile (which consumer warpgroup, which warp) and 16-column group of the output
// (which half of V), and by query tile. Printed only for a failing case.
void print_error_pattern(const AttentionShape &sh, const std::vector<double> &got, const std::vector<double> &want) {
  constexpr int kGroups = 8, kTileRows = numerics::kQueryTile, kMaxTiles = 8;
  double e2[kGroups][kGroups] = {}, r2[kGroups][kGroups] = {}, te2[kMaxTiles] = {}, tr2[kMaxTiles] = {};
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t s = 0; s < sh.seqlen; ++s)
      for (int64_t h = 0; h < sh.nheads; ++h)
        for (int64_t d = 0; d < sh.d_v; ++d) {
          const size_t i = size_t(((b * sh.seqlen + s) * sh.nheads + h) * sh.d_v + d);
          const double diff = std::isfinite(got[i]) ? got[i] - want[i] : 1e3;
          const int rg = int(s % kTileRows) / (kTileRows / kGroups), cg = int(d) / int(sh.d_v / kGroups);
          const int tile = int(std::min<int64_t>(s / kTileRows, kMaxTiles - 1));
          e2[rg][cg] += diff * diff, r2[rg][cg] += want[i] * want[i];
          te2[tile] += diff * diff, tr2[tile] += want[i] * want[i];
        }
  std::printf("[bf16] error pattern of %s: log10 rel RMS by 16-row group (rows) x 16-column group (columns)\n",
              sh.name().c_str());
  for (int rg = 0; rg < kGroups; ++rg) {
    std::printf("  rows %3d-%3d:", rg * 16, rg * 16 + 15);
    for (int cg = 0; cg < kGroups; ++cg)
      std::printf(" %6.2f", r2[rg][cg] > 0 ? std::log10(std::sqrt(e2[rg][cg] / r2[rg][cg]) + 1e-30) : 0.0);
    std::printf("\n");
  }
  std::printf("  by query tile (last = the rest):");
  for (int t = 0; t < kMaxTiles; ++t)
    std::printf(" %6.2f", tr2[t] > 0 ? std::log10(std::sqrt(te2[t] / tr2[t]) + 1e-30) : 0.0);
  std::printf("\n");
}


void check_against_fp64_and_cpu(const AttentionShape &sh, const ActivationSpec &spec, const char *inputs) {
  ZYFA_TRACED_SEED(seed);
  Case c(sh, spec, seed);
  ASSERT_EQ(c.status(), "");
  HostAttention &h = c.host();

  const ref::ReferenceResult exact = ref::attention_fp64(h.problem());
  ref::attention_cpu_backend(h.problem());
  const std::vector<double> cpu_out = h.out_values(), cpu_lse = h.lse_values();
  h.poison_outputs();

  ASSERT_EQ(c.run(), "");
  EXPECT_TRUE(outputs_written(h));

  const std::vector<double> gpu_out = h.out_values(), gpu_lse = h.lse_values();
  const ErrorStats out_err = compare_to_reference(gpu_out, exact.out);
  const BackendComparison out_vs_cpu = compare_backends(gpu_out, cpu_out, exact.out);
  EXPECT_TRUE(within_rel_rms(out_err, kMaxRelRms));
  if (!(out_err.rel_rms <= kMaxRelRms)) print_error_pattern(sh, gpu_out, exact.out);
  EXPECT_TRUE(within_backend_ratio(out_vs_cpu)) << "out";
  BackendComparison lse_vs_cpu;
  ErrorStats lse_err;
  if (sh.with_lse) {
    lse_err = compare_to_reference(gpu_lse, exact.lse);
    lse_vs_cpu = compare_backends(gpu_lse, cpu_lse, exact.lse);
    EXPECT_EQ(lse_err.nonfinite, 0);
    EXPECT_LE(lse_err.max_abs, kMaxLseAbs) << lse_err.describe();
    EXPECT_TRUE(within_backend_ratio(lse_vs_cpu)) << "LSE";
  }
  std::printf("[bf16] %-36s %-10s seed %llu  out rel_rms %.3e (cpu %.3e)  gpu-cpu ratio %.3f  lse max_abs %.2e  "
              "lse ratio %.3f\n",
              sh.name().c_str(), inputs, (unsigned long long)seed, out_err.rel_rms, out_vs_cpu.cpu_err,
              out_vs_cpu.ratio, lse_err.max_abs, lse_vs_cpu.ratio);
}

class Bf16Accuracy : public ::testing::TestWithParam<AttentionShape> {};

TEST_P(Bf16Accuracy, GaussianMatchesFp64AndCpuBackend) {
  ZYFA_SKIP_WITHOUT_GPU();
  check_against_fp64_and_cpu(GetParam(), ActivationSpec{}, "gaussian");
}

std::vector<AttentionShape> accuracy_shapes() {
  std::vector<AttentionShape> shapes;
  for (int64_t d : {128, 192}) {
    shapes.push_back(attention_shape(ZYFA_DTYPE_BF16, d, 2, 1, 8, 1, Layout::kBSHD));  // MQA, one key
    shapes.push_back(attention_shape(ZYFA_DTYPE_BF16, d, 2, 7, 16, 2, Layout::kBHSD));  // GQA 8:1, a part tile
    shapes.push_back(attention_shape(ZYFA_DTYPE_BF16, d, 2, 128, 4, 4, Layout::kBSHD));  // MHA, one full tile
    // No LSE, one row past a tile.
    shapes.push_back(attention_shape(ZYFA_DTYPE_BF16, d, 1, 129, 2, 1, Layout::kBHSD, false, /*with_lse=*/false));
    shapes.push_back(attention_shape(ZYFA_DTYPE_BF16, d, 2, 300, 4, 2, Layout::kStrided));  // gaps everywhere
    shapes.push_back(attention_shape(ZYFA_DTYPE_BF16, d, 1, 1000, 16, 2, Layout::kBSHD));  // GQA 8:1
    shapes.push_back(attention_shape(ZYFA_DTYPE_BF16, d, 1, 4097, 4, 1, Layout::kBHSD));  // MQA, odd tail
    shapes.push_back(attention_shape(ZYFA_DTYPE_BF16, d, 1, 300, 6, 2, Layout::kBSHD));  // GQA 3:1: no pairs
  }
  shapes.push_back(attention_shape(ZYFA_DTYPE_BF16, 128, 1, 16384, 2, 1, Layout::kBSHD));  // long rows: lazy rescale over 128 blocks
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bf16Accuracy, ::testing::ValuesIn(accuracy_shapes()), case_name);

class Bf16StructuredAccuracy : public ::testing::TestWithParam<AttentionShape> {};

// LLM-like inputs (attention sinks, massive channels, mean keys, RoPE): large score ranges that exercise
// the lazy rescale far more than Gaussian noise does.
TEST_P(Bf16StructuredAccuracy, StructuredMatchesFp64AndCpuBackend) {
  ZYFA_SKIP_WITHOUT_GPU();
  ActivationSpec spec;
  spec.kind = ActivationKind::kStructured;
  check_against_fp64_and_cpu(GetParam(), spec, "structured");
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bf16StructuredAccuracy,
                         ::testing::Values(attention_shape(ZYFA_DTYPE_BF16, 128, 1, 2000, 8, 2, Layout::kBSHD),
                                           attention_shape(ZYFA_DTYPE_BF16, 192, 1, 2000, 8, 2, Layout::kBHSD)),
                         case_name);

// ---------------------------------------------------------------- determinism and graph capture

class Bf16Determinism : public ::testing::TestWithParam<AttentionShape> {};

// kRepeats calls on one input give the same bits, and so do a small grid (every CTA walks several jobs)
// and a replay of the call captured in a CUDA graph (no host sync or allocation in the launch path).
TEST_P(Bf16Determinism, BitwiseEqualAcrossCallsGridsAndGraphReplay) {
  ZYFA_SKIP_WITHOUT_GPU();
  const AttentionShape &sh = GetParam();
  ZYFA_TRACED_SEED(seed);
  Case c(sh, ActivationSpec{}, seed);
  ASSERT_EQ(c.status(), "");
  HostAttention &h = c.host();
  ASSERT_EQ(c.run(), "");
  ASSERT_TRUE(outputs_written(h));
  const OutputSnapshot first(h);
  const int differing =
      count_differing_repeats(h, first, kRepeats, kSmallGrid, [&](int grid) { return c.run(grid); });
  // One head per CTA where the kernel pairs them, as a context whose SMs cannot hold a cluster runs it: each
  // CTA computes exactly what it computes in a pair.
  const bool pairs = kernels::bf16_attention_heads_per_job(c.problem()) == 2;
  if (pairs) {
    std::shared_ptr<const Plan> unpaired;
    ASSERT_EQ(bf16_schedule(c.problem(), &unpaired, /*heads_per_job=*/1), "");
    ASSERT_EQ(unpaired->schedule.heads_per_job, 1);
    ASSERT_EQ(c.run_schedule(unpaired->schedule), "");
    EXPECT_TRUE(first.matches(h)) << "one head per CTA against two per cluster";
  }
  // Capture one launch into a graph, poison, replay.
  Stream stream(cudaStreamDefault);  // ordered after the legacy stream's poison
  ZYFA_ASSERT_CUDA(stream.error());
  Graph graph;
  ZYFA_ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const int launched = kernels::launch_bf16_attention(c.problem(), c.schedule(), stream);
  ZYFA_ASSERT_CUDA(cudaStreamEndCapture(stream, &graph.graph));
  ZYFA_ASSERT_CUDA(launched);
  ZYFA_ASSERT_CUDA(cudaGraphInstantiate(&graph.exec, graph.graph, 0));
  ASSERT_EQ(c.poison_device_outputs(), "");
  ZYFA_ASSERT_CUDA(cudaGraphLaunch(graph.exec, stream));
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  ASSERT_EQ(c.download(), "");
  const bool graph_same = first.matches(h);
  EXPECT_TRUE(graph_same) << "graph replay";
  std::printf("[bf16] %-36s seed %llu  %d calls after the first, %d differing bitwise;%s graph replay %s\n",
              sh.name().c_str(), (unsigned long long)seed, kRepeats, differing,
              pairs ? " one head per CTA identical;" : "", graph_same ? "identical" : "DIFFERS");
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bf16Determinism,
                         ::testing::Values(attention_shape(ZYFA_DTYPE_BF16, 128, 1, 1000, 16, 2, Layout::kBSHD),
                                           attention_shape(ZYFA_DTYPE_BF16, 192, 1, 1000, 16, 2, Layout::kBHSD)),
                         case_name);

// ---------------------------------------------------------------- routing and 64-bit offsets

// A problem the kernel takes, with host pointers (the predicate never dereferences them).
Problem routable_problem() {
  alignas(16) static const uint16_t dummy[8] = {};
  Problem p;
  p.dtype = ZYFA_DTYPE_BF16;
  p.batch = 2, p.seqlen = 1000, p.nheads = 8, p.nheads_k = 2, p.d_qk = 128, p.d_v = 128;
  for (TensorRef *t : {&p.q, &p.k, &p.v, &p.out}) {
    t->ptr = dummy;
    t->head_stride = 128;
  }
  p.q.seq_stride = p.out.seq_stride = 8 * 128;
  p.k.seq_stride = p.v.seq_stride = 2 * 128;
  p.q.batch_stride = p.out.batch_stride = 1000 * 8 * 128;
  p.k.batch_stride = p.v.batch_stride = 1000 * 2 * 128;
  p.softmax_scale = 1.0f;
  return p;
}

// Two query heads of one kv head share a cluster (and each K and V copy) wherever the group is even; an odd
// group, MHA included, runs one head per CTA. The accuracy shapes cover both (GQA 8:1, 2:1 and MQA pair up;
// MHA and GQA 3:1 do not).
TEST(Bf16Routing, EvenGroupsPairTheirHeads) {
  Problem p = routable_problem();
  for (const auto &[nheads, nheads_k, pairs] : {std::tuple{8, 2, true}, {8, 1, true}, {2, 1, true}, {8, 8, false},
                                                {6, 2, false}, {3, 1, false}}) {
    p.nheads = nheads, p.nheads_k = nheads_k;
    EXPECT_EQ(kernels::bf16_attention_heads_per_job(p), pairs ? 2 : 1) << nheads << ":" << nheads_k;
  }
}

// A whole Hopper GPU holds clusters of two of either head dim's kernel (66 on the H200's 132 SMs), so the
// dispatcher pairs heads there; a partition that holds none gets one head per job (BitwiseEqualAcross...).
TEST(Bf16Routing, AWholeGpuHoldsClustersOfTwo) {
  ZYFA_SKIP_WITHOUT_GPU();
  int device = 0, sms = 0;
  ZYFA_ASSERT_CUDA(cudaGetDevice(&device));
  ZYFA_ASSERT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  Problem p = routable_problem();
  for (int64_t d : {128, 192}) {
    p.d_qk = d;
    for (int heads : {1, 2}) {
      int clusters = -1;
      ZYFA_ASSERT_CUDA(kernels::bf16_attention_max_active_clusters(p, heads, &clusters));
      EXPECT_GE(clusters, sms / heads / 2) << "d_qk " << d << ", " << heads << " heads per job";
      EXPECT_LE(clusters, sms / heads) << "d_qk " << d << ", " << heads << " heads per job";
      std::printf("[bf16] d_qk %lld: %d clusters of %d CTAs at once on %d SMs\n", (long long)d, clusters, heads, sms);
    }
  }
  int clusters = -1;
  EXPECT_NE(kernels::bf16_attention_max_active_clusters(p, 3, &clusters), 0) << "3 heads per job";
  EXPECT_EQ(clusters, 0);
}

// What TMA cannot address goes to the fallback; what it can, including offsets past 4 GiB, stays here.
TEST(Bf16Routing, SupportsWhatTmaCanAddress) {
  Problem p = routable_problem();
  EXPECT_TRUE(kernels::bf16_attention_supports(p));
  Problem fp8 = p;
  fp8.dtype = ZYFA_DTYPE_FP8_E4M3;
  EXPECT_FALSE(kernels::bf16_attention_supports(fp8));
  Problem past_4gib = p;
  past_4gib.k.batch_stride = (int64_t(1) << 33);  // 16 GiB between batches: TMA takes it (below 2^40 bytes)
  EXPECT_TRUE(kernels::bf16_attention_supports(past_4gib));
  Problem past_tma = p;
  past_tma.v.batch_stride = (int64_t(1) << 39);  // 2^40 bytes: past TMA's stride limit
  EXPECT_FALSE(kernels::bf16_attention_supports(past_tma));
  Problem long_rows = p;
  long_rows.seqlen = int64_t(1) << 31;  // past the kernel's int32 row indices
  EXPECT_FALSE(kernels::bf16_attention_supports(long_rows));
}

// The epilogue writes 16-byte chunks, so every output row must start on 16 bytes; a stride over an extent of 1
// never moves the address, so it may be anything.
TEST(Bf16Routing, OutputRowsMustStartOnSixteenBytes) {
  const Problem p = routable_problem();
  ASSERT_TRUE(kernels::bf16_attention_supports(p));
  Problem row = p;
  row.out.seq_stride += 2;
  Problem head = p;
  head.out.head_stride += 4;
  head.out.seq_stride = 8 * head.out.head_stride;
  Problem batch = p;
  batch.out.batch_stride += 6;
  Problem base = p;
  base.out.ptr = static_cast<const uint8_t *>(p.out.ptr) + 4;
  for (const Problem *off : {&row, &head, &batch, &base}) EXPECT_FALSE(kernels::bf16_attention_supports(*off));
  Problem one_batch = batch;
  one_batch.batch = 1;
  EXPECT_TRUE(kernels::bf16_attention_supports(one_batch));
}

// Batch 1 of q, k, v and out starts past 2^31 elements and 4 GiB: the TMA maps and the epilogue's 64-bit
// index math must reach it; the output check and the error against fp64 catch a wrong place.
TEST(Bf16LargeOffsets, BatchPastFourGiBRunsHere) {
  ZYFA_SKIP_WITHOUT_GPU();
  const AttentionShape sh = attention_shape(ZYFA_DTYPE_BF16, 128, 2, 300, 2, 1, Layout::kBSHD);
  ZYFA_TRACED_SEED(seed);
  constexpr int64_t kStride = (int64_t(1) << 31) + 1024;  // bf16 elements between batches: 4 GiB + 2 KiB
  constexpr size_t kElem = 2;
  HostAttention h(sh);
  h.set_inputs(generate_activations(sh.qkv(), ActivationSpec{}, seed));
  h.poison_outputs();
  const ref::ReferenceResult exact = ref::attention_fp64(h.problem());  // Each tensor's batches, `kStride` elements apart on the device.
  Problem p = h.problem();
  DeviceBuffer bufs[4];
  HostTensor *tensors[4] = {&h.q, &h.k, &h.v, &h.out};
  TensorRef *refs[4] = {&p.q, &p.k, &p.v, &p.out};
  for (int i = 0; i < 4; ++i) {
    const size_t region = size_t(tensors[i]->storage_elements() / sh.batch) * kElem;
    ASSERT_EQ(bufs[i].allocate(size_t(kStride) * kElem * size_t(sh.batch - 1) + region), "");
    for (int64_t b = 0; b < sh.batch; ++b)
      ZYFA_ASSERT_CUDA(cudaMemcpy(static_cast<uint8_t *>(bufs[i].get()) + size_t(b * kStride) * kElem,
                                  static_cast<const uint8_t *>(tensors[i]->data()) + size_t(b) * region, region,
                                  cudaMemcpyHostToDevice));
    refs[i]->ptr = bufs[i].get();
    refs[i]->batch_stride = kStride;
  }
  DeviceBuffer lse;
  ASSERT_EQ(lse.upload(h.lse.data(), h.lse.size() * sizeof(float)), "");
  p.lse = static_cast<float *>(lse.get());
  ASSERT_TRUE(kernels::bf16_attention_supports(p)) << "a problem past 4 GiB must run on the BF16 kernel";

  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(bf16_schedule(p, &plan), "");
  ASSERT_EQ(launch_and_wait(p, plan->schedule), "");
  const size_t out_region = size_t(h.out.storage_elements() / sh.batch) * kElem;
  for (int64_t b = 0; b < sh.batch; ++b)
    ZYFA_ASSERT_CUDA(cudaMemcpy(static_cast<uint8_t *>(h.out.data()) + size_t(b) * out_region,
                                static_cast<const uint8_t *>(bufs[3].get()) + size_t(b * kStride) * kElem, out_region,
                                cudaMemcpyDeviceToHost));
  ASSERT_EQ(lse.download(h.lse.data(), h.lse.size() * sizeof(float)), "");
  EXPECT_TRUE(outputs_written(h));
  const ErrorStats out_err = compare_to_reference(h.out_values(), exact.out);
  const ErrorStats lse_err = compare_to_reference(h.lse_values(), exact.lse);
  EXPECT_TRUE(within_rel_rms(out_err, kMaxRelRms));
  EXPECT_LE(lse_err.max_abs, kMaxLseAbs) << lse_err.describe();
  std::printf("[bf16] %-36s seed %llu  batch stride %lld elements, BF16 kernel: out rel_rms %.3e  lse max_abs %.2e\n",
              sh.name().c_str(), (unsigned long long)seed, (long long)kStride, out_err.rel_rms, lse_err.max_abs);
}

}  // namespace
}  // namespace zyfa::test
