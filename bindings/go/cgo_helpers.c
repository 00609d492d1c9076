#include "cgo_helpers.h"

zyfa_attn_desc zyfa_go_attn_desc_init(void) {
  zyfa_attn_desc desc = ZYFA_ATTN_DESC_INIT;
  return desc;
}

zyfa_quantize_desc zyfa_go_quantize_desc_init(void) {
  zyfa_quantize_desc desc = ZYFA_QUANTIZE_DESC_INIT;
  return desc;
}

zyfa_status zyfa_go_attn_fwd_host(const zyfa_attn_desc *shape, const void *q, const void *k, const void *v,
                                  void *out, float *lse, const float *q_descale_values,
                                  const float *k_descale_values, const float *v_descale_values) {
  zyfa_attn_desc desc = *shape;
  desc.q = q;
  desc.k = k;
  desc.v = v;
  desc.out = out;
  desc.lse = lse;
  if (q_descale_values) desc.q_descale.ptr = q_descale_values;
  if (k_descale_values) desc.k_descale.ptr = k_descale_values;
  if (v_descale_values) desc.v_descale.ptr = v_descale_values;
  return zyfa_attn_fwd_host(&desc);
}

zyfa_status zyfa_go_quantize_fp8_host(const zyfa_quantize_desc *shape, const void *src, void *dst, float *descale) {
  zyfa_quantize_desc desc = *shape;
  desc.src = src;
  desc.dst = dst;
  desc.descale = descale;
  return zyfa_quantize_fp8_host(&desc);
}

zyfa_status zyfa_go_attn_fwd(const zyfa_attn_desc *shape, uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out,
                             uintptr_t lse, uintptr_t q_descale, uintptr_t k_descale, uintptr_t v_descale,
                             uintptr_t workspace, uintptr_t stream) {
  zyfa_attn_desc desc = *shape;
  desc.workspace = (void *)workspace;
  desc.q = (const void *)q;
  desc.k = (const void *)k;
  desc.v = (const void *)v;
  desc.out = (void *)out;
  desc.lse = (float *)lse;
  if (q_descale) desc.q_descale.ptr = (const float *)q_descale;
  if (k_descale) desc.k_descale.ptr = (const float *)k_descale;
  if (v_descale) desc.v_descale.ptr = (const float *)v_descale;
  return zyfa_attn_fwd(&desc, (void *)stream);
}

zyfa_status zyfa_go_attn_prepare(const zyfa_attn_desc *shape, uintptr_t stream) {
  return zyfa_attn_prepare(shape, (void *)stream);
}

zyfa_status zyfa_go_quantize_fp8(const zyfa_quantize_desc *shape, uintptr_t src, uintptr_t dst, uintptr_t descale,
                                 uintptr_t stream) {
  zyfa_quantize_desc desc = *shape;
  desc.src = (const void *)src;
  desc.dst = (void *)dst;
  desc.descale = (float *)descale;
  return zyfa_quantize_fp8(&desc, (void *)stream);
}
