// zyfa_attn_workspace_size and the workspace fields of zyfa_attn_desc: the bytes each kind of problem gets,
// and every misuse refused with its own status and a message naming the field, before any device is
// touched and with nothing written. Host only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "zyfa/zyfa.h"

namespace {

constexpr uint8_t kInputCode = 0x38;       // e4m3 1.0 in q, k and v
constexpr uint8_t kWorkspacePoison = 0xa5;  // what a V^T pre-pass would overwrite
// Long enough for the FP8 kernels to use a workspace (src/host/fp8_asm_attention.cpp: group * seqlen from 4K;
// here group 2).
constexpr int64_t kLong = 8192, kH = 4, kHk = 2, kD = 128;
constexpr int64_t kKeyBlock = 128;

// Valid host buffers of an FP8 problem that can use a workspace.
struct Fp8Buffers {
  std::vector<uint8_t> q = std::vector<uint8_t>(kLong * kH * kD, kInputCode);
  std::vector<uint8_t> k = std::vector<uint8_t>(kLong * kHk * kD, kInputCode);
  std::vector<uint8_t> v = std::vector<uint8_t>(kLong * kHk * kD, kInputCode);
  std::vector<uint16_t> out = std::vector<uint16_t>(kLong * kH * kD, zyfa::test::kUntouchedBf16);
  std::vector<uint8_t> workspace = std::vector<uint8_t>(size_t(kHk * kD * kLong) + 512, kWorkspacePoison);

  zyfa_attn_desc desc() {
    zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;
    d.dtype = ZYFA_DTYPE_FP8_E4M3;
    d.batch = 1, d.seqlen = kLong, d.nheads = kH, d.nheads_k = kHk;
    d.q = q.data(), d.k = k.data(), d.v = v.data(), d.out = out.data();
    for (zyfa_descale *s : {&d.q_descale, &d.k_descale, &d.v_descale}) *s = {ZYFA_DESCALE_HOST, 1.0f, nullptr, 0, 0};
    return d;
  }
  void *aligned_workspace() {
    const uintptr_t p = reinterpret_cast<uintptr_t>(workspace.data());
    return reinterpret_cast<void *>((p + 255) / 256 * 256);
  }
  // Nothing written anywhere a refused call could write: out, the workspace (V^T) and the inputs (a
  // workspace placed over v would land there).
  bool untouched() const {
    using zyfa::test::all_equal;
    return all_equal(out, zyfa::test::kUntouchedBf16) && all_equal(workspace, kWorkspacePoison) &&
           all_equal(q, kInputCode) && all_equal(k, kInputCode) && all_equal(v, kInputCode);
  }
};

size_t workspace_size(const zyfa_attn_desc &d) {
  size_t bytes = 12345;
  EXPECT_EQ(zyfa_attn_workspace_size(&d, &bytes), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  return bytes;
}

// V^T per (batch, kv head): 128 rows of the keys rounded up to whole 128-key blocks (src/kernels/fp8_vt_layout.h).
size_t vt_bytes(int64_t batch, int64_t nheads_k, int64_t seqlen) {
  return size_t(batch * nheads_k * kD * ((seqlen + kKeyBlock - 1) / kKeyBlock * kKeyBlock));
}

TEST(Workspace, SizeFollowsDtypeRoundingAndShape) {
  Fp8Buffers b;
  zyfa_attn_desc d = b.desc();
  EXPECT_EQ(workspace_size(d), vt_bytes(1, kHk, kLong));
  d.workspace_bytes = 1;  // the query does not read the workspace fields
  EXPECT_EQ(workspace_size(d), vt_bytes(1, kHk, kLong));
  d.workspace_bytes = 0;
  d.q = d.k = d.v = nullptr;  // shapes other than the buffers'
  d.out = nullptr;
  d.seqlen = kLong + 1;  // a partial last block is padded to a whole one
  EXPECT_EQ(workspace_size(d), vt_bytes(1, kHk, kLong + 1));
  d.d_qk = 192;  // exact P, the default there
  EXPECT_EQ(workspace_size(d), vt_bytes(1, kHk, kLong + 1));
  d.p_rounding = ZYFA_P_ROUNDING_SPLIT;  // no workspace variant
  EXPECT_EQ(workspace_size(d), 0u);
  d.d_qk = 128;
  d.p_rounding = ZYFA_P_ROUNDING_DEFAULT;
  // Where the pre-pass would cost more than it saves: group * seqlen below 4K, at either head dim.
  for (int64_t d_qk : {128, 192}) {
    d.d_qk = d_qk;
    d.seqlen = kLong / 4 - 1;  // group * seqlen = 4094
    EXPECT_EQ(workspace_size(d), 0u) << "d_qk " << d_qk;
    d.seqlen = kLong / 4;  // 4096
    EXPECT_EQ(workspace_size(d), vt_bytes(1, kHk, kLong / 4)) << "d_qk " << d_qk;
  }
  d.d_qk = 128;
  d.seqlen = kLong / 4 - 1;
  d.nheads = 4 * kH;  // four times the queries per V row
  EXPECT_EQ(workspace_size(d), vt_bytes(1, kHk, kLong / 4 - 1));
  zyfa_attn_desc bf16 = ZYFA_ATTN_DESC_INIT;
  bf16.batch = bf16.nheads = bf16.nheads_k = 1;
  bf16.seqlen = 4 * kLong;
  EXPECT_EQ(workspace_size(bf16), 0u);
}

TEST(Workspace, SizeQueryRefusesWhatValidationRefuses) {
  Fp8Buffers b;
  zyfa_attn_desc d = b.desc();
  EXPECT_EQ(zyfa_attn_workspace_size(&d, nullptr), ZYFA_STATUS_NULL_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("bytes = NULL"), std::string::npos) << zyfa_last_error();
  size_t bytes = 0;
  EXPECT_EQ(zyfa_attn_workspace_size(nullptr, &bytes), ZYFA_STATUS_NULL_ARGUMENT);
  d.causal = 0;
  EXPECT_EQ(zyfa_attn_workspace_size(&d, &bytes), ZYFA_STATUS_NOT_CAUSAL);
}

struct Misuse {
  const char *name;
  zyfa_status status;
  const char *message_part;
  void (*spoil)(zyfa_attn_desc &, Fp8Buffers &, size_t needed);
};

class WorkspaceMisuse : public ::testing::TestWithParam<Misuse> {};

TEST_P(WorkspaceMisuse, RefusedBeforeAnyDeviceAndNothingWritten) {
  Fp8Buffers b;
  zyfa_attn_desc d = b.desc();
  const size_t needed = workspace_size(d);
  ASSERT_GT(needed, 0u);
  d.workspace = b.aligned_workspace();
  d.workspace_bytes = needed;
  GetParam().spoil(d, b, needed);
  for (const bool host : {false, true}) {
    EXPECT_EQ(host ? zyfa_attn_fwd_host(&d) : zyfa_attn_fwd(&d, nullptr), GetParam().status) << zyfa_last_error();
    EXPECT_NE(std::string(zyfa_last_error()).find(GetParam().message_part), std::string::npos)
        << "message: " << zyfa_last_error();
    EXPECT_TRUE(b.untouched());
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryField, WorkspaceMisuse,
    ::testing::Values(
        Misuse{"too_small", ZYFA_STATUS_BAD_ARGUMENT, "workspace_bytes = ",
               [](zyfa_attn_desc &d, Fp8Buffers &, size_t needed) { d.workspace_bytes = needed - 1; }},
        Misuse{"null_with_bytes", ZYFA_STATUS_NULL_TENSOR, "workspace = NULL",
               [](zyfa_attn_desc &d, Fp8Buffers &, size_t) { d.workspace = nullptr; }},
        Misuse{"misaligned", ZYFA_STATUS_MISALIGNED, "workspace = ",
               [](zyfa_attn_desc &d, Fp8Buffers &, size_t) { d.workspace = static_cast<char *>(d.workspace) + 16; }},
        Misuse{"overlaps_v", ZYFA_STATUS_ALIASED_OUTPUT, "workspace",
               [](zyfa_attn_desc &d, Fp8Buffers &b, size_t) {
                 d.workspace = b.v.data() + (256 - reinterpret_cast<uintptr_t>(b.v.data()) % 256) % 256;
               }}),
    [](const auto &param_info) { return std::string(param_info.param.name); });

// zyfa_attn_prepare picks the kernel from workspace_bytes alone: a NULL workspace is accepted there.
TEST(Workspace, PrepareAcceptsANullWorkspace) {
  Fp8Buffers b;
  zyfa_attn_desc d = b.desc();
  d.workspace_bytes = workspace_size(d);
  d.q = d.k = d.v = nullptr;
  d.out = nullptr;
  EXPECT_TRUE(zyfa::test::prepare_passes_validation(d));
}

// A caller of the second layout (up to p_rounding) has no workspace fields: bytes past its struct_size,
// here a workspace that would be refused, are not read.
TEST(Workspace, SecondDescriptorLayoutIsAccepted) {
  Fp8Buffers b;
  zyfa_attn_desc d = b.desc();
  d.q = d.k = d.v = nullptr;
  d.out = nullptr;
  d.workspace_bytes = 1;
  ASSERT_EQ(zyfa_attn_prepare(&d, nullptr), ZYFA_STATUS_BAD_ARGUMENT);
  d.struct_size = offsetof(zyfa_attn_desc, workspace);
  EXPECT_TRUE(zyfa::test::prepare_passes_validation(d));
}

}  // namespace
