// Every invalid descriptor class gets its own status and a message naming the field and its value, and
// nothing is written: the output keeps its poison. Both entry points validate before touching a device,
// so these run on any machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "zyfa/zyfa.h"

namespace {

constexpr int64_t kS = 5, kH = 4, kHk = 2, kD = 128;

// Valid host buffers for a small BF16 problem, 16-byte aligned by std::vector's allocator (16 on x86-64).
struct Buffers {
  std::vector<uint16_t> q = std::vector<uint16_t>(kS * kH * kD, 0x3f80);
  std::vector<uint16_t> k = std::vector<uint16_t>(kS * kHk * kD, 0x3f80);
  std::vector<uint16_t> v = std::vector<uint16_t>(kS * kHk * kD, 0x3f80);
  std::vector<uint16_t> out = std::vector<uint16_t>(kS * kH * kD, zyfa::test::kUntouchedBf16);
  std::vector<float> lse = std::vector<float>(kH * kS, -1.0f);

  zyfa_attn_desc desc() {
    zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;
    d.batch = 1;
    d.seqlen = kS;
    d.nheads = kH;
    d.nheads_k = kHk;
    d.q = q.data();
    d.k = k.data();
    d.v = v.data();
    d.out = out.data();
    d.lse = lse.data();
    return d;
  }
  bool untouched() const {
    return zyfa::test::all_equal(out, zyfa::test::kUntouchedBf16) && zyfa::test::all_equal(lse, -1.0f);
  }
};

struct InvalidCase {
  const char *name;
  zyfa_status status;
  const char *message_part;  // the field (and value) the message must name
  std::function<void(zyfa_attn_desc &, Buffers &)> spoil;
  bool null_pointer = false;  // the case is a NULL data pointer, which zyfa_attn_prepare accepts
};

const float kDeviceDescale = 1.0f;

// A struct_size newer than this library's, and the message part that names it.
const size_t kNewerStructSize = sizeof(zyfa_attn_desc) + 8;
const std::string kNewerStructSizeMessage = "struct_size = " + std::to_string(kNewerStructSize);

std::vector<InvalidCase> invalid_cases() {
  auto fp8 = [](zyfa_attn_desc &d) {
    d.dtype = ZYFA_DTYPE_FP8_E4M3;
    d.q_descale.kind = d.k_descale.kind = d.v_descale.kind = ZYFA_DESCALE_HOST;
    d.q_descale.value = d.k_descale.value = d.v_descale.value = 1.0f;
  };
  return {
      {"struct_size_older", ZYFA_STATUS_BAD_STRUCT_SIZE, "struct_size = 8", [](auto &d, auto &) { d.struct_size = 8; }},
      {"struct_size_newer", ZYFA_STATUS_BAD_STRUCT_SIZE, kNewerStructSizeMessage.c_str(),
       [](auto &d, auto &) { d.struct_size = kNewerStructSize; }},
      {"dtype", ZYFA_STATUS_BAD_DTYPE, "dtype = 7", [](auto &d, auto &) { d.dtype = zyfa_dtype(7); }},
      {"layout", ZYFA_STATUS_BAD_LAYOUT, "layout = 9", [](auto &d, auto &) { d.layout = zyfa_layout(9); }},
      // The sentinels that keep the enums int-sized are no values.
      {"dtype_max_enum", ZYFA_STATUS_BAD_DTYPE, "dtype = 2147483647",
       [](auto &d, auto &) { d.dtype = ZYFA_DTYPE_MAX_ENUM; }},
      {"layout_max_enum", ZYFA_STATUS_BAD_LAYOUT, "layout = 2147483647",
       [](auto &d, auto &) { d.layout = ZYFA_LAYOUT_MAX_ENUM; }},
      {"head_dim_64", ZYFA_STATUS_UNSUPPORTED_HEAD_DIM, "(64, 128)", [](auto &d, auto &) { d.d_qk = 64; }},
      {"head_dim_192_192", ZYFA_STATUS_UNSUPPORTED_HEAD_DIM, "(192, 192)",
       [](auto &d, auto &) { d.d_qk = d.d_v = 192; }},
      {"batch_zero", ZYFA_STATUS_BAD_SHAPE, "batch = 0", [](auto &d, auto &) { d.batch = 0; }},
      {"seqlen_negative", ZYFA_STATUS_BAD_SHAPE, "seqlen = -3", [](auto &d, auto &) { d.seqlen = -3; }},
      {"nheads_zero", ZYFA_STATUS_BAD_SHAPE, "nheads = 0", [](auto &d, auto &) { d.nheads = 0; }},
      {"nheads_k_zero", ZYFA_STATUS_BAD_SHAPE, "nheads_k = 0", [](auto &d, auto &) { d.nheads_k = 0; }},
      {"head_ratio", ZYFA_STATUS_BAD_HEAD_RATIO, "nheads = 4 is not a multiple of desc->nheads_k = 3",
       [](auto &d, auto &) { d.nheads_k = 3; }},
      {"stride_negative", ZYFA_STATUS_BAD_STRIDE, "q_strides.seq = -512",
       [](auto &d, auto &) {
         d.layout = ZYFA_LAYOUT_STRIDED;
         d.q_strides = {kS * kH * kD, -kH * kD, kD};
         d.k_strides = d.v_strides = {kS * kHk * kD, kHk * kD, kD};
         d.out_strides = {kS * kH * kD, kH * kD, kD};
       }},
      {"stride_not_16_bytes", ZYFA_STATUS_BAD_STRIDE, "k_strides.head = 129",
       [](auto &d, auto &) {
         d.layout = ZYFA_LAYOUT_STRIDED;
         d.q_strides = d.out_strides = {kS * kH * kD, kH * kD, kD};
         d.k_strides = {kS * kHk * kD, kHk * kD, 129};
         d.v_strides = {kS * kHk * kD, kHk * kD, kD};
       }},
      {"output_overlaps_itself", ZYFA_STATUS_BAD_STRIDE, "out_strides = {2560, 128, 128}",
       [](auto &d, auto &) {
         d.layout = ZYFA_LAYOUT_STRIDED;
         d.q_strides = {kS * kH * kD, kH * kD, kD};
         d.k_strides = d.v_strides = {kS * kHk * kD, kHk * kD, kD};
         d.out_strides = {kS * kH * kD, kD, kD};  // seq and head rows collide
       }},
      {"misaligned", ZYFA_STATUS_MISALIGNED, "desc->v",
       [](auto &d, auto &b) { d.v = reinterpret_cast<const char *>(b.v.data()) + 2; }},
      {"null_q", ZYFA_STATUS_NULL_TENSOR, "desc->q = NULL", [](auto &d, auto &) { d.q = nullptr; }, true},
      {"null_out", ZYFA_STATUS_NULL_TENSOR, "desc->out = NULL", [](auto &d, auto &) { d.out = nullptr; }, true},
      {"out_aliases_q", ZYFA_STATUS_ALIASED_OUTPUT, "desc->out overlaps desc->q",
       [](auto &d, auto &b) { d.q = b.out.data(); }},
      {"lse_aliases_out", ZYFA_STATUS_ALIASED_OUTPUT, "desc->out overlaps desc->lse",
       [](auto &d, auto &b) { d.lse = reinterpret_cast<float *>(b.out.data()); }},
      {"fp8_missing_descale", ZYFA_STATUS_BAD_DESCALE, "k_descale.kind = ZYFA_DESCALE_NONE",
       [fp8](auto &d, auto &) {
         fp8(d);
         d.k_descale.kind = ZYFA_DESCALE_NONE;
       }},
      {"fp8_negative_descale", ZYFA_STATUS_BAD_DESCALE, "q_descale.value = -2",
       [fp8](auto &d, auto &) {
         fp8(d);
         d.q_descale.value = -2.0f;
       }},
      {"fp8_unknown_descale_kind", ZYFA_STATUS_BAD_DESCALE, "v_descale.kind = 5",
       [fp8](auto &d, auto &) {
         fp8(d);
         d.v_descale.kind = zyfa_descale_kind(5);
       }},
      {"fp8_device_descale_null", ZYFA_STATUS_BAD_DESCALE, "v_descale.ptr = NULL",
       [fp8](auto &d, auto &) {
         fp8(d);
         d.v_descale.kind = ZYFA_DESCALE_DEVICE;
       }, true},
      {"descale_aliases_out", ZYFA_STATUS_ALIASED_OUTPUT, "desc->out overlaps desc->k_descale",
       [fp8](auto &d, auto &b) {
         fp8(d);
         d.k_descale.kind = ZYFA_DESCALE_DEVICE;
         d.k_descale.ptr = reinterpret_cast<const float *>(b.out.data());  // every CTA reads it while out is written
       }},
      {"bf16_with_descale", ZYFA_STATUS_FP8_FIELD_WITH_BF16, "q_descale.kind = 2",
       [](auto &d, auto &) {
         d.q_descale.kind = ZYFA_DESCALE_DEVICE;
         d.q_descale.ptr = &kDeviceDescale;
       }},
      {"p_rounding_unknown", ZYFA_STATUS_BAD_ARGUMENT, "p_rounding = 4",
       [fp8](auto &d, auto &) {
         fp8(d);
         d.p_rounding = zyfa_p_rounding(4);
       }},
      {"p_rounding_negative_bf16", ZYFA_STATUS_BAD_ARGUMENT, "p_rounding = -1",
       [](auto &d, auto &) { d.p_rounding = zyfa_p_rounding(-1); }},
      {"bf16_with_p_rounding_exact", ZYFA_STATUS_FP8_FIELD_WITH_BF16, "p_rounding = ZYFA_P_ROUNDING_EXACT (2)",
       [](auto &d, auto &) { d.p_rounding = ZYFA_P_ROUNDING_EXACT; }},
      {"bf16_with_p_rounding_split", ZYFA_STATUS_FP8_FIELD_WITH_BF16, "p_rounding = ZYFA_P_ROUNDING_SPLIT (3)",
       [](auto &d, auto &) { d.p_rounding = ZYFA_P_ROUNDING_SPLIT; }},
      {"bf16_with_p_rounding_lean", ZYFA_STATUS_FP8_FIELD_WITH_BF16, "p_rounding = ZYFA_P_ROUNDING_LEAN (1)",
       [](auto &d, auto &) { d.p_rounding = ZYFA_P_ROUNDING_LEAN; }},
      {"not_causal", ZYFA_STATUS_NOT_CAUSAL, "causal = 0", [](auto &d, auto &) { d.causal = 0; }},
      {"size_overflow", ZYFA_STATUS_SIZE_OVERFLOW, "1073741824 * 1073741824 * 4 * 128",
       [](auto &d, auto &) {
         d.seqlen = int64_t(1) << 30;
         d.batch = int64_t(1) << 30;
       }},
      {"softmax_scale_nan", ZYFA_STATUS_BAD_SOFTMAX_SCALE, "softmax_scale = nan",
       [](auto &d, auto &) { d.softmax_scale = std::nanf(""); }},
      {"softmax_scale_negative", ZYFA_STATUS_BAD_SOFTMAX_SCALE, "softmax_scale = -1",
       [](auto &d, auto &) { d.softmax_scale = -1.0f; }},
      {"softmax_scale_overflows_times_log2e", ZYFA_STATUS_BAD_SOFTMAX_SCALE, "softmax_scale = 3e+38",
       [](auto &d, auto &) { d.softmax_scale = 3e38f; }},
      {"fp8_descales_overflow_the_score_scale", ZYFA_STATUS_BAD_DESCALE,
       "q_descale.value * desc->k_descale.value = 1e+20 * 1e+20",
       [fp8](auto &d, auto &) {
         fp8(d);
         d.q_descale.value = d.k_descale.value = 1e20f;
       }},
      // 1e17 * 1e17 * 0.127 is finite, but the score of two rows of 448s at d_qk = 128 is not.
      {"fp8_descales_overflow_the_largest_score", ZYFA_STATUS_BAD_DESCALE,
       "q_descale.value * desc->k_descale.value = 1e+17 * 1e+17: the score of two 448-valued rows (d_qk = 128)",
       [fp8](auto &d, auto &) {
         fp8(d);
         d.q_descale.value = d.k_descale.value = 1e17f;
       }},
      // 448 * 7.6e35 is a finite float (3.4e38) but above BF16's largest value (3.39e38).
      {"fp8_v_descale_overflows_the_bf16_output", ZYFA_STATUS_BAD_DESCALE, "v_descale.value = 7.6e+35",
       [fp8](auto &d, auto &) {
         fp8(d);
         d.v_descale.value = 7.6e35f;
       }},
      // The offset of q's last element is exactly INT64_MAX: one past it overflows.
      {"stride_end_overflows", ZYFA_STATUS_SIZE_OVERFLOW, "desc->q: its size in bytes overflows",
       [fp8](auto &d, auto &) {
         fp8(d);
         d.layout = ZYFA_LAYOUT_STRIDED;
         d.batch = 2;
         const int64_t last_of_batch0 = (kD - 1) + (kS - 1) * kH * kD + (kH - 1) * kD;
         d.q_strides = {INT64_MAX - last_of_batch0, kH * kD, kD};  // a multiple of 16 elements
         d.k_strides = d.v_strides = {kS * kHk * kD, kHk * kD, kD};
         d.out_strides = {kS * kH * kD, kH * kD, kD};
       }},
  };
}

class InvalidDescriptor : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidDescriptor, HostBackendRefusesAndWritesNothing) {
  Buffers b;
  zyfa_attn_desc d = b.desc();
  GetParam().spoil(d, b);
  EXPECT_EQ(zyfa_attn_fwd_host(&d), GetParam().status) << zyfa_last_error();
  EXPECT_NE(std::string(zyfa_last_error()).find(GetParam().message_part), std::string::npos)
      << "message: " << zyfa_last_error();
  EXPECT_TRUE(b.untouched());
}

TEST_P(InvalidDescriptor, GpuEntryPointsRefuseBeforeTouchingADevice) {
  Buffers b;
  zyfa_attn_desc d = b.desc();
  GetParam().spoil(d, b);
  EXPECT_EQ(zyfa_attn_fwd(&d, nullptr), GetParam().status) << zyfa_last_error();
  EXPECT_NE(std::string(zyfa_last_error()).find(GetParam().message_part), std::string::npos)
      << "message: " << zyfa_last_error();
  EXPECT_TRUE(b.untouched());
}

// zyfa_attn_prepare validates the same descriptor with its data pointers optional (NULL is accepted: a plan
// needs no data), so every case but a NULL pointer gets the same answer there, before any device is looked for.
TEST_P(InvalidDescriptor, PrepareRefusesTheSameWay) {
  Buffers b;
  zyfa_attn_desc d = b.desc();
  GetParam().spoil(d, b);
  if (GetParam().null_pointer) {
    EXPECT_TRUE(zyfa::test::prepare_passes_validation(d));
    return;
  }
  EXPECT_EQ(zyfa_attn_prepare(&d, nullptr), GetParam().status) << zyfa_last_error();
  EXPECT_NE(std::string(zyfa_last_error()).find(GetParam().message_part), std::string::npos)
      << "message: " << zyfa_last_error();
}

INSTANTIATE_TEST_SUITE_P(EveryField, InvalidDescriptor, ::testing::ValuesIn(invalid_cases()),
                         [](const auto &param_info) { return std::string(param_info.param.name); });

// The first layout of zyfa_attn_desc ends before p_rounding: such a caller is accepted, and whatever lies
// past its struct_size is not read (here a value that would be refused).
TEST(Validation, FirstDescriptorLayoutIsAccepted) {
  Buffers b;
  zyfa_attn_desc d = b.desc();
  d.p_rounding = zyfa_p_rounding(77);
  ASSERT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_BAD_ARGUMENT);
  d.struct_size = offsetof(zyfa_attn_desc, p_rounding);
  EXPECT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_FALSE(b.untouched());
  // Sizes between the known layouts are not layouts.
  d.struct_size = offsetof(zyfa_attn_desc, p_rounding) + 4;
  EXPECT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_BAD_STRUCT_SIZE);
  d.struct_size = offsetof(zyfa_attn_desc, v_descale);
  EXPECT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_BAD_STRUCT_SIZE);
}

// The overlap check asks each stride to clear the span below it, (extent - 1) strides past the smaller ones,
// not stride x extent: head rows 136 elements apart leave seq rows 128 + 3 x 136 = 536 apart exactly room.
// Such an output is accepted, and each row holds what the contiguous layout's does.
TEST(Validation, TightlyInterleavedOutputIsAccepted) {
  constexpr int64_t kHeadStride = 136, kSeqStride = kD + (kH - 1) * kHeadStride;
  Buffers b;
  zyfa_attn_desc d = b.desc();
  ASSERT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  std::vector<uint16_t> tight(size_t(kS * kSeqStride), zyfa::test::kUntouchedBf16);
  d.layout = ZYFA_LAYOUT_STRIDED;
  d.q_strides = {kS * kH * kD, kH * kD, kD};
  d.k_strides = d.v_strides = {kS * kHk * kD, kHk * kD, kD};
  d.out_strides = {kS * kSeqStride, kSeqStride, kHeadStride};
  d.out = tight.data();
  ASSERT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  for (int64_t s = 0; s < kS; ++s)
    for (int64_t h = 0; h < kH; ++h)
      ASSERT_EQ(0, std::memcmp(&tight[size_t(s * kSeqStride + h * kHeadStride)], &b.out[size_t((s * kH + h) * kD)],
                               kD * sizeof(uint16_t)))
          << "row s=" << s << " h=" << h;
  // One element less between seq rows, and the last head's row of s overlaps the first of s + 1.
  d.out_strides.seq = kSeqStride - 8;
  EXPECT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_BAD_STRIDE);
  EXPECT_NE(std::string(zyfa_last_error()).find("rows of the output overlap"), std::string::npos) << zyfa_last_error();
}

TEST(Validation, NullDescriptor) {
  const auto names_desc = [] { return std::string(zyfa_last_error()).find("desc = NULL") != std::string::npos; };
  EXPECT_EQ(zyfa_attn_fwd_host(nullptr), ZYFA_STATUS_NULL_ARGUMENT);
  EXPECT_TRUE(names_desc()) << zyfa_last_error();
  EXPECT_EQ(zyfa_attn_fwd(nullptr, nullptr), ZYFA_STATUS_NULL_ARGUMENT);
  EXPECT_TRUE(names_desc()) << zyfa_last_error();
  EXPECT_EQ(zyfa_attn_prepare(nullptr, nullptr), ZYFA_STATUS_NULL_ARGUMENT);
  EXPECT_TRUE(names_desc()) << zyfa_last_error();
}

TEST(Validation, PrepareAcceptsNullPointers) {
  zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;
  d.batch = d.nheads = d.nheads_k = 1;
  d.seqlen = 100;
  EXPECT_TRUE(zyfa::test::prepare_passes_validation(d));  // shape-only validation
}

// Split P runs on the TMA/wgmma kernels only: where the strides leave a problem to a kernel that rounds P once
// (here k and v of batch stride 0), both GPU entry points refuse it as an argument error before they look for a
// device, and write nothing; the CPU backend, which splits P in any strides, runs it.
TEST(Validation, SplitPWhereOnlyKernelsThatRoundOnceRunIsRefusedBeforeADevice) {
  Buffers b;
  zyfa_attn_desc d = b.desc();
  d.dtype = ZYFA_DTYPE_FP8_E4M3;
  d.q_descale.kind = d.k_descale.kind = d.v_descale.kind = ZYFA_DESCALE_HOST;
  d.q_descale.value = d.k_descale.value = d.v_descale.value = 1.0f;
  d.p_rounding = ZYFA_P_ROUNDING_SPLIT;
  d.layout = ZYFA_LAYOUT_STRIDED;
  d.batch = 2;
  d.q_strides = {0, kH * kD, kD};  // both batches read batch 0's rows (inputs may repeat; outputs may not)
  d.k_strides = d.v_strides = {0, kHk * kD, kD};
  d.out_strides = {kS * kH * kD, kH * kD, kD};
  std::vector<uint16_t> out(size_t(2 * kS * kH * kD), zyfa::test::kUntouchedBf16);
  std::vector<float> lse(size_t(2 * kH * kS), -1.0f);
  d.out = out.data();
  d.lse = lse.data();
  const std::string expected = "desc->p_rounding = ZYFA_P_ROUNDING_SPLIT (3): split P needs the TMA/wgmma kernels";
  EXPECT_EQ(zyfa_attn_fwd(&d, nullptr), ZYFA_STATUS_BAD_ARGUMENT) << zyfa_last_error();
  EXPECT_NE(std::string(zyfa_last_error()).find(expected), std::string::npos) << zyfa_last_error();
  EXPECT_TRUE(zyfa::test::all_equal(out, zyfa::test::kUntouchedBf16) && zyfa::test::all_equal(lse, -1.0f));
  EXPECT_EQ(zyfa_attn_prepare(&d, nullptr), ZYFA_STATUS_BAD_ARGUMENT) << zyfa_last_error();
  EXPECT_NE(std::string(zyfa_last_error()).find(expected), std::string::npos) << zyfa_last_error();
  EXPECT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
}

TEST(Validation, PrepareAcceptsNullDeviceDescales) {
  zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;
  d.batch = d.nheads = d.nheads_k = 1;
  d.seqlen = 100;
  d.dtype = ZYFA_DTYPE_FP8_E4M3;
  d.q_descale.kind = d.k_descale.kind = d.v_descale.kind = ZYFA_DESCALE_DEVICE;
  EXPECT_TRUE(zyfa::test::prepare_passes_validation(d));
}

TEST(Validation, SuccessClearsTheMessage) {
  Buffers b;
  zyfa_attn_desc d = b.desc();
  d.causal = 0;
  ASSERT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_NOT_CAUSAL);
  ASSERT_STRNE(zyfa_last_error(), "");
  d.causal = 1;
  ASSERT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_STREQ(zyfa_last_error(), "");
  EXPECT_FALSE(b.untouched());
}

// Each status's string starts with its own enumerator's name (two swapped case labels would pass a mere
// distinctness check), and every value of the enum has one.
TEST(Validation, StatusStringsNameTheirStatus) {
  const struct {
    zyfa_status status;
    const char *prefix;
  } expected[] = {
      {ZYFA_STATUS_SUCCESS, "ZYFA_STATUS_SUCCESS: "},
      {ZYFA_STATUS_NULL_ARGUMENT, "ZYFA_STATUS_NULL_ARGUMENT: "},
      {ZYFA_STATUS_BAD_STRUCT_SIZE, "ZYFA_STATUS_BAD_STRUCT_SIZE: "},
      {ZYFA_STATUS_BAD_DTYPE, "ZYFA_STATUS_BAD_DTYPE: "},
      {ZYFA_STATUS_BAD_LAYOUT, "ZYFA_STATUS_BAD_LAYOUT: "},
      {ZYFA_STATUS_UNSUPPORTED_HEAD_DIM, "ZYFA_STATUS_UNSUPPORTED_HEAD_DIM: "},
      {ZYFA_STATUS_BAD_SHAPE, "ZYFA_STATUS_BAD_SHAPE: "},
      {ZYFA_STATUS_BAD_HEAD_RATIO, "ZYFA_STATUS_BAD_HEAD_RATIO: "},
      {ZYFA_STATUS_BAD_STRIDE, "ZYFA_STATUS_BAD_STRIDE: "},
      {ZYFA_STATUS_MISALIGNED, "ZYFA_STATUS_MISALIGNED: "},
      {ZYFA_STATUS_NULL_TENSOR, "ZYFA_STATUS_NULL_TENSOR: "},
      {ZYFA_STATUS_ALIASED_OUTPUT, "ZYFA_STATUS_ALIASED_OUTPUT: "},
      {ZYFA_STATUS_BAD_DESCALE, "ZYFA_STATUS_BAD_DESCALE: "},
      {ZYFA_STATUS_FP8_FIELD_WITH_BF16, "ZYFA_STATUS_FP8_FIELD_WITH_BF16: "},
      {ZYFA_STATUS_NOT_CAUSAL, "ZYFA_STATUS_NOT_CAUSAL: "},
      {ZYFA_STATUS_SIZE_OVERFLOW, "ZYFA_STATUS_SIZE_OVERFLOW: "},
      {ZYFA_STATUS_BAD_SOFTMAX_SCALE, "ZYFA_STATUS_BAD_SOFTMAX_SCALE: "},
      {ZYFA_STATUS_NO_DEVICE, "ZYFA_STATUS_NO_DEVICE: "},
      {ZYFA_STATUS_UNSUPPORTED_DEVICE, "ZYFA_STATUS_UNSUPPORTED_DEVICE: "},
      {ZYFA_STATUS_CUDA_ERROR, "ZYFA_STATUS_CUDA_ERROR: "},
      {ZYFA_STATUS_OUT_OF_MEMORY, "ZYFA_STATUS_OUT_OF_MEMORY: "},
      {ZYFA_STATUS_NOT_PREPARED, "ZYFA_STATUS_NOT_PREPARED: "},
      {ZYFA_STATUS_BAD_ARGUMENT, "ZYFA_STATUS_BAD_ARGUMENT: "},
      {ZYFA_STATUS_INTERNAL, "ZYFA_STATUS_INTERNAL: "},
  };
  static_assert(sizeof(expected) / sizeof(expected[0]) == ZYFA_STATUS_INTERNAL + 1, "one row per status");
  for (const auto &e : expected) {
    const std::string text = zyfa_status_string(e.status);
    EXPECT_EQ(text.rfind(e.prefix, 0), 0u) << text;
    EXPECT_GT(text.size(), std::strlen(e.prefix)) << "a description follows the name";
  }
  EXPECT_NE(std::string(zyfa_status_string(zyfa_status(999))).find("UNKNOWN"), std::string::npos);
  EXPECT_NE(std::string(zyfa_status_string(ZYFA_STATUS_MAX_ENUM)).find("UNKNOWN"), std::string::npos);
}

TEST(Validation, VersionMatchesHeader) { EXPECT_EQ(zyfa_version(), ZYFA_VERSION); }

}  // namespace
