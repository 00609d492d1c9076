/* Prints the ABI of include/zyfa/zyfa.h as the C compiler sees it: one "<what> <name> <value>" line per
 * size, field offset, constant and ZYFA_*_INIT default. The Rust and Python bindings declare the ABI by
 * hand; their layout tests run this program and require every line to match their own declarations, so
 * a header change that a binding missed fails its tests. CMake builds it as zyfa_abi_probe. */
#include <stddef.h>
#include <stdio.h>

#include "zyfa/zyfa.h"

#define SIZE(T) printf("sizeof %s %zu\n", #T, sizeof(T))
#define OFFSET(T, field) printf("offsetof %s.%s %zu\n", #T, #field, offsetof(T, field))
#define CONSTANT(c) printf("const %s %lld\n", #c, (long long)(c))
#define INIT(name, expr) printf("init %s %lld\n", name, (long long)(expr))

static void print_sizes(void) {
  SIZE(zyfa_status);
  SIZE(zyfa_strides);
  SIZE(zyfa_descale);
  SIZE(zyfa_attn_desc);
  SIZE(zyfa_quantize_desc);
  SIZE(zyfa_plan_cache_stats);
}

static void print_offsets(void) {
  OFFSET(zyfa_strides, batch);
  OFFSET(zyfa_strides, seq);
  OFFSET(zyfa_strides, head);

  OFFSET(zyfa_descale, kind);
  OFFSET(zyfa_descale, value);
  OFFSET(zyfa_descale, ptr);
  OFFSET(zyfa_descale, batch_stride);
  OFFSET(zyfa_descale, head_stride);

  OFFSET(zyfa_attn_desc, struct_size);
  OFFSET(zyfa_attn_desc, dtype);
  OFFSET(zyfa_attn_desc, layout);
  OFFSET(zyfa_attn_desc, batch);
  OFFSET(zyfa_attn_desc, seqlen);
  OFFSET(zyfa_attn_desc, nheads);
  OFFSET(zyfa_attn_desc, nheads_k);
  OFFSET(zyfa_attn_desc, d_qk);
  OFFSET(zyfa_attn_desc, d_v);
  OFFSET(zyfa_attn_desc, q);
  OFFSET(zyfa_attn_desc, k);
  OFFSET(zyfa_attn_desc, v);
  OFFSET(zyfa_attn_desc, out);
  OFFSET(zyfa_attn_desc, lse);
  OFFSET(zyfa_attn_desc, softmax_scale);
  OFFSET(zyfa_attn_desc, causal);
  OFFSET(zyfa_attn_desc, q_strides);
  OFFSET(zyfa_attn_desc, k_strides);
  OFFSET(zyfa_attn_desc, v_strides);
  OFFSET(zyfa_attn_desc, out_strides);
  OFFSET(zyfa_attn_desc, q_descale);
  OFFSET(zyfa_attn_desc, k_descale);
  OFFSET(zyfa_attn_desc, v_descale);
  OFFSET(zyfa_attn_desc, p_rounding);
  OFFSET(zyfa_attn_desc, reserved0);
  OFFSET(zyfa_attn_desc, workspace);
  OFFSET(zyfa_attn_desc, workspace_bytes);

  OFFSET(zyfa_quantize_desc, struct_size);
  OFFSET(zyfa_quantize_desc, src);
  OFFSET(zyfa_quantize_desc, dst);
  OFFSET(zyfa_quantize_desc, descale);
  OFFSET(zyfa_quantize_desc, n_rows);
  OFFSET(zyfa_quantize_desc, dim);
  OFFSET(zyfa_quantize_desc, row_stride);
  OFFSET(zyfa_quantize_desc, rotation);
  OFFSET(zyfa_quantize_desc, rotation_seed);

  OFFSET(zyfa_plan_cache_stats, struct_size);
  OFFSET(zyfa_plan_cache_stats, hits);
  OFFSET(zyfa_plan_cache_stats, misses);
  OFFSET(zyfa_plan_cache_stats, evictions);
  OFFSET(zyfa_plan_cache_stats, entries);
  OFFSET(zyfa_plan_cache_stats, capacity);
  OFFSET(zyfa_plan_cache_stats, device_bytes);
}

static void print_constants(void) {
  CONSTANT(ZYFA_VERSION);
  CONSTANT(ZYFA_STATUS_SUCCESS);
  CONSTANT(ZYFA_STATUS_NULL_ARGUMENT);
  CONSTANT(ZYFA_STATUS_BAD_STRUCT_SIZE);
  CONSTANT(ZYFA_STATUS_BAD_DTYPE);
  CONSTANT(ZYFA_STATUS_BAD_LAYOUT);
  CONSTANT(ZYFA_STATUS_UNSUPPORTED_HEAD_DIM);
  CONSTANT(ZYFA_STATUS_BAD_SHAPE);
  CONSTANT(ZYFA_STATUS_BAD_HEAD_RATIO);
  CONSTANT(ZYFA_STATUS_BAD_STRIDE);
  CONSTANT(ZYFA_STATUS_MISALIGNED);
  CONSTANT(ZYFA_STATUS_NULL_TENSOR);
  CONSTANT(ZYFA_STATUS_ALIASED_OUTPUT);
  CONSTANT(ZYFA_STATUS_BAD_DESCALE);
  CONSTANT(ZYFA_STATUS_FP8_FIELD_WITH_BF16);
  CONSTANT(ZYFA_STATUS_NOT_CAUSAL);
  CONSTANT(ZYFA_STATUS_SIZE_OVERFLOW);
  CONSTANT(ZYFA_STATUS_BAD_SOFTMAX_SCALE);
  CONSTANT(ZYFA_STATUS_NO_DEVICE);
  CONSTANT(ZYFA_STATUS_UNSUPPORTED_DEVICE);
  CONSTANT(ZYFA_STATUS_CUDA_ERROR);
  CONSTANT(ZYFA_STATUS_OUT_OF_MEMORY);
  CONSTANT(ZYFA_STATUS_NOT_PREPARED);
  CONSTANT(ZYFA_STATUS_BAD_ARGUMENT);
  CONSTANT(ZYFA_STATUS_INTERNAL);
  CONSTANT(ZYFA_DTYPE_BF16);
  CONSTANT(ZYFA_DTYPE_FP8_E4M3);
  CONSTANT(ZYFA_LAYOUT_BSHD);
  CONSTANT(ZYFA_LAYOUT_BHSD);
  CONSTANT(ZYFA_LAYOUT_STRIDED);
  CONSTANT(ZYFA_DESCALE_NONE);
  CONSTANT(ZYFA_DESCALE_HOST);
  CONSTANT(ZYFA_DESCALE_DEVICE);
  CONSTANT(ZYFA_ROTATION_NONE);
  CONSTANT(ZYFA_ROTATION_HADAMARD);
  CONSTANT(ZYFA_P_ROUNDING_DEFAULT);
  CONSTANT(ZYFA_P_ROUNDING_LEAN);
  CONSTANT(ZYFA_P_ROUNDING_EXACT);
  CONSTANT(ZYFA_P_ROUNDING_SPLIT);
}

/* The defaults that the INIT macros give and that the bindings' constructors must give too. */
static void print_defaults(void) {
  const zyfa_attn_desc attn = ZYFA_ATTN_DESC_INIT;
  INIT("zyfa_attn_desc.struct_size", attn.struct_size);
  INIT("zyfa_attn_desc.dtype", attn.dtype);
  INIT("zyfa_attn_desc.layout", attn.layout);
  INIT("zyfa_attn_desc.d_qk", attn.d_qk);
  INIT("zyfa_attn_desc.d_v", attn.d_v);
  INIT("zyfa_attn_desc.causal", attn.causal);
  INIT("zyfa_attn_desc.q_descale.kind", attn.q_descale.kind);
  INIT("zyfa_attn_desc.p_rounding", attn.p_rounding);
  INIT("zyfa_attn_desc.reserved0", attn.reserved0);
  INIT("zyfa_attn_desc.workspace_bytes", attn.workspace_bytes);
  const zyfa_quantize_desc quantize = ZYFA_QUANTIZE_DESC_INIT;
  INIT("zyfa_quantize_desc.struct_size", quantize.struct_size);
  INIT("zyfa_quantize_desc.rotation", quantize.rotation);
  const zyfa_plan_cache_stats stats = ZYFA_PLAN_CACHE_STATS_INIT;
  INIT("zyfa_plan_cache_stats.struct_size", stats.struct_size);
}

int main(void) {
  print_sizes();
  print_offsets();
  print_constants();
  print_defaults();
  return 0;
}
