// fp32 additions, subtractions and multiplications that round once, to nearest even, on the host and on
// the GPU alike. Code that must give bit-identical results on both (the rotations, the FP8 scaling) is
// written with these, so that no compiler can fuse a product into a following sum (an FMA rounds once
// where the pair rounds twice) or keep an intermediate in wider precision.
#ifndef ZYFA_KERNELS_ROUNDED_OPS_H_
#define ZYFA_KERNELS_ROUNDED_OPS_H_

#include <cfloat>

#include "kernels/numerics.h"

#if !defined(__CUDA_ARCH__) && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#  error "zyfa needs fp32 arithmetic evaluated in fp32 on the host (FLT_EVAL_METHOD == 0, e.g. SSE, not x87)"
#endif

namespace zyfa::rounded {

// On the device the __f*_rn intrinsics are never contracted into FMAs. On the host, GCC may contract
// a * b + c into an FMA only when the target has one (-mfma); the barrier below makes every product a
// value the optimizer cannot see into, whatever the flags.
ZYFA_HD float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

ZYFA_HD float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

ZYFA_HD float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  float product = a * b;
#  if defined(__GNUC__)
  __asm__("" : "+m"(product));  // an opaque round trip: the product is rounded and stored, never fused
#  endif
  return product;
#endif
}

}  // namespace zyfa::rounded

#endif  // ZYFA_KERNELS_ROUNDED_OPS_H_
