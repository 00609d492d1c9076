// The fallback kernel on the device, called through its launcher with a job table built here (no plan
// cache, no dispatch): against the fp64 oracle on fresh Gaussian inputs, against the CPU backend (the same
// recurrence of numerics.h), with poisoned outputs, bitwise repeatability, any grid, and tensors whose
// offsets pass 2^31 elements and 4 GiB. Then the fallbacks through zyfa_attn_fwd (FallbackThroughTheApi:
// the fallback kernel for BF16, the mma.sync kernel for FP8, where the fast kernels refuse a stride). Each
// case prints one line of measured figures.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "host/error.hpp"
#include "host/fp8_asm_attention.hpp"
#include "host/plan_cache.hpp"
#include "host/validate.hpp"
#include "kernels/launch.hpp"
#include "ref/cpu_backend.hpp"
#include "ref/reference.hpp"
#include "support/support.hpp"

namespace zyfa::test {
namespace {

// Against fp64. BF16: issue 2's acceptance bound for the fallback kernel. FP8: the recurrence itself errs
// by 1-3e-2 on Gaussian inputs (lean P at d = 128 measured 2.9-3.1e-2 on the CPU backend, over issue 2's
// 2.5e-2 for the CPU backend: a numerics question for the lead, not a kernel bug), so here FP8 gets a loose
// bound against gross errors and is held to the CPU backend by kMaxBackendRatio (support/backend_ratio.hpp).
constexpr double kMaxRelRmsBf16 = 3e-3;
constexpr double kMaxRelRmsFp8 = 5e-2;
// LSE against fp64, absolute (natural log). BF16: rounding each p to bf16 moves log l by at most 2^-9.
// FP8: a lean code's e4m3 value over-estimates 2^x by up to 6.1% (1 + f against 2^f), rounding to a code
// moves it by up to 2^(1/16), codes below 1 are clamped to 0 and subnormal codes are linear: the CPU
// backend measured up to 0.22; again a loose bound, with the ratio to the CPU backend as the sharp one.
constexpr double kMaxLseAbsBf16 = 4e-3;
constexpr double kMaxLseAbsFp8 = 0.5;
constexpr int kRepeats = 20;
// A grid smaller than the job count makes every CTA walk several jobs.
constexpr int kSmallGrid = 3;

// Device copies of a HostAttention's buffers. Batch b of every tensor starts `batch_stride` elements after
// batch b-1 on the device (by default the host's own stride, a plain copy), so the same path can put
// batch 1 past 2^31 elements and 4 GiB. Outputs go up with the host's poison and come back for its checks.
class DeviceCopy {
 public:
  DeviceCopy(HostAttention &host, int64_t in_batch_stride = 0, int64_t out_batch_stride = 0) : host_(host) {
    problem_ = host.problem();
    const AttentionShape &sh = host.shape();
    keep_first(place(host.q, in_batch_stride, q_, &problem_.q));
    keep_first(place(host.k, in_batch_stride, k_, &problem_.k));
    keep_first(place(host.v, in_batch_stride, v_, &problem_.v));
    keep_first(place(host.out, out_batch_stride, out_, &problem_.out));
    if (sh.with_lse) {
      keep_first(lse_.upload(host.lse.data(), host.lse.size() * sizeof(float)));
      problem_.lse = static_cast<float *>(lse_.get());
    }
    if (sh.fp8() && sh.per_head_descale) {
      keep_first(descale(host.q_descale, q_descale_, &problem_.q_descale));
      keep_first(descale(host.k_descale, k_descale_, &problem_.k_descale));
      keep_first(descale(host.v_descale, v_descale_, &problem_.v_descale));
    }
  }
  const std::string &status() const { return status_; }
  const Problem &problem() const { return problem_; }

  // poison_device_outputs over the device out (batch gaps included) and lse.
  std::string poison_outputs() const { return cuda_message("poison outputs", poison_device_outputs(out_, lse_)); }
  // Copies out and lse back into the HostAttention.
  std::string download() {
    for (int64_t b = 0; b < host_.out.batch(); ++b) {
      const uint8_t *src = static_cast<const uint8_t *>(out_.get()) + size_t(b) * out_stride_bytes_;
      uint8_t *dst = static_cast<uint8_t *>(host_.out.data()) + size_t(b) * out_region_bytes_;
      const std::string s = cuda_message("cudaMemcpy out to host",
                                         cudaMemcpy(dst, src, out_region_bytes_, cudaMemcpyDeviceToHost));
      if (!s.empty()) return s;
    }
    return host_.lse.empty() ? "" : lse_.download(host_.lse.data(), host_.lse.size() * sizeof(float));
  }

 private:
  void keep_first(std::string s) {
    if (status_.empty()) status_ = std::move(s);
  }
  std::string place(const HostTensor &t, int64_t batch_stride, DeviceBuffer &buf, TensorRef *ref) {
    const int64_t host_stride = t.storage_elements() / t.batch();  // every layout keeps batches apart
    const int64_t stride = batch_stride > 0 ? batch_stride : host_stride;
    const size_t elem = t.size_bytes() / size_t(t.storage_elements());
    const size_t region = size_t(host_stride) * elem;
    if (&t == &host_.out) {
      out_stride_bytes_ = size_t(stride) * elem;
      out_region_bytes_ = region;
    }
    std::string s = buf.allocate(size_t((t.batch() - 1) * stride) * elem + region);
    for (int64_t b = 0; s.empty() && b < t.batch(); ++b)
      s = cuda_message("cudaMemcpy to device",
                       cudaMemcpy(static_cast<uint8_t *>(buf.get()) + size_t(b * stride) * elem,
                                  static_cast<const uint8_t *>(t.data()) + size_t(b) * region, region,
                                  cudaMemcpyHostToDevice));
    ref->ptr = buf.get();
    ref->batch_stride = stride;
    return s;
  }
  static std::string descale(const std::vector<float> &values, DeviceBuffer &buf, Descale *d) {
    std::string s = buf.upload(values.data(), values.size() * sizeof(float));
    d->ptr = static_cast<const float *>(buf.get());  // strides stay the host problem's
    return s;
  }

  HostAttention &host_;
  Problem problem_;
  DeviceBuffer q_, k_, v_, out_, lse_, q_descale_, k_descale_, v_descale_;
  size_t out_stride_bytes_ = 0, out_region_bytes_ = 0;  // device distance and host size of one batch of out
  std::string status_;
};

// The job table of the plan cache's builder, in device memory, and a grid over it.
class DeviceJobs {
 public:
  explicit DeviceJobs(const AttentionShape &sh) {
    std::vector<Job> jobs;
    if (build_job_table(sh.batch, sh.nheads, sh.nheads_k, sh.seqlen, &jobs) != ZYFA_STATUS_SUCCESS) {
      status_ = std::string("build_job_table: ") + last_error();
      return;
    }
    n_jobs_ = int32_t(jobs.size());
    status_ = table_.upload(jobs.data(), jobs.size() * sizeof(Job));
    if (status_.empty())
      status_ = cuda_message("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0));
  }
  const std::string &status() const { return status_; }
  // grid 0: what the plan cache would choose, min(SMs * CTAs per SM, jobs).
  kernels::Schedule schedule(int grid = 0) const {
    kernels::Schedule s;
    s.jobs = static_cast<const Job *>(table_.get());
    s.n_jobs = n_jobs_;
    s.grid = grid > 0 ? grid : std::min(sms_ * kernels::fallback_ctas_per_sm(), n_jobs_);
    return s;
  }

 private:
  DeviceBuffer table_;
  int32_t n_jobs_ = 0;
  int sms_ = 0;
  std::string status_;
};

std::string launch_and_wait(const Problem &p, const kernels::Schedule &s) {
  std::string m = cuda_message("launch_fallback_attention", kernels::launch_fallback_attention(p, s, nullptr));
  if (m.empty()) m = cuda_message("cudaDeviceSynchronize after the kernel", cudaDeviceSynchronize());
  return m;
}

// One case: fresh Gaussian (std 1) inputs on the host, then device copies with poisoned outputs and the
// job table, and launches whose outputs come back into host() for its checks.
class Case {
 public:
  Case(const AttentionShape &sh, uint64_t seed) : host_(sh), jobs_(sh) {
    ActivationSpec gaussian;
    host_.set_inputs(generate_activations(sh.qkv(), gaussian, seed));
  }
  HostAttention &host() { return host_; }

  // Poisons the host's outputs and uploads everything (batch strides as DeviceCopy takes them).
  std::string upload(int64_t in_batch_stride = 0, int64_t out_batch_stride = 0) {
    if (!jobs_.status().empty()) return jobs_.status();
    host_.poison_outputs();
    dev_ = std::make_unique<DeviceCopy>(host_, in_batch_stride, out_batch_stride);
    return dev_->status();
  }
  // One launch over the uploaded copies, poisoned first (grid 0: the plan cache's grid), outputs back into host().
  std::string run(int grid = 0) {
    if (!dev_) return "run before upload";
    std::string m = dev_->poison_outputs();
    if (m.empty()) m = launch_and_wait(dev_->problem(), jobs_.schedule(grid));
    return m.empty() ? dev_->download() : m;
  }

 private:
  HostAttention host_;
  DeviceJobs jobs_;
  std::unique_ptr<DeviceCopy> dev_;
};

std::string case_name(const ::testing::TestParamInfo<AttentionShape> &param) { return param.param.name(); }

using SeededShapeTest = SeededGpuTest<AttentionShape>;

// The launcher's tests: the case's inputs and job table made for each.
class FallbackTest : public SeededShapeTest {
 protected:
  void SetUp() override {
    SeededShapeTest::SetUp();
    if (IsSkipped()) return;
    case_ = std::make_unique<Case>(GetParam(), seed_);
  }

  std::unique_ptr<Case> case_;
};

// ---------------------------------------------------------------- accuracy against fp64 and the CPU backend

class FallbackAccuracy : public FallbackTest {};

// The fp64 oracle and the CPU backend on h's inputs (h's outputs are then poisoned for the call).
struct Expected {
  ref::ReferenceResult exact;
  std::vector<double> cpu_out, cpu_lse;
};
Expected expected_results(HostAttention &h) {
  Expected e;
  e.exact = ref::attention_fp64(h.problem());
  h.poison_outputs();
  ref::attention_cpu_backend(h.problem(), ref::Fp8Sums::kExactFp32);  // the fallback widens FP8 to f16
  e.cpu_out = h.out_values();
  e.cpu_lse = h.lse_values();
  h.poison_outputs();
  return e;
}

// h's outputs, as the GPU wrote them, against fp64 (loose for FP8) and against the CPU backend (the 0.2x
// ratio); one line of figures per case.
void expect_matches_fp64_and_cpu_backend(const HostAttention &h, const Expected &e, uint64_t seed, const char *tag) {
  const AttentionShape &sh = h.shape();
  EXPECT_TRUE(outputs_written(h));
  const std::vector<double> gpu_out = h.out_values(), gpu_lse = h.lse_values();
  const ErrorStats out_err = compare_to_reference(gpu_out, e.exact.out);
  const BackendComparison out_vs_cpu = compare_backends(gpu_out, e.cpu_out, e.exact.out);
  EXPECT_TRUE(within_rel_rms(out_err, sh.fp8() ? kMaxRelRmsFp8 : kMaxRelRmsBf16));
  EXPECT_TRUE(within_backend_ratio(out_vs_cpu)) << "out";

  BackendComparison lse_vs_cpu;
  ErrorStats lse_err;
  if (sh.with_lse) {
    lse_err = compare_to_reference(gpu_lse, e.exact.lse);
    lse_vs_cpu = compare_backends(gpu_lse, e.cpu_lse, e.exact.lse);
    EXPECT_EQ(lse_err.nonfinite, 0);
    EXPECT_LE(lse_err.max_abs, sh.fp8() ? kMaxLseAbsFp8 : kMaxLseAbsBf16) << lse_err.describe();
    EXPECT_TRUE(within_backend_ratio(lse_vs_cpu)) << "LSE";
  }
  std::printf("[%s] %-42s seed %llu  out rel_rms %.3e (cpu %.3e)  gpu-cpu ratio %.3f  lse max_abs %.2e  "
              "lse ratio %.3f\n",
              tag, sh.name().c_str(), (unsigned long long)seed, out_err.rel_rms, out_vs_cpu.cpu_err, out_vs_cpu.ratio,
              lse_err.max_abs, lse_vs_cpu.ratio);
}

TEST_P(FallbackAccuracy, MatchesFp64AndCpuBackend) {
  SCOPED_TRACE(seed_trace());
  Case &c = *case_;
  const Expected e = expected_results(c.host());
  ASSERT_EQ(c.upload(), "");
  ASSERT_EQ(c.run(), "");
  expect_matches_fp64_and_cpu_backend(c.host(), e, seed_, "fallback");
}

std::vector<AttentionShape> accuracy_shapes() {
  std::vector<AttentionShape> shapes;
  for (zyfa_dtype dtype : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3})
    for (int64_t d : {128, 192}) {
      shapes.push_back(attention_shape(dtype, d, 2, 1, 8, 1, Layout::kBSHD));                    // MQA, one key
      shapes.push_back(attention_shape(dtype, d, 2, 7, 16, 2, Layout::kBHSD, true));             // GQA 8:1
      shapes.push_back(attention_shape(dtype, d, 2, 128, 4, 4, Layout::kBSHD));                  // MHA, one full tile
      shapes.push_back(attention_shape(dtype, d, 1, 129, 2, 1, Layout::kBHSD, false, false));    // no LSE
      shapes.push_back(attention_shape(dtype, d, 2, 300, 4, 2, Layout::kStrided, true));         // gaps everywhere
      shapes.push_back(attention_shape(dtype, d, 1, 1000, 16, 2, Layout::kBSHD, true));          // GQA 8:1
      shapes.push_back(attention_shape(dtype, d, 1, 4097, 4, 1, Layout::kBHSD));                 // MQA, odd tail
    }
  // Exact P at d = 128 on request (p_rounding): the kernel must follow the problem, not the head dim.
  for (int64_t s : {300, 1000}) {
    AttentionShape sh = attention_shape(ZYFA_DTYPE_FP8_E4M3, 128, 1, s, 4, 2, Layout::kBSHD, true);
    sh.p_rounding = ZYFA_P_ROUNDING_EXACT;
    shapes.push_back(sh);
  }
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FallbackAccuracy, ::testing::ValuesIn(accuracy_shapes()),
                         case_name);

// ---------------------------------------------------------------- through the public API

// What the fast kernels cannot take reaches the next kernel through zyfa_attn_fwd (validation, plan cache,
// dispatch), not only through a launcher. One k and v for every batch (batch strides 0, which validation
// allows for inputs) is a stride TMA cannot step: the BF16 Hopper kernel and the FP8 wgmma kernels refuse
// it, so BF16 runs the fallback kernel and FP8 the mma.sync kernel (the FP8 wgmma kernels' fallback; the
// CUDA fallback takes FP8 only beyond the asm kernels' int32 limits, which no test can allocate). Each case
// checks that dispatch: the fast kernel refuses, and for FP8 the mma.sync kernel accepts. The host's
// batches repeat batch 0's k and v, so the oracle sees what the device reads.
class FallbackThroughTheApi : public SeededShapeTest {};

TEST_P(FallbackThroughTheApi, KvSharedAcrossBatchesMatchesFp64AndCpuBackend) {
  SCOPED_TRACE(seed_trace());
  const AttentionShape &sh = GetParam();
  HostAttention h(sh);
  h.set_inputs(generate_activations(sh.qkv(), ActivationSpec{}, seed_));
  h.share_batch0_kv();
  const Expected e = expected_results(h);
  DeviceAttention dev(h);
  ASSERT_EQ(dev.status(), "");
  zyfa_attn_desc desc = dev.desc();
  ASSERT_EQ(desc.layout, ZYFA_LAYOUT_STRIDED);
  // The fast kernel takes the descriptor as it is, and refuses it for the zero stride alone.
  const auto fast_kernel_takes = [&](const zyfa_attn_desc &d, Problem *p) {
    EXPECT_EQ(validate_attention(&d, PointerCheck::kRequired, p), ZYFA_STATUS_SUCCESS) << last_error();
    return sh.fp8() ? kernels::fp8_wgmma_attention_supports(*p) : kernels::bf16_attention_supports(*p);
  };
  Problem problem;
  ASSERT_TRUE(fast_kernel_takes(desc, &problem));
  desc.k_strides.batch = 0;
  desc.v_strides.batch = 0;
  EXPECT_FALSE(fast_kernel_takes(desc, &problem));
  if (sh.fp8()) {
    EXPECT_NE(kernels::fp8_wgmma_refusal(problem).find("desc->k_strides.batch = 0"), std::string::npos)
        << kernels::fp8_wgmma_refusal(problem);
    EXPECT_TRUE(kernels::fp8_asm_attention_supports(problem));
  }
  ASSERT_EQ(zyfa_attn_fwd(&desc, nullptr), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
  ASSERT_EQ(dev.download_outputs(), "");
  expect_matches_fp64_and_cpu_backend(h, e, seed_, sh.fp8() ? "api, mma.sync" : "api, fallback");
}

std::vector<AttentionShape> shared_kv_shapes() {
  std::vector<AttentionShape> shapes;
  for (zyfa_dtype dtype : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3})
    for (int64_t d : {128, 192}) {
      shapes.push_back(attention_shape(dtype, d, 2, 129, 4, 2, Layout::kStrided));              // GQA 2:1, two tiles
      shapes.push_back(attention_shape(dtype, d, 3, 1000, 8, 1, Layout::kStrided, false, false));  // MQA, no LSE
    }
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FallbackThroughTheApi, ::testing::ValuesIn(shared_kv_shapes()), case_name);

// ---------------------------------------------------------------- determinism

class FallbackDeterminism : public FallbackTest {};

// kRepeats calls on one input give the same bits, and so does a grid where every CTA walks several jobs:
// no atomics, and no result depends on which CTA took a job.
TEST_P(FallbackDeterminism, BitwiseEqualAcrossCallsAndGrids) {
  SCOPED_TRACE(seed_trace());
  const AttentionShape &sh = GetParam();
  Case &c = *case_;
  HostAttention &h = c.host();
  ASSERT_EQ(c.upload(), "");
  ASSERT_EQ(c.run(), "");
  ASSERT_TRUE(outputs_written(h));
  const int differing_calls = count_differing_repeats(h, OutputSnapshot(h), kRepeats, kSmallGrid,
                                                      [&](int grid) { return c.run(grid); });
  std::printf("[fallback] %-42s seed %llu  %d calls after the first, %d differing bitwise\n", sh.name().c_str(),
              (unsigned long long)seed_, kRepeats, differing_calls);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FallbackDeterminism,
                         ::testing::Values(attention_shape(ZYFA_DTYPE_BF16, 128, 1, 1000, 16, 2, Layout::kBSHD),
                                           attention_shape(ZYFA_DTYPE_FP8_E4M3, 192, 1, 1000, 16, 2, Layout::kBHSD, true)),
                         case_name);

// ---------------------------------------------------------------- 64-bit offsets

class FallbackLargeOffsets : public FallbackTest {};

// Batch 1 of every tensor starts past 2^31 elements and past 4 GiB: 32-bit index math anywhere on the way
// reads or writes the wrong place, and the output check or the error against fp64 catches it.
TEST_P(FallbackLargeOffsets, BatchPastFourGiB) {
  SCOPED_TRACE(seed_trace());
  const AttentionShape &sh = GetParam();
  constexpr int64_t kFourGiB = int64_t(1) << 32;
  constexpr int64_t kSpan = 1024;  // elements past the boundary, 16-byte granular for both element sizes
  const int64_t in_stride = (sh.fp8() ? kFourGiB : kFourGiB / 2) + kSpan;  // elements of 1 or 2 bytes
  const int64_t out_stride = kFourGiB / 2 + kSpan;                         // bf16
  Case &c = *case_;
  const Expected e = expected_results(c.host());
  ASSERT_EQ(c.upload(in_stride, out_stride), "");
  ASSERT_EQ(c.run(), "");
  std::printf("[fallback] %-42s batch stride %lld elements\n", sh.name().c_str(), (long long)in_stride);
  // The same checks as FallbackAccuracy: FP8 is held to the CPU backend's 0.2x, not only to the loose bound.
  expect_matches_fp64_and_cpu_backend(c.host(), e, seed_, "fallback large offsets");
}

INSTANTIATE_TEST_SUITE_P(Shapes, FallbackLargeOffsets,
                         ::testing::Values(attention_shape(ZYFA_DTYPE_BF16, 128, 2, 300, 2, 1, Layout::kBSHD),
                                           attention_shape(ZYFA_DTYPE_FP8_E4M3, 192, 2, 300, 2, 1, Layout::kBSHD, true)),
                         case_name);

}  // namespace
}  // namespace zyfa::test
