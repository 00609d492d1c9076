// The header-only C++ layer: the builder fills the C descriptor, errors throw zyfa::Error with the
// status and the library's message, and host calls through it (attention, quantize) match the same calls
// through the C ABI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/numerics.h"
#include "support/seed.hpp"
#include "zyfa/zyfa.hpp"

namespace {

TEST(CppLayer, BuilderFillsTheDescriptor) {
  zyfa::Attention attn;
  attn.shape(2, 33, 8, 2).head_dims(192, 128).layout(ZYFA_LAYOUT_BHSD).softmax_scale(0.5f);
  const zyfa_attn_desc &d = attn.desc();
  EXPECT_EQ(d.struct_size, sizeof(zyfa_attn_desc));
  EXPECT_EQ(d.batch, 2);
  EXPECT_EQ(d.seqlen, 33);
  EXPECT_EQ(d.nheads, 8);
  EXPECT_EQ(d.nheads_k, 2);
  EXPECT_EQ(d.d_qk, 192);
  EXPECT_EQ(d.d_v, 128);
  EXPECT_EQ(d.layout, ZYFA_LAYOUT_BHSD);
  EXPECT_EQ(d.causal, 1);
  attn.fp8(zyfa::Descale::host(0.5f), zyfa::Descale::host(0.25f), zyfa::Descale::host(2.0f));
  EXPECT_EQ(attn.desc().dtype, ZYFA_DTYPE_FP8_E4M3);
  EXPECT_EQ(attn.desc().k_descale.kind, ZYFA_DESCALE_HOST);
  EXPECT_EQ(attn.desc().k_descale.value, 0.25f);
  EXPECT_EQ(attn.desc().p_rounding, ZYFA_P_ROUNDING_DEFAULT);
  attn.p_rounding(ZYFA_P_ROUNDING_EXACT);
  EXPECT_EQ(attn.desc().p_rounding, ZYFA_P_ROUNDING_EXACT);
  attn.bf16();  // clears the FP8-only fields
  EXPECT_EQ(attn.desc().q_descale.kind, ZYFA_DESCALE_NONE);
  EXPECT_EQ(attn.desc().p_rounding, ZYFA_P_ROUNDING_DEFAULT);
}

// workspace_size() asks the library (FP8 from group * seqlen = 4K: one V^T per kv head, whole 128-key
// blocks); workspace() fills both fields.
TEST(CppLayer, WorkspaceSizeAndFields) {
  zyfa::Attention attn;
  attn.shape(1, 8192, 8, 2);
  EXPECT_EQ(attn.workspace_size(), 0u);  // BF16
  attn.fp8(zyfa::Descale::host(1.0f), zyfa::Descale::host(1.0f), zyfa::Descale::host(1.0f));
  EXPECT_EQ(attn.workspace_size(), size_t(2 * 128 * 8192));
  size_t bytes = 1;
  ASSERT_EQ(attn.try_workspace_size(&bytes), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(bytes, size_t(2 * 128 * 8192));
  int scratch = 0;
  attn.workspace(&scratch, 12345);
  EXPECT_EQ(attn.desc().workspace, &scratch);
  EXPECT_EQ(attn.desc().workspace_bytes, 12345u);
}

TEST(CppLayer, ErrorsThrowWithStatusAndMessage) {
  zyfa::Attention attn;
  attn.shape(1, 0, 1, 1);
  try {
    attn.forward_host();
    FAIL() << "seqlen = 0 must throw";
  } catch (const zyfa::Error &e) {
    EXPECT_EQ(e.status(), ZYFA_STATUS_BAD_SHAPE);
    EXPECT_NE(std::string(e.what()).find("seqlen = 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(attn.try_forward(), ZYFA_STATUS_BAD_SHAPE);
  EXPECT_EQ(attn.try_forward_host(), ZYFA_STATUS_BAD_SHAPE);
  EXPECT_NE(std::string(zyfa_last_error()).find("seqlen = 0"), std::string::npos) << zyfa_last_error();
  size_t bytes = 7;
  EXPECT_EQ(attn.try_workspace_size(&bytes), ZYFA_STATUS_BAD_SHAPE);
  EXPECT_EQ(bytes, 7u) << "a refused call writes nothing";
  EXPECT_EQ(attn.try_prepare(), ZYFA_STATUS_BAD_SHAPE);
}

TEST(CppLayer, HostCallMatchesTheCAbi) {
  const int64_t s = 19, h = 2, d = 128;
  ZYFA_TRACED_SEED(seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<uint16_t> q(s * h * d), k(s * h * d), v(s * h * d);
  for (auto *t : {&q, &k, &v})
    for (auto &x : *t) x = zyfa::numerics::bf16_bits(normal(rng));
  std::vector<uint16_t> out_cpp(s * h * d, 0xffff), out_c(s * h * d, 0xffff);
  zyfa::Attention attn;
  attn.shape(1, s, h, h).tensors(q.data(), k.data(), v.data(), out_cpp.data());
  attn.forward_host();
  zyfa_attn_desc desc = attn.desc();
  desc.out = out_c.data();
  ASSERT_EQ(zyfa_attn_fwd_host(&desc), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(out_cpp, out_c);
  std::vector<uint16_t> out_try(s * h * d, 0xffff);
  attn.tensors(q.data(), k.data(), v.data(), out_try.data());
  ASSERT_EQ(attn.try_forward_host(), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(out_try, out_c);
  // Equal could mean both untouched: every element written (0xffff is a NaN the call never produces), finite.
  for (uint16_t x : out_cpp) {
    ASSERT_NE(x, 0xffff) << "an output element was not written";
    ASSERT_TRUE(std::isfinite(zyfa::numerics::bf16_value(x)));
  }
  EXPECT_TRUE(zyfa::library_matches_header());
}

TEST(CppLayer, QuantizeMatchesTheCAbi) {
  const int64_t rows = 33, dim = 128;
  ZYFA_TRACED_SEED(seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<uint16_t> src(rows * dim);
  for (auto &x : src) x = zyfa::numerics::bf16_bits(normal(rng));
  std::vector<uint8_t> dst_cpp(rows * dim, 0x7f), dst_c(rows * dim, 0x7f);  // 0x7f: an e4m3 NaN, never written
  float descale_cpp = -1.0f, descale_c = -1.0f;
  zyfa::Quantize(rows, dim).rotation(ZYFA_ROTATION_HADAMARD, seed).buffers(src.data(), dst_cpp.data(), &descale_cpp)
      .run_host();
  zyfa_quantize_desc desc = ZYFA_QUANTIZE_DESC_INIT;
  desc.src = src.data(), desc.dst = dst_c.data(), desc.descale = &descale_c;
  desc.n_rows = rows, desc.dim = dim, desc.rotation = ZYFA_ROTATION_HADAMARD, desc.rotation_seed = seed;
  ASSERT_EQ(zyfa_quantize_fp8_host(&desc), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(dst_cpp, dst_c);
  EXPECT_EQ(descale_cpp, descale_c);
  EXPECT_GT(descale_cpp, 0.0f);
  EXPECT_EQ(std::count(dst_cpp.begin(), dst_cpp.end(), uint8_t(0x7f)), 0) << "an element was not written";
  // The non-throwing form: the same bytes, and a refusal as a status.
  std::vector<uint8_t> dst_try(rows * dim, 0x7f);
  float descale_try = -1.0f;
  const zyfa::Quantize quantize =
      zyfa::Quantize(rows, dim).rotation(ZYFA_ROTATION_HADAMARD, seed).buffers(src.data(), dst_try.data(), &descale_try);
  ASSERT_EQ(quantize.try_run_host(), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(dst_try, dst_c);
  EXPECT_EQ(descale_try, descale_c);
  EXPECT_EQ(zyfa::Quantize(rows, 100).rotation(ZYFA_ROTATION_HADAMARD, seed).buffers(src.data(), dst_try.data(),
                                                                                      &descale_try).try_run_host(),
            ZYFA_STATUS_UNSUPPORTED_HEAD_DIM);
  try {
    zyfa::Quantize(rows, 100).rotation(ZYFA_ROTATION_HADAMARD, seed).buffers(src.data(), dst_cpp.data(), &descale_cpp)
        .run_host();
    ADD_FAILURE() << "a rotated quantize of dim 100 did not throw";
  } catch (const zyfa::Error &e) {
    EXPECT_EQ(e.status(), ZYFA_STATUS_UNSUPPORTED_HEAD_DIM);
  }
}

TEST(CppLayer, PlanCacheCapacity) {
  const uint64_t before = zyfa::plan_cache_stats().capacity;
  zyfa::plan_cache_set_capacity(5);
  EXPECT_EQ(zyfa::plan_cache_stats().capacity, 5u);
  EXPECT_THROW(zyfa::plan_cache_set_capacity(0), zyfa::Error);
  zyfa::plan_cache_set_capacity(before);
  zyfa::plan_cache_clear();
}

}  // namespace
