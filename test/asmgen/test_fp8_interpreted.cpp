// The emitted FP8 kernels, as the very instruction lists that ptxas assembles, run on the emitter's CPU
// interpreter (src/asmgen/interpreter.hpp) over fresh inputs: against the CPU backend (the recurrence of
// numerics.h) and fp64, with poisoned outputs, the plan cache's job table walked by a small grid, every
// layout, GQA and MQA, LSE optional, both descale forms. Host tests: no GPU needed. What they cannot see is
// the hardware's own behaviour (instruction semantics are modelled); the GPU tests check that.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "asmgen/fp8_attention.hpp"
#include "asmgen/interpreter.hpp"
#include "asmgen/variants.hpp"
#include "host/cta_balance.hpp"
#include "host/error.hpp"
#include "host/fp8_asm_attention.hpp"
#include "host/plan_cache.hpp"
#include "kernels/numerics.h"
#include "ref/cpu_backend.hpp"
#include "ref/reference.hpp"
#include "support/support.hpp"

namespace zyfa::test {
namespace {

// The interpreter and the CPU backend differ only in the order of fp32 sums (an MMA's sum against the
// backend's fixed partial sums) and in the last bits of exp2 and log2: far below the recurrence's own
// error against fp64. The interpreter is held to the device tests' backend ratio (support/backend_ratio.hpp).
// Against fp64: the CPU backend's limits (test_cpu_backend.cpp), since the interpreted kernel runs the same
// recurrence; the ratio above is the sharp check.
constexpr double kMaxRelRmsLeanP = 3.0e-2;
constexpr double kMaxRelRmsExactP = 2.5e-2;

uint64_t fresh_seed() {
  if (const char *s = std::getenv("ZYFA_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

struct InterpretedCase {
  AttentionShape shape;
  int grid;  // CTAs; fewer than the jobs makes every CTA walk several
  ActivationKind inputs = ActivationKind::kGaussian;
};

AttentionShape fp8_shape(int64_t d_qk, int64_t batch, int64_t seqlen, int64_t nheads, int64_t nheads_k, Layout layout,
                         bool per_head_descale, bool with_lse) {
  AttentionShape s = attention_shape(ZYFA_DTYPE_FP8_E4M3, d_qk, batch, seqlen, nheads, nheads_k, layout);
  s.per_head_descale = per_head_descale;
  s.with_lse = with_lse;
  return s;
}

// The interpreter models the mma.sync schedule; the wgmma one (TMA, mbarriers) runs on the device only.
const asmgen::Variant &variant_for(int64_t d_qk) {
  for (const asmgen::Variant &v : asmgen::variants())
    if (v.d_qk == d_qk && v.schedule == asmgen::Schedule::kMmaSync) return v;
  throw std::logic_error("no variant for this d_qk");
}

class Fp8Interpreted : public ::testing::TestWithParam<InterpretedCase> {};

TEST_P(Fp8Interpreted, MatchesCpuBackendAndFp64) {
  const InterpretedCase &tc = GetParam();
  const AttentionShape &sh = tc.shape;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("ZYFA_TEST_SEED=" + std::to_string(seed));
  HostAttention h(sh);
  ActivationSpec spec;
  spec.kind = tc.inputs;
  h.set_inputs(generate_activations(sh.qkv(), spec, seed));

  const ref::ReferenceResult exact = ref::attention_fp64(h.problem());
  h.poison_outputs();
  ref::attention_cpu_backend(h.problem());
  const std::vector<double> cpu_out = h.out_values(), cpu_lse = h.lse_values();

  std::vector<Job> jobs;
  ASSERT_EQ(build_job_table(sh.batch, sh.nheads, sh.nheads_k, sh.seqlen, &jobs), ZYFA_STATUS_SUCCESS) << last_error();
  kernels::Schedule schedule;
  schedule.grid = std::min(tc.grid, int32_t(jobs.size()));
  balance_tail(&jobs, schedule.grid);  // as the plan cache does: single tiles of any index in the last rounds
  schedule.jobs = jobs.data();
  schedule.n_jobs = int32_t(jobs.size());

  h.poison_outputs();
  const Problem p = h.problem();
  ASSERT_TRUE(kernels::fp8_asm_attention_supports(p));
  const asmgen::Fp8AttentionParams params = kernels::fp8_attention_params(p, schedule);
  const asmgen::Program prog = asmgen::build_fp8_attention(variant_for(sh.d_qk));
  asmgen::Interpreter interp(prog);
  interp.add_region(h.q.data(), h.q.size_bytes(), false);
  interp.add_region(h.k.data(), h.k.size_bytes(), false);
  interp.add_region(h.v.data(), h.v.size_bytes(), false);
  interp.add_region(h.out.data(), h.out.size_bytes(), true);
  interp.add_region(h.lse.data(), h.lse.size() * sizeof(float), true);
  interp.add_region(jobs.data(), jobs.size() * sizeof(Job), false);
  for (const std::vector<float> *d : {&h.q_descale, &h.k_descale, &h.v_descale})
    interp.add_region(d->data(), d->size() * sizeof(float), false);
  ASSERT_EQ(interp.run(schedule.grid, &params), "");
  EXPECT_TRUE(outputs_written(h));

  const std::vector<double> got_out = h.out_values(), got_lse = h.lse_values();
  const ErrorStats out_err = compare_to_reference(got_out, exact.out);
  const BackendComparison out_vs_cpu = compare_backends(got_out, cpu_out, exact.out);
  EXPECT_TRUE(within_rel_rms(out_err, numerics::uses_lean_p(int(sh.d_qk)) ? kMaxRelRmsLeanP : kMaxRelRmsExactP));
  EXPECT_TRUE(within_backend_ratio(out_vs_cpu)) << "out";
  BackendComparison lse_vs_cpu;
  if (sh.with_lse) {
    lse_vs_cpu = compare_backends(got_lse, cpu_lse, exact.lse);
    EXPECT_TRUE(within_backend_ratio(lse_vs_cpu)) << "LSE";
  }
  std::printf("[asmgen interpreted] %-40s %-10s grid %d  out rel_rms %.3e (cpu %.3e)  vs cpu %.3e (ratio %.4f)  lse ratio "
              "%.4f  %.2e instructions/lane\n",
              sh.name().c_str(), activation_kind_name(tc.inputs), schedule.grid, out_err.rel_rms, out_vs_cpu.cpu_err,
              out_vs_cpu.gpu_cpu, out_vs_cpu.ratio, lse_vs_cpu.ratio, double(interp.instructions_executed()));
}

std::vector<InterpretedCase> cases() {
  std::vector<InterpretedCase> c;
  for (int64_t d : {128, 192}) {
    c.push_back({fp8_shape(d, 1, 1, 2, 1, Layout::kBSHD, false, true), 132});          // one key, MQA
    c.push_back({fp8_shape(d, 2, 7, 8, 1, Layout::kBHSD, true, true), 132});           // GQA 8:1, head descales
    c.push_back({fp8_shape(d, 1, 129, 2, 2, Layout::kStrided, false, false), 1});      // two tiles, no LSE, one CTA
    c.push_back({fp8_shape(d, 1, 300, 2, 1, Layout::kBSHD, true, true), 3});           // odd tile count, small grid
  }
  c.push_back({fp8_shape(128, 1, 700, 1, 1, Layout::kBHSD, false, true), 2});          // six tiles: long rows
  // LLM-like inputs (attention sinks, massive channels: large score ranges) and FA3's outliers.
  c.push_back({fp8_shape(128, 1, 300, 4, 1, Layout::kBSHD, true, true), 3, ActivationKind::kStructured});
  c.push_back({fp8_shape(192, 1, 300, 4, 2, Layout::kBHSD, false, true), 3, ActivationKind::kStructured});
  c.push_back({fp8_shape(128, 1, 300, 2, 1, Layout::kBSHD, false, true), 3, ActivationKind::kOutlier});
  return c;
}

std::string case_name(const ::testing::TestParamInfo<InterpretedCase> &info) {
  return info.param.shape.name() + "_" + activation_kind_name(info.param.inputs) + "_grid" +
         std::to_string(info.param.grid);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8Interpreted, ::testing::ValuesIn(cases()), case_name);

// The emitted program is the same list every time (what the PTX determinism test sees, one level up).
TEST(Fp8Emitter, SameProgramTwice) {
  for (const asmgen::Variant &v : asmgen::variants()) {
    const auto build = v.schedule == asmgen::Schedule::kWgmma ? asmgen::build_fp8_wgmma_attention
                                                              : asmgen::build_fp8_attention;
    const asmgen::Program a = build(v), b = build(v);
    ASSERT_EQ(a.code.size(), b.code.size()) << v.name;
    ASSERT_EQ(a.regs.count(), b.regs.count()) << v.name;
    EXPECT_GT(a.code.size(), 1000u) << v.name;
  }
}

}  // namespace
}  // namespace zyfa::test
