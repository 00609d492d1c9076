// The dispatcher's refusal of split P (ZYFA_P_ROUNDING_SPLIT) where only a kernel that rounds P once
// would take the problem, decided without a GPU (check_split_p, which run_attention calls before it looks for
// a device): the status, and a message naming p_rounding and the field that keeps the TMA/wgmma kernels away,
// with its value.
// test/gpu/test_fp8_asm_attention.cpp checks the same through zyfa_attn_fwd, with poisoned outputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "host/dispatch.hpp"
#include "host/error.hpp"
#include "host/fp8_asm_attention.hpp"
#include "support/support.hpp"

namespace zyfa::test {
namespace {

// A valid FP8 problem over host buffers (16-byte aligned, what validation asks), batch 2 and GQA, with
// split P: the wgmma kernels take it as it is.
class SplitDispatch : public ::testing::TestWithParam<int64_t> {
 protected:
  SplitDispatch() : host_(split_shape(GetParam())) {}
  static AttentionShape split_shape(int64_t d_qk) {
    AttentionShape s = attention_shape(ZYFA_DTYPE_FP8_E4M3, d_qk, 2, 300, 4, 2, Layout::kStrided);
    s.p_rounding = ZYFA_P_ROUNDING_SPLIT;
    return s;
  }
  Problem problem() const { return host_.problem(); }

  // check_split_p refuses `p` with BAD_ARGUMENT, naming p_rounding and `field_and_value`.
  static void expect_refused(const Problem &p, const std::string &field_and_value) {
    EXPECT_FALSE(kernels::fp8_wgmma_attention_supports(p));
    EXPECT_EQ(kernels::fp8_wgmma_refusal(p).rfind(field_and_value, 0), 0u) << kernels::fp8_wgmma_refusal(p);
    clear_error();
    EXPECT_EQ(check_split_p(p), ZYFA_STATUS_BAD_ARGUMENT);
    const std::string m = last_error();
    EXPECT_NE(m.find("desc->p_rounding = ZYFA_P_ROUNDING_SPLIT (3)"), std::string::npos) << m;
    EXPECT_NE(m.find("TMA/wgmma"), std::string::npos) << m;
    EXPECT_NE(m.find(field_and_value), std::string::npos) << m;
    EXPECT_NE(m.find("use ZYFA_P_ROUNDING_EXACT"), std::string::npos) << "truncated? " << m;
    // The same problem with exact P runs (on the mma.sync kernels or the fallback).
    Problem exact = p;
    exact.split_p = false;
    EXPECT_EQ(check_split_p(exact), ZYFA_STATUS_SUCCESS);
  }

  HostAttention host_;
};

TEST_P(SplitDispatch, TmaMappableProblemsGoToTheWgmmaKernels) {
  const Problem p = problem();
  ASSERT_TRUE(p.split_p);
  EXPECT_TRUE(kernels::fp8_wgmma_attention_supports(p));
  EXPECT_EQ(kernels::fp8_wgmma_refusal(p), "");
  EXPECT_EQ(check_split_p(p), ZYFA_STATUS_SUCCESS);
}

TEST_P(SplitDispatch, StridesTmaCannotMapAreRefusedByName) {
  Problem p = problem();
  p.k.batch_stride = 0;  // one k for both batches: valid for an input, but not a TMA stride
  expect_refused(p, "desc->k_strides.batch = 0 elements");
  p = problem();
  p.v.head_stride = 0;
  expect_refused(p, "desc->v_strides.head = 0 elements");
  p = problem();
  p.q.seq_stride = int64_t(1) << 40;  // 2^40 bytes: past TMA's largest stride
  expect_refused(p, "desc->q_strides.seq = 1099511627776 elements");
}

TEST_P(SplitDispatch, SeqlenAboveTheKernelsLimitIsRefusedByName) {
  Problem p = problem();
  p.seqlen = INT32_MAX;  // only the addresses' arithmetic is looked at: nothing is read
  expect_refused(p, "desc->seqlen = 2147483647");
}

// zyfa.h, the README and the Go binding document the limit as seqlen <= 2^31 - 513.
TEST_P(SplitDispatch, SeqlenLimitIsTheDocumentedOne) {
  Problem p = problem();
  p.seqlen = (int64_t(1) << 31) - 513;
  EXPECT_TRUE(kernels::fp8_wgmma_attention_supports(p)) << kernels::fp8_wgmma_refusal(p);
  p.seqlen += 1;
  expect_refused(p, "desc->seqlen = 2147483136");
}

TEST_P(SplitDispatch, UnalignedBasesAreRefusedByName) {
  Problem p = problem();
  p.v.ptr = static_cast<const uint8_t *>(p.v.ptr) + 1;
  expect_refused(p, "desc->v = ");
}

// The epilogue writes 16-byte chunks of each output row (the mma.sync kernels' too: exact P goes to the
// fallback then).
TEST_P(SplitDispatch, OutputRowsOffSixteenBytesAreRefusedByName) {
  Problem p = problem();
  p.out.seq_stride += 2;
  expect_refused(p, "desc->out = ");
  EXPECT_FALSE(kernels::fp8_asm_attention_supports(p));
  p = problem();
  p.out.ptr = static_cast<const uint8_t *>(p.out.ptr) + 4;
  expect_refused(p, "desc->out = ");
}

TEST_P(SplitDispatch, OnlySplitPIsRefused) {
  Problem p = problem();
  p.split_p = false;
  p.k.batch_stride = 0;
  EXPECT_EQ(check_split_p(p), ZYFA_STATUS_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(HeadDims, SplitDispatch, ::testing::Values(128, 192),
                         [](const ::testing::TestParamInfo<int64_t> &i) { return "d" + std::to_string(i.param); });

}  // namespace
}  // namespace zyfa::test
