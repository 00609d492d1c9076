// Host buffers for one attention call in any of the library's layouts, filled from float activations,
// that give a zyfa::Problem (for src/ref directly) or a zyfa_attn_desc (for the C ABI), and check after
// the call that every output element was written and nothing else was.
#ifndef ZYFA_TEST_SUPPORT_HOST_ATTENTION_HPP_
#define ZYFA_TEST_SUPPORT_HOST_ATTENTION_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "host/problem.hpp"
#include "support/activations.hpp"
#include "zyfa/zyfa.h"

namespace zyfa::test {

enum class Layout {
  kBSHD,
  kBHSD,
  kStrided,  // (batch, seq, head) order with kStridedGap unused elements after every head, row and batch
};
constexpr int64_t kStridedGap = 16;  // elements: 16-byte granular for both element sizes
const char *layout_name(Layout layout);

// The bf16 pattern written over outputs before a call: a NaN with a payload that no arithmetic produces.
constexpr uint16_t kPoisonBf16 = 0xffff;
constexpr uint32_t kPoisonF32 = 0xffffffffu;

// One tensor of logical shape (batch, seqlen, heads, dim) with 1-byte (FP8) or 2-byte (BF16) elements.
class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(int64_t batch, int64_t seqlen, int64_t heads, int64_t dim, int element_bytes, Layout layout);

  int64_t index(int64_t b, int64_t s, int64_t h, int64_t d) const {
    return b * batch_stride_ + s * seq_stride_ + h * head_stride_ + d;
  }
  uint16_t bf16(int64_t i) const;
  void set_bf16(int64_t i, uint16_t bits);
  uint8_t fp8(int64_t i) const { return bytes_[size_t(i)]; }
  void set_fp8(int64_t i, uint8_t code) { bytes_[size_t(i)] = code; }

  TensorRef ref() const;
  zyfa_strides strides() const { return {batch_stride_, seq_stride_, head_stride_}; }
  const void *data() const { return bytes_.data(); }
  void *data() { return bytes_.data(); }
  size_t size_bytes() const { return bytes_.size(); }
  int64_t storage_elements() const { return int64_t(bytes_.size()) / element_bytes_; }
  // One flag per storage element: 1 where a logical element lives, 0 in a gap.
  std::vector<char> logical_mask() const;
  int64_t batch() const { return batch_; }
  int64_t seqlen() const { return seqlen_; }
  int64_t heads() const { return heads_; }
  int64_t dim() const { return dim_; }

 private:
  int64_t batch_ = 0, seqlen_ = 0, heads_ = 0, dim_ = 0;
  int64_t batch_stride_ = 0, seq_stride_ = 0, head_stride_ = 0;
  int element_bytes_ = 1;
  // std::allocator returns 16-byte aligned blocks on x86-64 and aarch64 Linux, what validation asks for.
  std::vector<uint8_t> bytes_;
};

struct AttentionShape {
  zyfa_dtype dtype = ZYFA_DTYPE_BF16;
  Layout layout = Layout::kBSHD;
  int64_t batch = 1, seqlen = 1, nheads = 1, nheads_k = 1, d_qk = 128, d_v = 128;
  float softmax_scale = 0.0f;     // 0: 1/sqrt(d_qk), as validation resolves it
  bool per_head_descale = false;  // FP8: one descale per (batch, kv head), passed as an array
  bool with_lse = true;
  zyfa_p_rounding p_rounding = ZYFA_P_ROUNDING_DEFAULT;  // FP8 only

  bool fp8() const { return dtype == ZYFA_DTYPE_FP8_E4M3; }
  QkvShape qkv() const { return {batch, seqlen, nheads, nheads_k, d_qk, d_v}; }
  // P codes from one FFMA: p_rounding as validation resolves it.
  bool lean_p() const;
  // e.g. "fp8_d192_b1_s129_h16_hk2_bshd" (+ "_headdescale", "_leanp", "_exactp", "_splitp"), usable as a gtest name.
  std::string name() const;
};

// The shape of a case list entry, d_v = 128 (the library's only value).
AttentionShape attention_shape(zyfa_dtype dtype, int64_t d_qk, int64_t batch, int64_t seqlen, int64_t nheads,
                               int64_t nheads_k, Layout layout = Layout::kBSHD, bool per_head_descale = false,
                               bool with_lse = true);

// What check_outputs found; all zero after a correct call.
struct OutputCheck {
  int64_t unwritten = 0;      // logical output elements still holding kPoisonBf16
  int64_t gap_written = 0;    // elements between logical ones (strided layout) that were changed
  int64_t lse_unwritten = 0;  // LSE entries still holding kPoisonF32
  int64_t nonfinite = 0;      // written outputs or LSE entries that are NaN or infinite
  bool ok() const { return unwritten == 0 && gap_written == 0 && lse_unwritten == 0 && nonfinite == 0; }
  std::string describe() const;
};

class HostAttention {
 public:
  explicit HostAttention(const AttentionShape &shape);

  // Quantizes BSHD activations of this shape into q, k and v: BF16 with round to nearest even, FP8 with
  // the descale rule of zyfa_quantize_fp8 over each tensor (or each (batch, kv head) slice).
  void set_inputs(const Activations &a);
  // Gives every batch batch 0's stored k and v (and their per-head descales), so that a call reading k and v with
  // batch stride 0 computes the attention of these buffers, which the references can check.
  void share_batch0_kv();
  // Fills outputs (gaps included) with the poison patterns.
  void poison_outputs();
  OutputCheck check_outputs() const;

  zyfa::Problem problem() const;
  // Host pointers into this object; a per-head descale is passed as ZYFA_DESCALE_DEVICE over host memory,
  // which is what zyfa_attn_fwd_host reads.
  zyfa_attn_desc desc();

  // Outputs in the reference's order: out (batch, seqlen, nheads, d_v), lse (batch, nheads, seqlen).
  std::vector<double> out_values() const;
  std::vector<double> lse_values() const;

  const AttentionShape &shape() const { return shape_; }
  HostTensor q, k, v, out;
  std::vector<float> lse;
  // One value per tensor, or batch * nheads_k values (batch-major) with per_head_descale.
  std::vector<float> q_descale, k_descale, v_descale;

 private:
  void quantize(const std::vector<float> &x, int64_t heads, HostTensor &t, std::vector<float> &descale);
  AttentionShape shape_;
  std::vector<char> out_mask_;
};

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_HOST_ATTENTION_HPP_
