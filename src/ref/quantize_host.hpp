// The host twin of zyfa_quantize_fp8 (behind zyfa_quantize_fp8_host): the kernel's steps on host memory,
// with the same rotation (src/kernels/rotation.h), scale rule (src/kernels/fp8_scale.h) and rounding
// (numerics::e4m3_code), so its codes and descale equal the GPU's bit for bit.
#ifndef ZYFA_REF_QUANTIZE_HOST_HPP_
#define ZYFA_REF_QUANTIZE_HOST_HPP_

#include <cstdint>

#include "zyfa/zyfa.h"

namespace zyfa::ref {

// `desc` is validated (src/host/quantize_api.cpp) and points at host memory; row_stride is resolved
// (never 0). Writes desc.n_rows * desc.dim codes to desc.dst and the descale to *desc.descale.
void quantize_fp8_host(const zyfa_quantize_desc &desc, int64_t row_stride);

}  // namespace zyfa::ref

#endif  // ZYFA_REF_QUANTIZE_HOST_HPP_
