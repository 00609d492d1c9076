// The FP8 kernels written by src/asmgen (embedded cubins, loaded through the driver API), called through
// their launcher with a job table built here: against the fp64 oracle on the same quantized inputs
// (Gaussian, outlier, structured), against the CPU backend (the same numerics.h recurrence), V all ones,
// bitwise repeatability, poisoned outputs, every layout, GQA and MQA, the three descale forms. Each case
// prints one line of measured figures. Speed is measured by bench/zyfa_bench, not here.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
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
#include "kernels/numerics.h"
#include "ref/cpu_backend.hpp"
#include "ref/reference.hpp"
#include "support/error_limits.hpp"
#include "support/support.hpp"

namespace zyfa::test {
namespace {

// Against fp64: the limits of the CPU backend, which runs the same recurrence, widened by the 0.2x the GPU
// may differ from it (max_rel_rms_gpu and max_lse_err_gpu, support/error_limits.hpp). Issue 5 asks for 1.5e-2
// on Gaussian std-1 inputs; numerics.h's rounded P does not reach it on the CPU backend either (measured
// 2.6-2.7e-2 lean, 2.0-2.2e-2 exact at S = 1000-4097), so that figure is reported, and the sharp check is the
// distance to the CPU backend below.
// The wgmma schedule's LSE limit follows the CPU backend's own error (below) but never past this: the largest
// measured is 0.105 nats (outlier inputs at 32767 keys, 2026-12-02), so an error that the tensor-core model
// and the kernel shared could not grow unnoticed.
constexpr double kMaxLseAbsWgmmaCeiling = 0.15;
// The wgmma schedule sums S = Q K^T and P V on the FP8 tensor cores, which keep 14 bits of each k-step's
// sum; the CPU backend follows them (ref::Fp8Sums::kTensorCores, tensor_core_sums.hpp), so the wgmma schedule
// is held to the same 0.2x distance as every other kernel. The mma.sync schedule widens to f16 and is held
// to the CPU backend's exact fp32 sums. Split P takes P's rounding almost out of the error, so its outputs
// are also held to an absolute bound, 6e-3: a wrong residual code or fold costs exact P's error, 1.5-2.2e-2
// (test_cpu_backend.cpp), 2.5x that bound or more. Its LSE limit, 6e-3 too, gives way to the CPU backend's own
// error and the 0.2x beside it where S's tensor-core cut dominates the LSE (structured inputs at d_qk = 192
// and 4097 keys: 4.24e-2 on the GPU at an LSE backend ratio of 0.000, 2026-12-07). An LSE summed from P_hi
// alone is off by about 2e-2 on Gaussian inputs, where split P measures 1.5-3.7e-3.
// Mixed into the case's seed for the ternary q and k, so they do not repeat the Gaussian stream.
constexpr uint64_t kTernarySeedSalt = 0x7465726eull;
constexpr int kRepeats = 20;
constexpr int kSmallGrid = 3;
// V all ones: each output is 1 up to bf16 rounding (half an ulp below 1 is 2^-9, above 2^-8).
constexpr double kMaxOnesDeviation = 0x1p-8;

// A host float, a one-element device tensor, or a device tensor expanded to (batch, nheads_k).
enum class DescaleForm { kHostFloat, kDeviceScalar, kDevicePerHead };

struct Fp8Case {
  AttentionShape shape;
  ActivationKind inputs = ActivationKind::kGaussian;
  DescaleForm descale = DescaleForm::kHostFloat;
  bool wgmma = true;  // the Hopper schedule (TMA + wgmma), or the mma.sync one
  // q and k drawn from {-1, 0, 1}: their e4m3 codes are powers of two and every score is an integer
  // multiple of one power of two below 2^8 of them, which the FP8 tensor cores sum exactly: the scores
  // are then the same under either of the CPU backend's sums, so these cases check the kernel's codes,
  // scales and folds apart from the model of the tensor cores' sums.
  bool ternary_qk = false;
};

Fp8Case fp8_case(int64_t d_qk, int64_t batch, int64_t seqlen, int64_t nheads, int64_t nheads_k, Layout layout,
                 DescaleForm descale, ActivationKind inputs = ActivationKind::kGaussian, bool with_lse = true) {
  Fp8Case c;
  c.shape = attention_shape(ZYFA_DTYPE_FP8_E4M3, d_qk, batch, seqlen, nheads, nheads_k, layout);
  c.shape.per_head_descale = descale == DescaleForm::kDevicePerHead;
  c.shape.with_lse = with_lse;
  c.inputs = inputs;
  c.descale = descale;
  return c;
}

// Host inputs of a case, their device copies (outputs poisoned), the plan cache's job table, and launches
// of the asmgen kernel whose outputs come back into host().
class Fp8AsmRun {
 public:
  Fp8AsmRun(const Fp8Case &c, uint64_t seed, bool v_all_ones = false) : c_(c), host_(c.shape) {
    ActivationSpec spec;
    spec.kind = c.inputs;
    Activations a = generate_activations(c.shape.qkv(), spec, seed);
    if (v_all_ones) std::fill(a.v.begin(), a.v.end(), 1.0f);
    if (c.ternary_qk) {
      std::mt19937_64 rng(seed ^ kTernarySeedSalt);
      std::uniform_int_distribution<int> ternary(-1, 1);
      for (std::vector<float> *x : {&a.q, &a.k})
        for (float &e : *x) e = float(ternary(rng));
    }
    host_.set_inputs(a);
  }
  HostAttention &host() { return host_; }

  // Poisons the outputs and uploads everything; "" on success.
  std::string upload() {
    host_.poison_outputs();
    dev_ = std::make_unique<DeviceAttention>(host_);
    if (!dev_->status().empty()) return dev_->status();
    zyfa_attn_desc desc = dev_->desc();
    if (c_.descale == DescaleForm::kDeviceScalar) {  // each one-element descale as a device tensor
      zyfa_descale *d[3] = {&desc.q_descale, &desc.k_descale, &desc.v_descale};
      for (int i = 0; i < 3; ++i) {
        if (std::string s = scalar_[i].upload(&d[i]->value, sizeof(float)); !s.empty()) return s;
        d[i]->kind = ZYFA_DESCALE_DEVICE;
        d[i]->ptr = static_cast<const float *>(scalar_[i].get());
        d[i]->batch_stride = d[i]->head_stride = 0;
      }
    }
    if (validate_attention(&desc, PointerCheck::kRequired, &problem_) != ZYFA_STATUS_SUCCESS)
      return std::string("validate_attention: ") + last_error();
    const bool supported = c_.wgmma ? kernels::fp8_wgmma_attention_supports(problem_)
                                    : kernels::fp8_asm_attention_supports(problem_);
    if (!supported) return "the asmgen kernel does not support this problem";
    std::vector<Job> jobs;
    if (build_job_table(problem_.batch, problem_.nheads, problem_.nheads_k, problem_.seqlen, &jobs) != ZYFA_STATUS_SUCCESS)
      return std::string("build_job_table: ") + last_error();
    n_jobs_ = int32_t(jobs.size());
    if (std::string s = table_.upload(jobs.data(), jobs.size() * sizeof(Job)); !s.empty()) return s;
    return cuda_message("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0));
  }
  // grid 0: what the plan cache would choose.
  kernels::Schedule schedule(int grid = 0) const {
    kernels::Schedule s;
    s.jobs = static_cast<const Job *>(table_.get());
    s.n_jobs = n_jobs_;
    s.grid = std::min(grid > 0 ? grid : sms_ * kernels::fp8_attention_ctas_per_sm(), n_jobs_);
    return s;
  }
  // Poisons the device outputs, then one launch, waited for, outputs back into host().
  std::string run(int grid = 0) {
    const kernels::Schedule sched = schedule(grid);
    if (std::string p = cuda_message("poison outputs", dev_->poison_outputs()); !p.empty()) return p;
    std::string m = c_.wgmma ? cuda_message("launch_fp8_wgmma_attention",
                                            kernels::launch_fp8_wgmma_attention(problem_, sched, nullptr))
                             : cuda_message("launch_fp8_asm_attention",
                                            kernels::launch_fp8_asm_attention(problem_, sched, nullptr));
    if (m.empty()) m = cuda_message("cudaDeviceSynchronize after the kernel", cudaDeviceSynchronize());
    return m.empty() ? dev_->download_outputs() : m;
  }
  const Problem &problem() const { return problem_; }

 private:
  Fp8Case c_;
  HostAttention host_;
  std::unique_ptr<DeviceAttention> dev_;
  DeviceBuffer scalar_[3], table_;
  Problem problem_;
  int32_t n_jobs_ = 0;
  int sms_ = 0;
};

// The shape's name says "_headdescale" for the per-head form.
std::string case_name(const ::testing::TestParamInfo<Fp8Case> &info) {
  const DescaleForm f = info.param.descale;
  return info.param.shape.name() + "_" + activation_kind_name(info.param.inputs) +
         (f == DescaleForm::kHostFloat ? "_hostdescale" : f == DescaleForm::kDeviceScalar ? "_devdescale" : "") +
         (info.param.ternary_qk ? "_ternaryqk" : "") + (info.param.wgmma ? "_wgmma" : "_mmasync");
}

using Fp8AsmTest = SeededGpuTest<Fp8Case>;

// ---------------------------------------------------------------- accuracy against fp64 and the CPU backend

class Fp8AsmAccuracy : public Fp8AsmTest {};

TEST_P(Fp8AsmAccuracy, MatchesFp64AndCpuBackend) {
  SCOPED_TRACE(seed_trace());
  const Fp8Case &c = GetParam();
  const AttentionShape &sh = c.shape;
  Fp8AsmRun run(c, seed_);
  HostAttention &h = run.host();

  const ref::ReferenceResult exact = ref::attention_fp64(h.problem());
  h.poison_outputs();
  ref::attention_cpu_backend(h.problem(), c.wgmma ? ref::Fp8Sums::kTensorCores : ref::Fp8Sums::kExactFp32);
  const std::vector<double> cpu_out = h.out_values(), cpu_lse = h.lse_values();

  ASSERT_EQ(run.upload(), "");
  ASSERT_EQ(run.run(), "");
  EXPECT_TRUE(outputs_written(h));

  const std::vector<double> gpu_out = h.out_values(), gpu_lse = h.lse_values();
  const ErrorStats out_err = compare_to_reference(gpu_out, exact.out);
  const BackendComparison out_vs_cpu = compare_backends(gpu_out, cpu_out, exact.out);
  EXPECT_TRUE(within_rel_rms(out_err, max_rel_rms_gpu(sh)));
  EXPECT_TRUE(within_backend_ratio(out_vs_cpu)) << "out";
  BackendComparison lse_vs_cpu;
  ErrorStats lse_err;
  if (sh.with_lse) {
    lse_err = compare_to_reference(gpu_lse, exact.lse);
    lse_vs_cpu = compare_backends(gpu_lse, cpu_lse, exact.lse);
    EXPECT_EQ(lse_err.nonfinite, 0);
    // The limits are the CPU backend's with exact sums. The tensor cores' cut of S can exceed them on its own
    // where one large product sets a k-step's alignment (outlier inputs at 32767 keys: 0.105 nats on the
    // H200, where the GPU and the CPU backend summing as the tensor cores do agree at an LSE backend ratio of
    // 0.000, 2026-12-02), so the wgmma schedule may also reach that CPU backend's own LSE error and the 0.2x
    // beside it.
    const double lse_limit = max_lse_err_gpu(sh);
    const double cpu_lse_err = compare_to_reference(cpu_lse, exact.lse).max_abs;
    if (c.wgmma) {
      EXPECT_LE(cpu_lse_err, kMaxLseAbsWgmmaCeiling) << "the CPU backend's own LSE error";
    }
    const double wgmma_limit = std::min(kMaxLseAbsWgmmaCeiling, std::max(lse_limit, (1 + kMaxBackendRatio) * cpu_lse_err));
    EXPECT_LE(lse_err.max_abs, c.wgmma ? wgmma_limit : lse_limit) << lse_err.describe();
    EXPECT_TRUE(within_backend_ratio(lse_vs_cpu)) << "LSE";
  }
  std::printf("[fp8 asm] %-62s out rel_rms %.3e (cpu %.3e)  gpu-cpu ratio %.3f  lse max_abs %.2e  lse ratio "
              "%.3f  seed %llu\n",
              case_name({c, 0}).c_str(), out_err.rel_rms, out_vs_cpu.cpu_err, out_vs_cpu.ratio, lse_err.max_abs,
              lse_vs_cpu.ratio, (unsigned long long)seed_);
}

std::vector<Fp8Case> accuracy_cases() {
  using D = DescaleForm;
  using A = ActivationKind;
  std::vector<Fp8Case> cases;
  for (int64_t d : {128, 192}) {
    cases.push_back(fp8_case(d, 2, 1, 8, 1, Layout::kBSHD, D::kHostFloat));                   // MQA, one key
    cases.push_back(fp8_case(d, 2, 7, 16, 2, Layout::kBHSD, D::kDevicePerHead));              // GQA 8:1
    cases.push_back(fp8_case(d, 2, 128, 4, 4, Layout::kBSHD, D::kDeviceScalar));              // one full tile
    cases.push_back(fp8_case(d, 1, 129, 2, 1, Layout::kStrided, D::kHostFloat, A::kGaussian, false));  // no LSE
    cases.push_back(fp8_case(d, 1, 1000, 16, 2, Layout::kBSHD, D::kDevicePerHead));           // GQA 8:1
    cases.push_back(fp8_case(d, 1, 1000, 8, 1, Layout::kBHSD, D::kHostFloat, A::kOutlier));   // MQA
    cases.push_back(fp8_case(d, 1, 1000, 8, 2, Layout::kBSHD, D::kDeviceScalar, A::kStructured));
    cases.push_back(fp8_case(d, 1, 4097, 4, 1, Layout::kBHSD, D::kDeviceScalar));             // MQA, odd tail
    cases.push_back(fp8_case(d, 1, 4097, 4, 4, Layout::kBSHD, D::kHostFloat, A::kStructured));
  }
  // Batch > 1 over several key blocks: the TMA batch coordinate and per-(batch, kv head) descales in a key loop.
  cases.push_back(fp8_case(128, 3, 300, 8, 2, Layout::kBSHD, D::kDevicePerHead));
  cases.push_back(fp8_case(192, 2, 300, 6, 3, Layout::kBHSD, D::kDevicePerHead, A::kOutlier));
  // Scores the tensor cores sum exactly (see ternary_qk).
  for (Fp8Case c : {fp8_case(128, 1, 1000, 16, 2, Layout::kBSHD, D::kDevicePerHead),
                    fp8_case(192, 2, 1000, 8, 2, Layout::kBHSD, D::kHostFloat),
                    fp8_case(128, 1, 4097, 4, 1, Layout::kBSHD, D::kDeviceScalar)}) {
    c.ternary_qk = true;
    cases.push_back(c);
  }
  {
    Fp8Case c = fp8_case(128, 1, 1000, 8, 2, Layout::kBSHD, D::kHostFloat);
    c.ternary_qk = true;
    c.shape.p_rounding = ZYFA_P_ROUNDING_EXACT;
    cases.push_back(c);
  }
  // The rounding that is not the head dim's default: exact P at d = 128, lean P at d_qk = 192 (p_rounding).
  for (const Fp8Case &base : {fp8_case(128, 1, 1000, 16, 2, Layout::kBSHD, D::kDevicePerHead),
                              fp8_case(128, 1, 4097, 4, 4, Layout::kBSHD, D::kHostFloat, A::kStructured),
                              fp8_case(192, 1, 1000, 16, 2, Layout::kBSHD, D::kDevicePerHead),
                              fp8_case(192, 1, 4097, 4, 4, Layout::kBSHD, D::kHostFloat, A::kStructured),
                              fp8_case(192, 2, 1000, 8, 1, Layout::kBHSD, D::kDeviceScalar, A::kOutlier)}) {
    Fp8Case c = base;
    c.shape.p_rounding = base.shape.d_qk == 128 ? ZYFA_P_ROUNDING_EXACT : ZYFA_P_ROUNDING_LEAN;
    cases.push_back(c);
  }
  // The mma.sync schedule (what tensors TMA cannot map take): a few of the same cases.
  const size_t wgmma_cases = cases.size();
  for (size_t i = 0; i < wgmma_cases; i += 3) {
    Fp8Case c = cases[i];
    c.wgmma = false;
    cases.push_back(c);
  }
  // Long sequences (issue 5 asks for seqlens up to 32K, odd ones included): 256 key blocks, the last one cut;
  // after the mma.sync picks above, so that those stay the cases they were.
  cases.push_back(fp8_case(128, 1, 32767, 2, 1, Layout::kBHSD, D::kDeviceScalar, A::kStructured));  // GQA 2:1
  cases.push_back(fp8_case(192, 1, 32767, 1, 1, Layout::kBSHD, D::kHostFloat, A::kOutlier));
  // Split P (p_rounding SPLIT, wgmma only): at both head dims, on ternary q and k (S exact) and on general
  // inputs, all held to split P's 6e-3 (max_rel_rms_gpu).
  for (Fp8Case c : {fp8_case(128, 1, 1000, 8, 2, Layout::kBSHD, D::kHostFloat),
                    fp8_case(192, 2, 1000, 8, 2, Layout::kBHSD, D::kDevicePerHead),
                    fp8_case(128, 1, 4097, 4, 1, Layout::kBSHD, D::kDeviceScalar),
                    fp8_case(192, 1, 4097, 4, 4, Layout::kBSHD, D::kHostFloat, A::kStructured)}) {
    c.shape.p_rounding = ZYFA_P_ROUNDING_SPLIT;
    cases.push_back(c);
    c.ternary_qk = true;
    if (c.shape.seqlen == 1000) cases.push_back(c);
  }
  return cases;
}

Fp8Case with_p_rounding(Fp8Case c, zyfa_p_rounding rounding) {
  c.shape.p_rounding = rounding;
  return c;
}
Fp8Case split_p(const Fp8Case &c) { return with_p_rounding(c, ZYFA_P_ROUNDING_SPLIT); }

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8AsmAccuracy, ::testing::ValuesIn(accuracy_cases()), case_name);

// ---------------------------------------------------------------- split P's point: less error than exact P

// On the same Gaussian (std 1) inputs, the GPU's split P output is held to under this fraction of its exact
// P output's error against fp64. The CPU backend measures 0.09-0.11x (test_cpu_backend.cpp); the GPU's S
// and P V sums on the FP8 tensor cores add error of their own that split P does not remove, hence the room.
constexpr double kMaxSplitOverExactError = 0.25;

class Fp8AsmSplitGain : public Fp8AsmTest {};

TEST_P(Fp8AsmSplitGain, SplitPErrorIsAFractionOfExactP) {
  SCOPED_TRACE(seed_trace());
  Fp8Case split = GetParam();
  split.shape.p_rounding = ZYFA_P_ROUNDING_SPLIT;
  Fp8Case exact = split;
  exact.shape.p_rounding = ZYFA_P_ROUNDING_EXACT;
  double err[2] = {0, 0};  // out rel_rms against fp64: split, exact
  int i = 0;
  for (const Fp8Case &c : {split, exact}) {
    Fp8AsmRun run(c, seed_);  // the same seed: the same quantized inputs
    HostAttention &h = run.host();
    const ref::ReferenceResult fp64 = ref::attention_fp64(h.problem());
    ASSERT_EQ(run.upload(), "");
    ASSERT_EQ(run.run(), "");
    EXPECT_TRUE(outputs_written(h));
    const ErrorStats e = compare_to_reference(h.out_values(), fp64.out);
    EXPECT_EQ(e.nonfinite, 0);
    err[i++] = e.rel_rms;
  }
  EXPECT_LT(err[0], kMaxSplitOverExactError * err[1]) << "split " << err[0] << ", exact " << err[1];
  std::printf("[fp8 asm] %-62s split P rel_rms %.3e  exact P %.3e  ratio %.3f  seed %llu\n",
              case_name({split, 0}).c_str(), err[0], err[1], err[0] / err[1], (unsigned long long)seed_);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8AsmSplitGain,
                         ::testing::Values(fp8_case(128, 1, 1000, 8, 2, Layout::kBSHD, DescaleForm::kHostFloat),
                                           fp8_case(192, 1, 1000, 8, 2, Layout::kBHSD, DescaleForm::kDevicePerHead),
                                           fp8_case(128, 1, 4097, 4, 1, Layout::kBSHD, DescaleForm::kDeviceScalar),
                                           fp8_case(192, 1, 4097, 4, 4, Layout::kBSHD, DescaleForm::kHostFloat)),
                         case_name);

// ---------------------------------------------------------------- split P where only the fallback would run

// A stride TMA cannot map (one k and v for both batches: batch stride 0) keeps the wgmma kernels away, and
// the kernels left round P once: zyfa_attn_prepare and zyfa_attn_fwd refuse split P with BAD_ARGUMENT
// naming p_rounding and the stride, and write nothing; exact P on the same descriptor runs.
TEST(Fp8AsmSplitRefusal, StrideTmaCannotMapIsBadArgumentAndWritesNothing) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  for (int64_t d : {128, 192}) {
    SCOPED_TRACE("d_qk " + std::to_string(d));
    AttentionShape sh = attention_shape(ZYFA_DTYPE_FP8_E4M3, d, 2, 300, 4, 2, Layout::kStrided);
    sh.p_rounding = ZYFA_P_ROUNDING_SPLIT;
    HostAttention h(sh);
    h.set_inputs(generate_activations(sh.qkv(), ActivationSpec{}, seed));
    h.share_batch0_kv();  // what the broadcast call reads, so that fp64 below can check it
    h.poison_outputs();
    DeviceAttention dev(h);
    ASSERT_EQ(dev.status(), "");
    zyfa_attn_desc desc = dev.desc();
    ASSERT_EQ(desc.layout, ZYFA_LAYOUT_STRIDED);
    desc.k_strides.batch = 0;
    desc.v_strides.batch = 0;
    for (bool launch : {false, true}) {
      SCOPED_TRACE(launch ? "zyfa_attn_fwd" : "zyfa_attn_prepare");
      EXPECT_EQ(launch ? zyfa_attn_fwd(&desc, nullptr) : zyfa_attn_prepare(&desc, nullptr), ZYFA_STATUS_BAD_ARGUMENT);
      const std::string m = zyfa_last_error();
      EXPECT_NE(m.find("desc->p_rounding = ZYFA_P_ROUNDING_SPLIT"), std::string::npos) << m;
      EXPECT_NE(m.find("desc->k_strides.batch = 0"), std::string::npos) << m;
    }
    ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(dev.download_outputs(), "");
    const OutputCheck untouched = h.check_outputs();
    EXPECT_EQ(untouched.unwritten, sh.batch * sh.seqlen * sh.nheads * sh.d_v) << untouched.describe();
    EXPECT_EQ(untouched.lse_unwritten, sh.batch * sh.nheads * sh.seqlen) << untouched.describe();
    EXPECT_EQ(untouched.gap_written, 0) << untouched.describe();

    desc.p_rounding = ZYFA_P_ROUNDING_EXACT;
    ASSERT_EQ(zyfa_attn_fwd(&desc, nullptr), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(dev.download_outputs(), "");
    EXPECT_TRUE(h.check_outputs().ok()) << h.check_outputs().describe();
    const ref::ReferenceResult exact = ref::attention_fp64(h.problem());
    AttentionShape exact_p = sh;
    exact_p.p_rounding = ZYFA_P_ROUNDING_EXACT;
    EXPECT_TRUE(within_rel_rms(compare_to_reference(h.out_values(), exact.out), max_rel_rms_gpu(exact_p)));
    const ErrorStats lse_err = compare_to_reference(h.lse_values(), exact.lse);
    EXPECT_LE(lse_err.max_abs, max_lse_err_gpu(exact_p)) << lse_err.describe();
  }
}

// ---------------------------------------------------------------- V all ones: the rounded denominator

class Fp8AsmOnes : public Fp8AsmTest {};

// With V = 1 every output is sum(p) / l; l is the sum of the same rounded P (the ones-column MMA), so each
// output must be 1 up to bf16 rounding, however P was rounded.
TEST_P(Fp8AsmOnes, EveryOutputIsOne) {
  SCOPED_TRACE(seed_trace());
  Fp8AsmRun run(GetParam(), seed_, /*v_all_ones=*/true);
  ASSERT_EQ(run.upload(), "");
  ASSERT_EQ(run.run(), "");
  HostAttention &h = run.host();
  EXPECT_TRUE(outputs_written(h));
  double worst = 0;
  int64_t off = 0;
  for (double x : h.out_values()) {
    worst = std::max(worst, std::fabs(x - 1.0));
    off += std::fabs(x - 1.0) > kMaxOnesDeviation;
  }
  EXPECT_EQ(off, 0) << "largest |out - 1| = " << worst;
  std::printf("[fp8 asm] %-62s V = 1: largest |out - 1| %.3e\n", case_name({GetParam(), 0}).c_str(), worst);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8AsmOnes,
                         ::testing::Values(fp8_case(128, 1, 1000, 8, 2, Layout::kBSHD, DescaleForm::kDevicePerHead,
                                                    ActivationKind::kStructured),
                                           fp8_case(192, 1, 1000, 8, 2, Layout::kBHSD, DescaleForm::kHostFloat,
                                                    ActivationKind::kOutlier),
                                           split_p(fp8_case(128, 1, 1000, 8, 2, Layout::kBSHD,
                                                            DescaleForm::kDevicePerHead, ActivationKind::kStructured)),
                                           split_p(fp8_case(192, 1, 1000, 8, 2, Layout::kBHSD,
                                                            DescaleForm::kHostFloat, ActivationKind::kOutlier)),
                                           with_p_rounding(fp8_case(192, 1, 1000, 8, 2, Layout::kBHSD,
                                                                    DescaleForm::kHostFloat, ActivationKind::kOutlier),
                                                           ZYFA_P_ROUNDING_LEAN)),
                         case_name);

// ---------------------------------------------------------------- determinism

class Fp8AsmDeterminism : public Fp8AsmTest {};

// kRepeats calls give the same bits, and so does a grid where every CTA walks several jobs.
TEST_P(Fp8AsmDeterminism, BitwiseEqualAcrossCallsAndGrids) {
  SCOPED_TRACE(seed_trace());
  Fp8AsmRun run(GetParam(), seed_);
  HostAttention &h = run.host();
  ASSERT_EQ(run.upload(), "");
  ASSERT_EQ(run.run(), "");
  ASSERT_TRUE(outputs_written(h));
  const int differing = count_differing_repeats(h, OutputSnapshot(h), kRepeats, kSmallGrid,
                                               [&](int grid) { return run.run(grid); });
  std::printf("[fp8 asm] %-62s %d calls after the first, %d differing bitwise\n", case_name({GetParam(), 0}).c_str(),
              kRepeats, differing);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8AsmDeterminism,
                         ::testing::Values(fp8_case(128, 1, 1000, 16, 2, Layout::kBSHD, DescaleForm::kHostFloat),
                                           fp8_case(192, 1, 1000, 16, 2, Layout::kBHSD, DescaleForm::kDevicePerHead),
                                           split_p(fp8_case(128, 1, 1000, 16, 2, Layout::kBSHD, DescaleForm::kHostFloat)),
                                           split_p(fp8_case(192, 1, 1000, 16, 2, Layout::kBHSD,
                                                            DescaleForm::kDevicePerHead)),
                                           with_p_rounding(fp8_case(192, 1, 1000, 16, 2, Layout::kBHSD,
                                                                    DescaleForm::kDevicePerHead),
                                                           ZYFA_P_ROUNDING_LEAN)),
                         case_name);

}  // namespace
}  // namespace zyfa::test
