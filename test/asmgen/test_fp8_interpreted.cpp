// The emitted FP8 kernels, as the very instruction lists that ptxas assembles, run on the emitter's CPU
// interpreter (src/asmgen/interpreter.hpp) over fresh inputs: against the CPU backend (the recurrence of
// numerics.h) and fp64, with poisoned outputs, the plan cache's job table walked by a small grid, every
// layout, GQA and MQA, LSE optional, both descale forms; both schedules (mma.sync, and wgmma on the
// interpreter's model of TMA, mbarriers and wgmma). Host tests: no GPU needed. The asynchronous copies and
// products complete when issued, but a product's registers and shared bytes stay its own until its wait, and
// every mbarrier arrive lets the other warps run first, so a stage released before the wait on the products
// that read it fails here (a TMA copy lands on their bytes); a TMA copy lands only when a warp waits on its
// mbarrier (or nothing else can move), so a read that skips the stage's full barrier fails too; shared bytes
// threads wrote need a fence.proxy.async before the barrier that hands them to a wgmma, and the workspace of
// the variants that overlap the pre-pass is readable only after griddepcontrol.wait. What they cannot see is
// the rest of the hardware's behaviour (timing, the real instruction results); the GPU tests check that.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "asmgen/fp8_attention.hpp"
#include "asmgen/fp8_kernel_params.h"
#include "asmgen/interpreter.hpp"
#include "asmgen/ptx_printer.hpp"
#include "asmgen/variants.hpp"
#include "host/code_objects.hpp"
#include "host/cta_balance.hpp"
#include "host/error.hpp"
#include "host/fp8_asm_attention.hpp"
#include "host/plan_cache.hpp"
#include "kernels/fp8_vt_layout.h"
#include "kernels/numerics.h"
#include "ref/cpu_backend.hpp"
#include "ref/reference.hpp"
#include "support/error_limits.hpp"
#include "support/support.hpp"

namespace zyfa::test {
namespace {

// The interpreter and the CPU backend differ only in the order of fp32 sums (an MMA's sum against the
// backend's fixed partial sums) and in the last bits of exp2 and log2: far below the recurrence's own
// error against fp64. The GPU tests allow a backend ratio of 0.2 (support/backend_ratio.hpp); the
// interpreter, deterministic and with no hardware exp2 between the two, measured 0 in 30 of 40 cases and
// at most 0.0035 (session 37), so it gets a quarter of that: one output element off by its own size at
// S = 300 already gives about 0.1. The floor is outputs rounded one BF16 step the other way (a sum order
// flipping a rounding): two outputs of one row did so at S = 7 with split P's small error, ratio 0.036
// (session 39, seed 12250283244429360437 of fp8_d128_b2_s7_h8_hk1_bhsd_headdescale_splitp, about 1 run in
// 20), which 0.02 failed. Against fp64: the CPU backend's limits (support/error_limits.hpp), out and LSE, since the
// interpreted kernel runs the same recurrence.
constexpr double kMaxInterpretedRatio = 0.05;

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

// A schedule's variant for a problem, as the library picks it (the embedded code object the launch would
// take), checked against what it must be: the problem's head dims, P rounding and V's source.
const asmgen::Variant &variant_for(const Problem &p, asmgen::Schedule schedule) {
  const CodeObject *object = kernels::fp8_code_object(p, schedule == asmgen::Schedule::kWgmma);
  if (object == nullptr)
    throw std::logic_error(std::string("no ") + asmgen::schedule_name(schedule) + " code object for this problem");
  const asmgen::Variant *v = asmgen::find_variant(object->variant);
  if (v == nullptr) throw std::logic_error(std::string("code object ") + object->variant + " names no variant");
  const bool vt_prepass = schedule == asmgen::Schedule::kWgmma && p.vt_prepass;
  if (v->schedule != schedule || v->d_qk != p.d_qk || v->lean_p != p.lean_p || v->split_p != p.split_p ||
      v->vt_prepass != vt_prepass || object->d_v != p.d_v)
    throw std::logic_error(std::string("the library picked ") + v->name + ", which does not fit the problem");
  return *v;
}

// The tensor maps of the wgmma schedule, in the interpreter's form (the device's are the driver's): the
// boxes and swizzles src/host/fp8_asm_attention.cpp encodes, over (dim, seqlen, heads, batch).
void interpreted_maps(asmgen::Fp8AttentionParams *params, const Problem &p, uint32_t q_box_rows) {
  static_assert(sizeof(asmgen::InterpretedTensorMap) <= sizeof(asmgen::Fp8TensorMap), "a map fits a CUtensorMap's bytes");
  auto fill = [&](asmgen::Fp8TensorMap *dst, uint64_t base, int64_t dim, int64_t heads, int64_t seq_stride,
                  int64_t head_stride, int64_t batch_stride, uint32_t box, int64_t rows,
                  uint32_t box_rows = uint32_t(numerics::kKeyBlock)) {
    asmgen::InterpretedTensorMap m{};
    m.base = base;
    m.dims[0] = uint64_t(dim);
    m.dims[1] = uint64_t(rows);
    m.dims[2] = uint64_t(heads);
    m.dims[3] = uint64_t(p.batch);
    m.strides[0] = uint64_t(seq_stride);  // one byte per e4m3 element
    m.strides[1] = uint64_t(head_stride);
    m.strides[2] = uint64_t(batch_stride);
    m.box[0] = box;
    m.box[1] = box_rows;
    m.swizzle_bytes = box;
    std::memset(dst, 0, sizeof *dst);
    std::memcpy(dst, &m, sizeof m);
  };
  const uint32_t qk_box = uint32_t(asmgen::fp8_qk_block_bytes(int(p.d_qk)));
  const int64_t nheads_k = p.nheads / params->group;
  fill(&params->q_map, params->q, p.d_qk, p.nheads, params->q_seq_stride, params->q_head_stride, params->q_batch_stride,
       qk_box, p.seqlen, q_box_rows);
  fill(&params->k_map, params->k, p.d_qk, nheads_k, params->k_seq_stride, params->k_head_stride, params->k_batch_stride,
       qk_box, p.seqlen);
  if (p.vt_prepass) {  // V^T in the workspace: one row of padded keys per dimension (fp8_vt_layout.h)
    const int64_t keys = fp8_vt::padded_keys(p.seqlen);
    fill(&params->v_map, uint64_t(reinterpret_cast<uintptr_t>(p.workspace)), keys, nheads_k, keys,
         fp8_vt::kVtDims * keys, nheads_k * fp8_vt::kVtDims * keys, 128, fp8_vt::kVtDims);
  } else {
    fill(&params->v_map, params->v, p.d_v, nheads_k, params->v_seq_stride, params->v_head_stride,
         params->v_batch_stride, 128, p.seqlen);
  }
}

// What the GPU's pre-pass (src/kernels/fp8_vt_prepass.cu) writes into the workspace, from the layout's
// definition: V^T per (batch, kv head), keys in P's register order, zeros past seqlen.
std::vector<uint8_t> host_vt_workspace(const Problem &p) {
  const int64_t keys = fp8_vt::padded_keys(p.seqlen);
  std::vector<uint8_t> vt(size_t(fp8_vt::workspace_bytes(p.batch, p.nheads_k, p.seqlen)), 0);
  const auto *v = static_cast<const uint8_t *>(p.v.ptr);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.nheads_k; ++h)
      for (int64_t dim = 0; dim < fp8_vt::kVtDims; ++dim)
        for (int64_t pos = 0; pos < keys; ++pos) {
          const int64_t key = pos / fp8_vt::kKeyGroup * fp8_vt::kKeyGroup + fp8_vt::key_at(int(pos % fp8_vt::kKeyGroup));
          if (key < p.seqlen)
            vt[size_t(((b * p.nheads_k + h) * fp8_vt::kVtDims + dim) * keys + pos)] = v[p.v.offset(b, key, h) + dim];
        }
  return vt;
}

// Runs the case's kernel on the interpreter over h's inputs (the mma.sync schedule, or the wgmma one where
// `wgmma`, reading V^T from a workspace where `vt_prepass`) into h's poisoned outputs. Returns the grid, or
// 0 after a failure. `instructions`: executed per lane.
int interpret(const InterpretedCase &tc, HostAttention &h, bool wgmma, bool vt_prepass, double *instructions) {
  const AttentionShape &sh = tc.shape;
  h.poison_outputs();
  Problem p = h.problem();
  std::vector<uint8_t> workspace;
  if (vt_prepass) {
    workspace = host_vt_workspace(p);
    p.vt_prepass = true;
    p.workspace = workspace.data();
  }
  const bool supported = wgmma ? kernels::fp8_wgmma_attention_supports(p) : kernels::fp8_asm_attention_supports(p);
  EXPECT_TRUE(supported);
  if (!supported) return 0;
  const asmgen::Variant &variant = variant_for(p, wgmma ? asmgen::Schedule::kWgmma : asmgen::Schedule::kMmaSync);
  const int tile_rows = asmgen::query_tile_rows(variant);  // as the plan cache takes it from the code object

  std::vector<Job> jobs;
  EXPECT_EQ(build_job_table(sh.batch, sh.nheads, sh.nheads_k, sh.seqlen, &jobs, kDefaultJobOrder, tile_rows),
            ZYFA_STATUS_SUCCESS)
      << last_error();
  if (jobs.empty()) return 0;
  kernels::Schedule schedule;
  schedule.grid = std::min(tc.grid, int32_t(jobs.size()));
  balance_tail(&jobs, schedule.grid, query_tiling(sh.seqlen, tile_rows));  // as the plan cache does: single tiles of any index in the last rounds
  schedule.jobs = jobs.data();
  schedule.n_jobs = int32_t(jobs.size());

  asmgen::Fp8AttentionParams params = kernels::fp8_attention_params(p, schedule, tile_rows);
  if (wgmma) interpreted_maps(&params, p, uint32_t(tile_rows));
  const asmgen::Program prog = asmgen::build_fp8_kernel(variant);
  asmgen::Interpreter interp(prog);
  interp.add_region(h.q.data(), h.q.size_bytes(), false);
  interp.add_region(h.k.data(), h.k.size_bytes(), false);
  interp.add_region(h.v.data(), h.v.size_bytes(), false);
  interp.add_region(h.out.data(), h.out.size_bytes(), true);
  interp.add_region(h.lse.data(), h.lse.size() * sizeof(float), true);
  interp.add_region(jobs.data(), jobs.size() * sizeof(Job), false);
  for (const std::vector<float> *d : {&h.q_descale, &h.k_descale, &h.v_descale})
    interp.add_region(d->data(), d->size() * sizeof(float), false);
  if (vt_prepass && variant.overlaps_prepass)  // launched while the pre-pass may still write V^T
    interp.add_preceding_grid_output(workspace.data(), workspace.size());
  else if (vt_prepass)
    interp.add_region(workspace.data(), workspace.size(), false);
  const std::string failure = interp.run(schedule.grid, &params);
  EXPECT_EQ(failure, "");
  EXPECT_TRUE(outputs_written(h));
  *instructions = double(interp.instructions_executed());
  return failure.empty() ? schedule.grid : 0;
}

// Fresh inputs of the case's kind into h; returns their seed.
uint64_t set_case_inputs(const InterpretedCase &tc, HostAttention &h) {
  const uint64_t seed = fresh_seed();
  ActivationSpec spec;
  spec.kind = tc.inputs;
  h.set_inputs(generate_activations(tc.shape.qkv(), spec, seed));
  return seed;
}

// What an interpreted run is checked against: fp64, and the CPU backend summing as the schedule's matrix
// unit does, both on h's inputs (computed before the run, which then overwrites h's outputs).
struct References {
  ref::ReferenceResult exact;
  std::vector<double> cpu_out, cpu_lse;
};

References references(HostAttention &h, bool wgmma) {
  References r;
  r.exact = ref::attention_fp64(h.problem());
  h.poison_outputs();
  ref::attention_cpu_backend(h.problem(), wgmma ? ref::Fp8Sums::kTensorCores : ref::Fp8Sums::kExactFp32);
  r.cpu_out = h.out_values();
  r.cpu_lse = h.lse_values();
  return r;
}

// h's outputs (an interpreted run's) against the references: out and LSE within the CPU backend's limits of
// fp64, and within the interpreter's ratio of the CPU backend.
void expect_matches_references(const InterpretedCase &tc, const HostAttention &h, const References &r, int grid,
                               double instructions, const char *label) {
  const AttentionShape &sh = tc.shape;
  const std::vector<double> got_out = h.out_values(), got_lse = h.lse_values();
  const ErrorStats out_err = compare_to_reference(got_out, r.exact.out);
  const BackendComparison out_vs_cpu = compare_backends(got_out, r.cpu_out, r.exact.out);
  EXPECT_TRUE(within_rel_rms(out_err, max_rel_rms(sh)));
  EXPECT_TRUE(within_backend_ratio(out_vs_cpu, kMaxInterpretedRatio)) << "out";
  BackendComparison lse_vs_cpu;
  if (sh.with_lse) {
    const ErrorStats lse_err = compare_to_reference(got_lse, r.exact.lse);
    EXPECT_EQ(lse_err.nonfinite, 0);
    EXPECT_LE(lse_err.max_abs, max_lse_err(sh)) << "LSE against fp64";
    lse_vs_cpu = compare_backends(got_lse, r.cpu_lse, r.exact.lse);
    EXPECT_TRUE(within_backend_ratio(lse_vs_cpu, kMaxInterpretedRatio)) << "LSE";
  }
  std::printf("[asmgen interpreted%s] %-40s %-10s grid %d  out rel_rms %.3e (cpu %.3e)  vs cpu %.3e (ratio %.4f)  lse "
              "ratio %.4f  %.2e instructions/lane\n",
              label, sh.name().c_str(), activation_kind_name(tc.inputs), grid, out_err.rel_rms,
              out_vs_cpu.cpu_err, out_vs_cpu.gpu_cpu, out_vs_cpu.ratio, lse_vs_cpu.ratio, instructions);
}

// Runs the case's kernel on the interpreter (the mma.sync schedule, or the wgmma one where `wgmma`) and
// checks it against the CPU backend and fp64.
void run_interpreted(const InterpretedCase &tc, bool wgmma) {
  const AttentionShape &sh = tc.shape;
  HostAttention h(sh);
  SCOPED_TRACE("ZYFA_TEST_SEED=" + std::to_string(set_case_inputs(tc, h)));
  const References refs = references(h, wgmma);

  double instructions = 0;
  const int grid = interpret(tc, h, wgmma, /*vt_prepass=*/false, &instructions);
  ASSERT_GT(grid, 0);
  expect_matches_references(tc, h, refs, grid, instructions, wgmma ? " wgmma" : "");
  if (const char *dir = std::getenv("ZYFA_INTERPRETED_DUMP")) {  // for comparing two emitters' outputs bit for bit
    const std::string path = std::string(dir) + "/" + (wgmma ? "wgmma_" : "") + sh.name() + "_" +
                             activation_kind_name(tc.inputs) + "_grid" + std::to_string(grid) + ".bin";
    if (FILE *f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(h.out.data(), 1, h.out.size_bytes(), f);
      std::fwrite(h.lse.data(), sizeof(float), h.lse.size(), f);
      std::fclose(f);
    }
  }
}

class Fp8Interpreted : public ::testing::TestWithParam<InterpretedCase> {};

TEST_P(Fp8Interpreted, MatchesCpuBackendAndFp64) { run_interpreted(GetParam(), /*wgmma=*/false); }

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
  // The rounding that is not the head dim's default (p_rounding): exact P at d = 128, lean P at d_qk = 192.
  for (int64_t d : {128, 192}) {
    AttentionShape s = fp8_shape(d, 1, 300, 4, 2, Layout::kBHSD, true, true);
    s.p_rounding = d == 128 ? ZYFA_P_ROUNDING_EXACT : ZYFA_P_ROUNDING_LEAN;
    c.push_back({s, 3, ActivationKind::kStructured});
  }
  return c;
}

std::string case_name(const ::testing::TestParamInfo<InterpretedCase> &info) {
  return info.param.shape.name() + "_" + activation_kind_name(info.param.inputs) + "_grid" +
         std::to_string(info.param.grid);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8Interpreted, ::testing::ValuesIn(cases()), case_name);

// The wgmma schedule on the interpreter's model of TMA, mbarriers, named barriers and wgmma. The cases give
// CTAs one tile (seqlen 1: the diagonal block alone), several in a row (every mbarrier ring and the Q
// buffers wrap across tile boundaries), tiles of index 0 after larger ones and jobs of one tile
// (balance_tail), for each P rounding and both head dims.
class Fp8InterpretedWgmma : public ::testing::TestWithParam<InterpretedCase> {};

TEST_P(Fp8InterpretedWgmma, MatchesCpuBackendAndFp64) { run_interpreted(GetParam(), /*wgmma=*/true); }

std::vector<InterpretedCase> wgmma_cases() {
  std::vector<InterpretedCase> c;
  for (zyfa_p_rounding r :
       {ZYFA_P_ROUNDING_DEFAULT, ZYFA_P_ROUNDING_LEAN, ZYFA_P_ROUNDING_EXACT, ZYFA_P_ROUNDING_SPLIT})
    for (int64_t d : {128, 192}) {
      if (d == 128 && r == ZYFA_P_ROUNDING_LEAN) continue;   // d = 128's default is lean P
      if (d == 192 && r == ZYFA_P_ROUNDING_EXACT) continue;  // d_qk = 192's default is exact P
      auto add = [&](AttentionShape s, int grid, ActivationKind kind = ActivationKind::kGaussian) {
        s.p_rounding = r;
        c.push_back({s, grid, kind});
      };
      add(fp8_shape(d, 1, 1, 2, 1, Layout::kBSHD, false, true), 132);         // one key: each CTA one tile
      add(fp8_shape(d, 2, 7, 8, 1, Layout::kBHSD, true, true), 3);            // GQA 8:1, head descales, 16 tiles of 1 block
      add(fp8_shape(d, 1, 300, 4, 2, Layout::kStrided, true, false), 2);      // tiles 0-2 paired, no LSE
      add(fp8_shape(d, 1, 640, 2, 1, Layout::kBSHD, false, true), 1);         // one CTA: every tile in one loop
    }
  c.push_back({fp8_shape(128, 2, 1000, 2, 1, Layout::kBHSD, true, true), 5, ActivationKind::kStructured});
  c.push_back({fp8_shape(128, 1, 300, 2, 1, Layout::kBSHD, false, true), 4, ActivationKind::kOutlier});
  return c;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8InterpretedWgmma, ::testing::ValuesIn(wgmma_cases()), case_name);

// The variants that read V^T from the call's workspace (written before the kernel, here by
// host_vt_workspace), the library's choice for long FP8 calls with a workspace and the only ones with three
// serialized consumers, against fp64 and the CPU backend, and against the ones that transpose V in the
// kernel on the same inputs: the same P codes meet the same V^T bytes in the same products, so out and LSE
// must be the same bits. The cases cover one key (the padded block is almost all zeros), GQA with strides, a
// last block cut mid-group, tiles that wrap the rings, no LSE and outlier inputs.
class Fp8InterpretedWgmmaVt : public ::testing::TestWithParam<InterpretedCase> {};

TEST_P(Fp8InterpretedWgmmaVt, SameBitsAsTheInKernelTransposition) {
  const InterpretedCase &tc = GetParam();
  HostAttention h(tc.shape);
  SCOPED_TRACE("ZYFA_TEST_SEED=" + std::to_string(set_case_inputs(tc, h)));
  const References refs = references(h, /*wgmma=*/true);
  double instructions = 0;
  ASSERT_GT(interpret(tc, h, /*wgmma=*/true, /*vt_prepass=*/false, &instructions), 0);
  const auto *out_bytes = static_cast<const uint8_t *>(h.out.data());
  const std::vector<uint8_t> in_kernel_out(out_bytes, out_bytes + h.out.size_bytes());
  const std::vector<float> in_kernel_lse = h.lse;
  const int grid = interpret(tc, h, /*wgmma=*/true, /*vt_prepass=*/true, &instructions);
  ASSERT_GT(grid, 0);
  EXPECT_EQ(std::memcmp(h.out.data(), in_kernel_out.data(), in_kernel_out.size()), 0)
      << "out differs from the in-kernel transposition's";
  EXPECT_EQ(std::memcmp(h.lse.data(), in_kernel_lse.data(), h.lse.size() * sizeof(float)), 0) << "LSE differs";
  expect_matches_references(tc, h, refs, grid, instructions, " wgmma vt");
}

std::vector<InterpretedCase> vt_cases() {
  std::vector<InterpretedCase> c;
  for (int64_t d : {128, 192}) {
    c.push_back({fp8_shape(d, 1, 1, 2, 1, Layout::kBSHD, false, true), 132});
    c.push_back({fp8_shape(d, 1, 300, 4, 2, Layout::kStrided, true, true), 2});
    c.push_back({fp8_shape(d, 1, 640, 2, 1, Layout::kBHSD, false, true), 1});
  }
  c.push_back({fp8_shape(128, 2, 1000, 2, 1, Layout::kBHSD, true, true), 5, ActivationKind::kStructured});
  c.push_back({fp8_shape(128, 1, 300, 4, 2, Layout::kStrided, false, false), 2});  // no LSE
  c.push_back({fp8_shape(192, 1, 300, 2, 1, Layout::kBSHD, false, true), 3, ActivationKind::kOutlier});
  AttentionShape lean_d192 = fp8_shape(192, 1, 300, 4, 2, Layout::kStrided, true, true);  // its own V^T kernel
  lean_d192.p_rounding = ZYFA_P_ROUNDING_LEAN;
  c.push_back({lean_d192, 2});
  return c;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8InterpretedWgmmaVt, ::testing::ValuesIn(vt_cases()), case_name);

// The emitted program is the same list every time (what the PTX determinism test sees, one level up).
TEST(Fp8Emitter, SameProgramTwice) {
  for (const asmgen::Variant &v : asmgen::variants()) {
    const asmgen::Program a = asmgen::build_fp8_kernel(v), b = asmgen::build_fp8_kernel(v);
    EXPECT_GT(a.code.size(), 1000u) << v.name;
    EXPECT_TRUE(asmgen::print_ptx(a) == asmgen::print_ptx(b)) << v.name << ": two builds print different PTX";
  }
}

// A kernel launched to overlap the pre-pass must wait for it before reading V^T; any other kernel is launched
// after the work before it has completed and needs no wait (code_objects.hpp's overlaps_prepass).
TEST(Fp8Emitter, OnlyKernelsThatOverlapThePrePassWaitForIt) {
  int overlapping = 0;
  for (const asmgen::Variant &v : asmgen::variants()) {
    if (v.schedule != asmgen::Schedule::kWgmma) continue;
    const asmgen::Program program = asmgen::build_fp8_kernel(v);
    const auto waits = std::count_if(program.code.begin(), program.code.end(),
                                     [](const asmgen::Instr &in) { return in.op == asmgen::Op::kGridDependencyWait; });
    if (v.overlaps_prepass) {
      EXPECT_TRUE(v.vt_prepass) << v.name << ": only the pre-pass's reader can overlap it";
      EXPECT_GT(waits, 0) << v.name;
      ++overlapping;
    } else {
      EXPECT_EQ(waits, 0) << v.name;
    }
  }
  EXPECT_GT(overlapping, 0) << "no variant overlaps the V^T pre-pass";
}

}  // namespace
}  // namespace zyfa::test
