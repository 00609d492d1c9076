// The exported C entry points of libzyfa.so (zyfa_quantize_fp8* live in quantize_api.cpp). Each runs
// inside zyfa::guarded: the thread's message cleared first, no exception through the C ABI.
#include "host/c_enum.hpp"
#include "host/dispatch.hpp"
#include "host/error.hpp"
#include "host/fp8_asm_attention.hpp"
#include "host/plan_cache.hpp"
#include "host/validate.hpp"
#include "ref/cpu_backend.hpp"
#include "zyfa/zyfa.h"

using zyfa::guarded;

extern "C" {

ZYFA_API const char *zyfa_status_string(zyfa_status status) {
  switch (zyfa::c_enum_value(status)) {
    case ZYFA_STATUS_SUCCESS: return "ZYFA_STATUS_SUCCESS: no error";
    case ZYFA_STATUS_NULL_ARGUMENT: return "ZYFA_STATUS_NULL_ARGUMENT: a required argument is NULL";
    case ZYFA_STATUS_BAD_STRUCT_SIZE: return "ZYFA_STATUS_BAD_STRUCT_SIZE: struct_size of a layout this library does not know";
    case ZYFA_STATUS_BAD_DTYPE: return "ZYFA_STATUS_BAD_DTYPE: unknown input dtype";
    case ZYFA_STATUS_BAD_LAYOUT: return "ZYFA_STATUS_BAD_LAYOUT: unknown layout";
    case ZYFA_STATUS_UNSUPPORTED_HEAD_DIM: return "ZYFA_STATUS_UNSUPPORTED_HEAD_DIM: (d_qk, d_v) must be (128, 128) or (192, 128)";
    case ZYFA_STATUS_BAD_SHAPE: return "ZYFA_STATUS_BAD_SHAPE: batch, seqlen and heads must be >= 1";
    case ZYFA_STATUS_BAD_HEAD_RATIO: return "ZYFA_STATUS_BAD_HEAD_RATIO: nheads must be a multiple of nheads_k";
    case ZYFA_STATUS_BAD_STRIDE: return "ZYFA_STATUS_BAD_STRIDE: a stride is negative, not 16-byte granular, or makes the output overlap itself";
    case ZYFA_STATUS_MISALIGNED: return "ZYFA_STATUS_MISALIGNED: a pointer is not aligned (tensors on 16 bytes, lse and the quantize descale on 4, the workspace on 256)";
    case ZYFA_STATUS_NULL_TENSOR: return "ZYFA_STATUS_NULL_TENSOR: a tensor pointer (q, k, v, out, a used workspace; quantize src or dst) is NULL";
    case ZYFA_STATUS_ALIASED_OUTPUT: return "ZYFA_STATUS_ALIASED_OUTPUT: an output overlaps another tensor";
    case ZYFA_STATUS_BAD_DESCALE: return "ZYFA_STATUS_BAD_DESCALE: an FP8 descale is missing or invalid";
    case ZYFA_STATUS_FP8_FIELD_WITH_BF16: return "ZYFA_STATUS_FP8_FIELD_WITH_BF16: an FP8-only field (a descale, p_rounding) was set with BF16 inputs";
    case ZYFA_STATUS_NOT_CAUSAL: return "ZYFA_STATUS_NOT_CAUSAL: only causal attention is implemented";
    case ZYFA_STATUS_SIZE_OVERFLOW: return "ZYFA_STATUS_SIZE_OVERFLOW: a size or offset overflows";
    case ZYFA_STATUS_BAD_SOFTMAX_SCALE: return "ZYFA_STATUS_BAD_SOFTMAX_SCALE: softmax_scale must be finite and >= 0, and finite times log2(e)";
    case ZYFA_STATUS_NO_DEVICE: return "ZYFA_STATUS_NO_DEVICE: no CUDA device or driver";
    case ZYFA_STATUS_UNSUPPORTED_DEVICE: return "ZYFA_STATUS_UNSUPPORTED_DEVICE: the device is not a Hopper GPU";
    case ZYFA_STATUS_CUDA_ERROR: return "ZYFA_STATUS_CUDA_ERROR: the CUDA runtime reported an error";
    case ZYFA_STATUS_OUT_OF_MEMORY: return "ZYFA_STATUS_OUT_OF_MEMORY: a memory allocation failed";
    case ZYFA_STATUS_NOT_PREPARED: return "ZYFA_STATUS_NOT_PREPARED: call zyfa_attn_prepare before capturing a new shape, P rounding or strides";
    case ZYFA_STATUS_BAD_ARGUMENT: return "ZYFA_STATUS_BAD_ARGUMENT: an argument is out of range";
    case ZYFA_STATUS_INTERNAL: return "ZYFA_STATUS_INTERNAL: internal error in zyfa";
  }
  return "ZYFA_STATUS_UNKNOWN: not a zyfa_status value";
}

ZYFA_API const char *zyfa_last_error(void) { return zyfa::last_error(); }

ZYFA_API int zyfa_version(void) { return ZYFA_VERSION; }

ZYFA_API zyfa_status zyfa_attn_fwd(const zyfa_attn_desc *desc, void *stream) {
  return guarded("zyfa_attn_fwd", [&] {
    zyfa::Problem problem;
    if (zyfa_status s = zyfa::validate_attention(desc, zyfa::PointerCheck::kRequired, &problem)) return s;
    return zyfa::run_attention(problem, stream, /*launch=*/true);
  });
}

ZYFA_API zyfa_status zyfa_attn_prepare(const zyfa_attn_desc *desc, void *stream) {
  return guarded("zyfa_attn_prepare", [&] {
    zyfa::Problem problem;
    if (zyfa_status s = zyfa::validate_attention(desc, zyfa::PointerCheck::kOptional, &problem)) return s;
    return zyfa::run_attention(problem, stream, /*launch=*/false);
  });
}

ZYFA_API zyfa_status zyfa_attn_workspace_size(const zyfa_attn_desc *desc, size_t *bytes) {
  return guarded("zyfa_attn_workspace_size", [&] {
    if (bytes == nullptr) return zyfa::fail(ZYFA_STATUS_NULL_ARGUMENT, "bytes = NULL");
    zyfa::Problem problem;
    if (zyfa_status s = zyfa::validate_attention(desc, zyfa::PointerCheck::kShapeOnly, &problem)) return s;
    *bytes = size_t(zyfa::kernels::fp8_vt_workspace_bytes(problem));
    return ZYFA_STATUS_SUCCESS;
  });
}

ZYFA_API zyfa_status zyfa_attn_fwd_host(const zyfa_attn_desc *desc) {
  return guarded("zyfa_attn_fwd_host", [&] {
    zyfa::Problem problem;
    if (zyfa_status s = zyfa::validate_attention(desc, zyfa::PointerCheck::kRequired, &problem)) return s;
    zyfa::ref::attention_cpu_backend(problem);
    return ZYFA_STATUS_SUCCESS;
  });
}

ZYFA_API zyfa_status zyfa_plan_cache_get_stats(zyfa_plan_cache_stats *stats) {
  return guarded("zyfa_plan_cache_get_stats", [&] { return zyfa::PlanCache::global().stats(stats); });
}

ZYFA_API zyfa_status zyfa_plan_cache_set_capacity(uint64_t capacity) {
  return guarded("zyfa_plan_cache_set_capacity", [&] { return zyfa::PlanCache::global().set_capacity(capacity); });
}

ZYFA_API zyfa_status zyfa_plan_cache_clear(void) {
  return guarded("zyfa_plan_cache_clear", [&] { return zyfa::PlanCache::global().clear(); });
}

}  // extern "C"
