// FP8 calls given a workspace (zyfa_attn_desc.workspace): the library writes V^T into it and runs the
// kernel that copies it (src/kernels/fp8_vt_layout.h) instead of transposing V per block. Through the
// public C API, on fresh inputs: the same bits as the call without a workspace (the same P codes meet the
// same V^T bytes), fp64 accuracy, a workspace poisoned with e4m3 NaNs (the pre-pass must write the padding
// past seqlen itself), repeat determinism and CUDA-graph capture.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ref/reference.hpp"
#include "reliability.hpp"
#include "support/error_limits.hpp"
#include "support/support.hpp"
#include "zyfa/zyfa.h"

namespace zyfa::test {
namespace {

constexpr unsigned char kE4m3NaN = 0x7f;
constexpr int kRepeats = 5;

struct VtCase {
  AttentionShape shape;
  ActivationKind inputs = ActivationKind::kGaussian;
};

VtCase vt_case(int64_t d_qk, int64_t batch, int64_t seqlen, int64_t nheads, int64_t nheads_k, Layout layout,
               ActivationKind inputs = ActivationKind::kGaussian) {
  AttentionShape s = attention_shape(ZYFA_DTYPE_FP8_E4M3, d_qk, batch, seqlen, nheads, nheads_k, layout);
  s.with_lse = true;
  return {s, inputs};
}

// Lean P at d_qk = 192 (p_rounding LEAN) has its own kernel that reads V^T.
VtCase lean_at_d192(VtCase c) {
  c.shape.p_rounding = ZYFA_P_ROUNDING_LEAN;
  return c;
}

std::string case_name(const ::testing::TestParamInfo<VtCase> &info) {
  return info.param.shape.name() + "_" + activation_kind_name(info.param.inputs);
}

class Fp8VtWorkspace : public ::testing::TestWithParam<VtCase> {
 protected:
  void SetUp() override { ZYFA_SKIP_WITHOUT_GPU(); }
};

// One call through the public API; outputs back into the host copy.
std::string forward(DeviceAttention &dev, const zyfa_attn_desc &desc, cudaStream_t stream) {
  if (zyfa_status s = zyfa_attn_fwd(&desc, stream))
    return std::string("zyfa_attn_fwd: ") + zyfa_status_string(s) + " (" + zyfa_last_error() + ")";
  if (std::string m = cuda_message("cudaStreamSynchronize", cudaStreamSynchronize(stream)); !m.empty()) return m;
  return dev.download_outputs();
}

// The descriptor over dev's buffers and the workspace bytes the library gives it, which these cases need
// above 0.
::testing::AssertionResult describe_with_workspace_size(const DeviceAttention &dev, zyfa_attn_desc *desc,
                                                        size_t *bytes) {
  if (!dev.status().empty()) return ::testing::AssertionFailure() << dev.status();
  *desc = dev.desc();
  if (zyfa_status s = zyfa_attn_workspace_size(desc, bytes))
    return ::testing::AssertionFailure() << zyfa_status_string(s) << ": " << zyfa_last_error();
  if (*bytes == 0) return ::testing::AssertionFailure() << "the library gives this FP8 problem no workspace";
  return ::testing::AssertionSuccess();
}

TEST_P(Fp8VtWorkspace, SameBitsAsWithoutOneAndMatchesFp64) {
  const VtCase &c = GetParam();
  ZYFA_TRACED_SEED(seed);
  HostAttention h(c.shape);
  ActivationSpec spec;
  spec.kind = c.inputs;
  h.set_inputs(generate_activations(c.shape.qkv(), spec, seed));
  const ref::ReferenceResult exact = ref::attention_fp64(h.problem());

  h.poison_outputs();
  DeviceAttention dev(h);
  zyfa_attn_desc desc;
  size_t bytes = 0;
  ASSERT_TRUE(describe_with_workspace_size(dev, &desc, &bytes));
  ASSERT_EQ(forward(dev, desc, nullptr), "");
  ASSERT_TRUE(outputs_written(h));
  const OutputSnapshot in_kernel(h);

  DeviceBuffer workspace;
  ASSERT_EQ(workspace.allocate(bytes), "");
  ZYFA_ASSERT_CUDA(cudaMemset(workspace.get(), kE4m3NaN, bytes));
  desc.workspace = workspace.get();
  desc.workspace_bytes = bytes;
  h.poison_outputs();
  DeviceAttention dev2(h);  // poisoned outputs again
  ASSERT_EQ(dev2.status(), "");
  zyfa_attn_desc desc2 = dev2.desc();
  desc2.workspace = desc.workspace;
  desc2.workspace_bytes = desc.workspace_bytes;
  ASSERT_EQ(zyfa_attn_prepare(&desc2, nullptr), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ASSERT_EQ(forward(dev2, desc2, nullptr), "");
  EXPECT_TRUE(outputs_written(h));
  EXPECT_TRUE(in_kernel.matches(h)) << "out or LSE differs from the call without a workspace";
  // Against fp64: the sharp check is the bitwise one above, so the output is held to the reliability tests'
  // limits (the CPU backend's and the 0.2x).
  const ErrorStats err = compare_to_reference(h.out_values(), exact.out);
  EXPECT_TRUE(within_rel_rms(err, max_rel_rms_gpu(c.shape)));

  int differing = 0;  // each repeat over poisoned outputs and a NaN workspace: it writes V^T and every output again
  for (int i = 0; i < kRepeats; ++i) {
    ZYFA_ASSERT_CUDA(dev2.poison_outputs());
    ZYFA_ASSERT_CUDA(cudaMemset(workspace.get(), kE4m3NaN, bytes));
    ASSERT_EQ(forward(dev2, desc2, nullptr), "");
    differing += !in_kernel.matches(h);
  }
  EXPECT_EQ(differing, 0);
  std::printf("[fp8 vt workspace] %-48s %zu bytes  out rel_rms %.3e  %d of %d repeats differing  seed %llu\n",
              case_name({c, 0}).c_str(), bytes, err.rel_rms, differing, kRepeats, (unsigned long long)seed);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Fp8VtWorkspace,
    ::testing::Values(vt_case(128, 1, 4097, 8, 2, Layout::kBSHD),                      // GQA 4:1, a block cut mid-group
                      vt_case(192, 2, 4100, 4, 1, Layout::kBHSD, ActivationKind::kStructured),  // MQA, two batches
                      vt_case(128, 1, 8191, 8, 1, Layout::kStrided, ActivationKind::kOutlier),  // gaps in every tensor
                      vt_case(192, 1, 16384, 2, 1, Layout::kBSHD),
                      vt_case(128, 1, 4096, 1, 1, Layout::kBHSD),  // MHA at the threshold, 4K
                      vt_case(192, 1, 4096, 1, 1, Layout::kBSHD),  // and at d_qk = 192
                      vt_case(128, 1, 32767, 2, 1, Layout::kBHSD, ActivationKind::kStructured),  // 256 blocks, the last cut
                      lean_at_d192(vt_case(192, 1, 6000, 4, 1, Layout::kBSHD))),  // lean P's own V^T kernel
    case_name);

// Captured after prepare with the workspace and replayed over a NaN-filled workspace and poisoned outputs:
// the replay writes V^T again, gives the direct call's bits and matches fp64 (output and LSE).
TEST(Fp8VtWorkspaceGraph, ReplayMatchesTheDirectCall) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  const VtCase c = vt_case(128, 1, 5000, 4, 1, Layout::kBSHD);
  HostAttention h(c.shape);
  h.set_inputs(generate_activations(c.shape.qkv(), ActivationSpec{}, seed));
  h.poison_outputs();
  DeviceAttention dev(h);
  zyfa_attn_desc desc;
  size_t bytes = 0;
  ASSERT_TRUE(describe_with_workspace_size(dev, &desc, &bytes));
  DeviceBuffer workspace;
  ASSERT_EQ(workspace.allocate(bytes), "");
  desc.workspace = workspace.get();
  desc.workspace_bytes = bytes;

  Stream stream(cudaStreamDefault);  // ordered after the legacy stream's workspace memsets
  ZYFA_ASSERT_CUDA(stream.error());
  ASSERT_EQ(zyfa_attn_prepare(&desc, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  Graph graph;
  ZYFA_ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const zyfa_status captured = zyfa_attn_fwd(&desc, stream);
  ZYFA_ASSERT_CUDA(cudaStreamEndCapture(stream, &graph.graph));
  ASSERT_EQ(captured, ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_ASSERT_CUDA(cudaGraphInstantiate(&graph.exec, graph.graph, 0));

  ASSERT_EQ(forward(dev, desc, stream), "");  // the direct call
  ASSERT_TRUE(outputs_written(h));
  const OutputSnapshot direct(h);
  ZYFA_ASSERT_CUDA(cudaMemset(workspace.get(), kE4m3NaN, bytes));
  ZYFA_ASSERT_CUDA(dev.poison_outputs(stream));
  ZYFA_ASSERT_CUDA(cudaGraphLaunch(graph.exec, stream));
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  ASSERT_EQ(dev.download_outputs(), "");
  EXPECT_TRUE(outputs_written(h));
  EXPECT_TRUE(direct.matches(h)) << "the replay differs from the direct call";
  EXPECT_TRUE(reliability::matches_fp64(h));
}

}  // namespace
}  // namespace zyfa::test
