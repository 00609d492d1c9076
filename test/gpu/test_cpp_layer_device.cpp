// The header-only C++ layer (zyfa.hpp) on the GPU: a descriptor built through its builder (device
// descales with strides, explicit strides, the LSE, a P rounding, a workspace) prepares and runs, writes the
// same bits as the C call over the same buffers, and matches fp64. The host tests (test_cpp_layer.cpp)
// cover its fields, its errors and its host calls.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpp_layer_call.hpp"
#include "reliability.hpp"
#include "support/support.hpp"
#include "zyfa/zyfa.h"

namespace zyfa::test {
namespace {

using reliability::DeviceProblem;
using reliability::matches_fp64;

struct CppCase {
  const char *name;
  AttentionShape shape;
  bool takes_workspace = false;  // zyfa_attn_workspace_size gives it bytes (the V^T workspace)
};

AttentionShape with_p_rounding(AttentionShape s, zyfa_p_rounding rounding) {
  s.p_rounding = rounding;
  return s;
}

std::vector<CppCase> cpp_cases() {
  constexpr zyfa_dtype bf16 = ZYFA_DTYPE_BF16, fp8 = ZYFA_DTYPE_FP8_E4M3;
  return {
      {"bf16_d128_gqa", attention_shape(bf16, 128, 2, 300, 8, 2)},
      {"bf16_d192_strided", attention_shape(bf16, 192, 1, 257, 4, 4, Layout::kStrided)},
      {"fp8_d128_headdescale", attention_shape(fp8, 128, 2, 300, 8, 2, Layout::kBSHD, true)},
      {"fp8_d192_bhsd_hostdescale", attention_shape(fp8, 192, 1, 513, 4, 1, Layout::kBHSD)},
      {"fp8_d128_split", with_p_rounding(attention_shape(fp8, 128, 1, 1000, 8, 2, Layout::kBSHD, true),
                                         ZYFA_P_ROUNDING_SPLIT)},
      {"fp8_d128_workspace", attention_shape(fp8, 128, 1, 1100, 8, 2, Layout::kBSHD, true), true},  // group * seqlen 4400
  };
}

class CppLayerDevice : public ::testing::TestWithParam<CppCase> {};

TEST_P(CppLayerDevice, BuilderCallWritesTheCCallsBitsAndMatchesFp64) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  Stream stream;
  ZYFA_ASSERT_CUDA(stream.error());
  DeviceProblem problem(GetParam().shape, seed);
  ASSERT_EQ(problem.status(), "");
  zyfa_attn_desc c = problem.desc();

  size_t bytes = 0, c_bytes = 0;
  ASSERT_EQ(cpp_layer_workspace_size(c, &bytes), "");
  ASSERT_EQ(zyfa_attn_workspace_size(&c, &c_bytes), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(bytes, c_bytes);
  EXPECT_EQ(bytes > 0, GetParam().takes_workspace) << bytes << " workspace bytes";
  DeviceBuffer workspace;
  if (bytes > 0) {
    ASSERT_EQ(workspace.allocate(bytes), "");
    c.workspace = workspace.get();
    c.workspace_bytes = bytes;
  }

  ZYFA_ASSERT_CUDA(problem.poison(stream));
  ASSERT_EQ(cpp_layer_prepare_and_forward(c, stream), "");
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  std::vector<uint8_t> cpp_out, cpp_lse, c_out, c_lse;
  ASSERT_EQ(problem.download_bytes(&cpp_out, &cpp_lse), "");
  ASSERT_EQ(problem.download(), "");
  EXPECT_TRUE(matches_fp64(problem.host()));

  ZYFA_ASSERT_CUDA(problem.poison(stream));
  ASSERT_EQ(zyfa_attn_fwd(&c, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  ASSERT_EQ(problem.download_bytes(&c_out, &c_lse), "");
  EXPECT_TRUE(cpp_out == c_out && cpp_lse == c_lse) << "the C++ layer's call differs from the C call";
}

INSTANTIATE_TEST_SUITE_P(Shapes, CppLayerDevice, ::testing::ValuesIn(cpp_cases()),
                         [](const ::testing::TestParamInfo<CppCase> &param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace zyfa::test
