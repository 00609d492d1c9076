// The validated form of a zyfa_attn_desc that every backend consumes: layouts resolved to strides, the
// softmax scale and the P rounding resolved, descales in one form. Only validate() (src/host/validate.cpp)
// makes one.
#ifndef ZYFA_HOST_PROBLEM_HPP_
#define ZYFA_HOST_PROBLEM_HPP_

#include <cmath>
#include <cstdint>

#include "kernels/numerics.h"
#include "kernels/out_chunk.h"
#include "zyfa/zyfa.h"

namespace zyfa {

// The softmax scale a descriptor gets when it leaves softmax_scale at 0.
inline float default_softmax_scale(int64_t d_qk) { return 1.0f / std::sqrt(float(d_qk)); }
// softmax_scale as validation resolves it: 0 means the default.
inline float resolve_softmax_scale(float given, int64_t d_qk) {
  return given != 0.0f ? given : default_softmax_scale(d_qk);
}

// Whether a problem takes lean P codes (src/kernels/numerics.h) rather than exact P, as validation resolves
// the descriptor's p_rounding (given as the int a caller stored, already checked to be a zyfa_p_rounding):
// DEFAULT follows numerics::uses_lean_p(d_qk). BF16 rounds P to bf16 and never does.
inline bool resolve_lean_p(bool fp8, int p_rounding, int64_t d_qk) {
  if (!fp8) return false;
  if (p_rounding == ZYFA_P_ROUNDING_DEFAULT) return numerics::uses_lean_p(int(d_qk));
  return p_rounding == ZYFA_P_ROUNDING_LEAN;
}

// A tensor of logical shape (batch, seqlen, heads, dim) with element strides; dim is contiguous.
struct TensorRef {
  const void *ptr = nullptr;
  int64_t batch_stride = 0;
  int64_t seq_stride = 0;
  int64_t head_stride = 0;

  int64_t offset(int64_t b, int64_t s, int64_t h) const {
    return b * batch_stride + s * seq_stride + h * head_stride;
  }
};

// One descale: a constant (host float, or BF16's 1), or a float array indexed by (batch, kv head).
struct Descale {
  float value = 1.0f;          // used when ptr == nullptr
  const float *ptr = nullptr;  // device memory for the GPU, host memory for the CPU backend
  int64_t batch_stride = 0;
  int64_t head_stride = 0;

  bool on_device_memory() const { return ptr != nullptr; }
  // Host-side read (CPU backend only: on the GPU the kernel reads ptr itself).
  float host_value(int64_t b, int64_t hk) const {
    return ptr ? ptr[b * batch_stride + hk * head_stride] : value;
  }
};

struct Problem {
  zyfa_dtype dtype = ZYFA_DTYPE_BF16;
  int64_t batch = 0, seqlen = 0, nheads = 0, nheads_k = 0, d_qk = 0, d_v = 0;
  TensorRef q, k, v;
  TensorRef out;     // bfloat16; ptr is const here, backends cast it back (validate checked it is writable)
  float *lse = nullptr;  // (batch, nheads, seqlen) contiguous, or nullptr
  void *workspace = nullptr;  // device memory for vt_prepass (nullptr in zyfa_attn_prepare)
  float softmax_scale = 0.0f;  // resolved: never 0
  Descale q_descale, k_descale, v_descale;  // all 1 for BF16
  bool lean_p = false;  // FP8: P codes from one FFMA (lean) rather than exp2 and a conversion (exact)
  bool split_p = false;  // FP8: exact P plus the e4m3 of its residual, a second P V (ZYFA_P_ROUNDING_SPLIT)
  // FP8: the call writes V^T into the caller's workspace first and runs the kernel that reads it
  // (src/kernels/fp8_vt_layout.h).
  bool vt_prepass = false;

  bool fp8() const { return dtype == ZYFA_DTYPE_FP8_E4M3; }
  int64_t group() const { return nheads / nheads_k; }  // query heads per kv head
  void *out_ptr() const { return const_cast<void *>(out.ptr); }
  // Whether every output row starts on kOutChunkBytes. A stride over an extent of 1 never moves the address
  // (validation accepts any value there).
  bool out_rows_in_chunks() const {
    const auto in_chunks = [](int64_t stride, int64_t extent) { return extent == 1 || stride % kOutChunkElems == 0; };
    return reinterpret_cast<uintptr_t>(out.ptr) % kOutChunkBytes == 0 && in_chunks(out.batch_stride, batch) &&
           in_chunks(out.seq_stride, seqlen) && in_chunks(out.head_stride, nheads);
  }
  // B*H*S^2*(d_qk + d_v): the causal FLOP count that every zyfa throughput figure uses (ZYFA's convention).
  double flops() const {
    return double(batch) * double(nheads) * double(seqlen) * double(seqlen) * double(d_qk + d_v);
  }
};

}  // namespace zyfa

#endif  // ZYFA_HOST_PROBLEM_HPP_
