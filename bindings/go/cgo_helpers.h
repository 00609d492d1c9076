/* C helpers of the Go binding. cgo forbids storing Go pointers in memory that is passed to C, so Go
 * builds a descriptor without pointers and these helpers attach the tensors, passed as plain arguments,
 * on the C stack. Device addresses travel as uintptr_t: they are not Go pointers. */
#ifndef ZYFA_GO_CGO_HELPERS_H_
#define ZYFA_GO_CGO_HELPERS_H_

#include <stdint.h>

#include "zyfa/zyfa.h"

zyfa_attn_desc zyfa_go_attn_desc_init(void);
zyfa_quantize_desc zyfa_go_quantize_desc_init(void);

/* Host memory. A non-NULL *_descale_values replaces that descale's ptr (a per-(batch, kv head) array). */
zyfa_status zyfa_go_attn_fwd_host(const zyfa_attn_desc *shape, const void *q, const void *k, const void *v,
                                  void *out, float *lse, const float *q_descale_values,
                                  const float *k_descale_values, const float *v_descale_values);
zyfa_status zyfa_go_quantize_fp8_host(const zyfa_quantize_desc *shape, const void *src, void *dst, float *descale);

/* Device memory; a non-zero *_descale replaces that descale's ptr. */
zyfa_status zyfa_go_attn_fwd(const zyfa_attn_desc *shape, uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out,
                             uintptr_t lse, uintptr_t q_descale, uintptr_t k_descale, uintptr_t v_descale,
                             uintptr_t workspace, uintptr_t stream);
zyfa_status zyfa_go_attn_prepare(const zyfa_attn_desc *shape, uintptr_t stream);
zyfa_status zyfa_go_quantize_fp8(const zyfa_quantize_desc *shape, uintptr_t src, uintptr_t dst, uintptr_t descale,
                                 uintptr_t stream);

#endif /* ZYFA_GO_CGO_HELPERS_H_ */
