// zyfa.hpp: a thin header-only C++17 layer over the C ABI of zyfa.h. It adds descriptor builders, an
// exception type that carries the status and the library's message, and nothing else: every call is
// one C call, and the C descriptor stays reachable (desc()) for code that wants it.
//
//   zyfa::Attention attn;
//   attn.shape(batch, seqlen, nheads, nheads_k).tensors(q, k, v, out).lse(lse);
//   attn.prepare(stream);   // once per shape, before CUDA-graph capture
//   attn.forward(stream);   // throws zyfa::Error on bad input
#ifndef ZYFA_ZYFA_HPP_
#define ZYFA_ZYFA_HPP_

#include <cstdint>
#include <stdexcept>
#include <string>

#include "zyfa/zyfa.h"

namespace zyfa {

// A failed zyfa call: the status, and the library's message naming the field and value.
class Error : public std::runtime_error {
 public:
  Error(zyfa_status status, const std::string &message)
      : std::runtime_error(std::string(zyfa_status_string(status)) + ": " + message), status_(status) {}
  zyfa_status status() const noexcept { return status_; }

 private:
  zyfa_status status_;
};

// Throws zyfa::Error for any status but success, with this thread's last message.
inline void check(zyfa_status status) {
  if (status != ZYFA_STATUS_SUCCESS) throw Error(status, zyfa_last_error());
}

// The three forms a descale can take.
struct Descale {
  static zyfa_descale host(float value) { return {ZYFA_DESCALE_HOST, value, nullptr, 0, 0}; }
  // One float in device memory, or (with strides) one per (batch, kv head).
  static zyfa_descale device(const float *ptr, int64_t batch_stride = 0, int64_t head_stride = 0) {
    return {ZYFA_DESCALE_DEVICE, 0.0f, ptr, batch_stride, head_stride};
  }
};

// A builder over zyfa_attn_desc. Defaults as ZYFA_ATTN_DESC_INIT: BF16, BSHD, d = 128, causal.
class Attention {
 public:
  Attention() : d_(ZYFA_ATTN_DESC_INIT) {}

  Attention &shape(int64_t batch, int64_t seqlen, int64_t nheads, int64_t nheads_k) {
    d_.batch = batch;
    d_.seqlen = seqlen;
    d_.nheads = nheads;
    d_.nheads_k = nheads_k;
    return *this;
  }
  Attention &head_dims(int64_t d_qk, int64_t d_v) {
    d_.d_qk = d_qk;
    d_.d_v = d_v;
    return *this;
  }
  Attention &layout(zyfa_layout layout) {
    d_.layout = layout;
    return *this;
  }
  // General strides in elements (batch, seq, head) per tensor; selects ZYFA_LAYOUT_STRIDED.
  Attention &strides(zyfa_strides q, zyfa_strides k, zyfa_strides v, zyfa_strides out) {
    d_.layout = ZYFA_LAYOUT_STRIDED;
    d_.q_strides = q;
    d_.k_strides = k;
    d_.v_strides = v;
    d_.out_strides = out;
    return *this;
  }
  Attention &bf16() {
    d_.dtype = ZYFA_DTYPE_BF16;
    // Clears the FP8-only fields, which BF16 refuses.
    d_.q_descale = d_.k_descale = d_.v_descale = zyfa_descale{ZYFA_DESCALE_NONE, 0.0f, nullptr, 0, 0};
    d_.p_rounding = ZYFA_P_ROUNDING_DEFAULT;
    return *this;
  }
  Attention &fp8(zyfa_descale q, zyfa_descale k, zyfa_descale v) {
    d_.dtype = ZYFA_DTYPE_FP8_E4M3;
    d_.q_descale = q;
    d_.k_descale = k;
    d_.v_descale = v;
    return *this;
  }
  // FP8 only: how P is rounded to e4m3 (ZYFA_P_ROUNDING_EXACT for accuracy, ZYFA_P_ROUNDING_SPLIT for the
  // most accuracy at a second P V product, ZYFA_P_ROUNDING_LEAN for speed; each at either head dim).
  Attention &p_rounding(zyfa_p_rounding rounding) {
    d_.p_rounding = rounding;
    return *this;
  }
  Attention &tensors(const void *q, const void *k, const void *v, void *out) {
    d_.q = q;
    d_.k = k;
    d_.v = v;
    d_.out = out;
    return *this;
  }
  Attention &lse(float *lse) {
    d_.lse = lse;
    return *this;
  }
  Attention &softmax_scale(float scale) {
    d_.softmax_scale = scale;
    return *this;
  }
  // Device scratch that makes some calls faster (zyfa_attn_desc.workspace): workspace_size() bytes or more.
  Attention &workspace(void *ptr, size_t bytes) {
    d_.workspace = ptr;
    d_.workspace_bytes = bytes;
    return *this;
  }
  // What a forward() of this descriptor can use: 0 where it runs no faster with a workspace.
  size_t workspace_size() const {
    size_t bytes = 0;
    check(zyfa_attn_workspace_size(&d_, &bytes));
    return bytes;
  }

  const zyfa_attn_desc &desc() const { return d_; }

  // Throwing calls.
  void prepare(void *stream = nullptr) const { check(zyfa_attn_prepare(&d_, stream)); }
  void forward(void *stream = nullptr) const { check(zyfa_attn_fwd(&d_, stream)); }
  void forward_host() const { check(zyfa_attn_fwd_host(&d_)); }

  // Non-throwing calls, for code that keeps exceptions out of its hot path (this header itself needs them
  // enabled: the calls above throw). The message of a failure is zyfa_last_error().
  [[nodiscard]] zyfa_status try_prepare(void *stream = nullptr) const noexcept {
    return zyfa_attn_prepare(&d_, stream);
  }
  [[nodiscard]] zyfa_status try_forward(void *stream = nullptr) const noexcept { return zyfa_attn_fwd(&d_, stream); }
  [[nodiscard]] zyfa_status try_forward_host() const noexcept { return zyfa_attn_fwd_host(&d_); }
  // workspace_size() for a hot path that sizes its scratch per call: *bytes is left alone on a failure.
  [[nodiscard]] zyfa_status try_workspace_size(size_t *bytes) const noexcept {
    return zyfa_attn_workspace_size(&d_, bytes);
  }

 private:
  zyfa_attn_desc d_;
};

// A builder over zyfa_quantize_desc: BF16 rows to FP8 e4m3 with one power-of-two descale per tensor.
//
//   zyfa::Quantize(n_rows, 128).rotation(ZYFA_ROTATION_HADAMARD, seed).buffers(src, dst, descale).run(stream);
class Quantize {
 public:
  Quantize(int64_t n_rows, int64_t dim) : d_(ZYFA_QUANTIZE_DESC_INIT) {
    d_.n_rows = n_rows;
    d_.dim = dim;
  }
  Quantize &row_stride(int64_t elements) {
    d_.row_stride = elements;
    return *this;
  }
  Quantize &rotation(zyfa_rotation rotation, uint64_t seed) {
    d_.rotation = rotation;
    d_.rotation_seed = seed;
    return *this;
  }
  Quantize &buffers(const void *src, void *dst, float *descale) {
    d_.src = src;
    d_.dst = dst;
    d_.descale = descale;
    return *this;
  }

  const zyfa_quantize_desc &desc() const { return d_; }

  void run(void *stream = nullptr) const { check(zyfa_quantize_fp8(&d_, stream)); }
  void run_host() const { check(zyfa_quantize_fp8_host(&d_)); }
  [[nodiscard]] zyfa_status try_run(void *stream = nullptr) const noexcept { return zyfa_quantize_fp8(&d_, stream); }
  [[nodiscard]] zyfa_status try_run_host() const noexcept { return zyfa_quantize_fp8_host(&d_); }

 private:
  zyfa_quantize_desc d_;
};

// The plan cache (job tables per shape), shared by every thread of the process.
inline zyfa_plan_cache_stats plan_cache_stats() {
  zyfa_plan_cache_stats stats = ZYFA_PLAN_CACHE_STATS_INIT;
  check(zyfa_plan_cache_get_stats(&stats));
  return stats;
}
inline void plan_cache_set_capacity(uint64_t capacity) { check(zyfa_plan_cache_set_capacity(capacity)); }
// Not while a call that uses a plan may still run, nor while a captured graph that holds one may be launched.
inline void plan_cache_clear() { check(zyfa_plan_cache_clear()); }

// True when the loaded libzyfa.so is the version this header describes.
inline bool library_matches_header() noexcept { return zyfa_version() == ZYFA_VERSION; }

}  // namespace zyfa

#endif  // ZYFA_ZYFA_HPP_
