// The sums of Hopper's FP8 tensor cores (QGMMA: wgmma with e4m3 inputs and fp32 accumulators), on the host,
// so that the CPU backend follows the wgmma kernels' S = Q K^T and P V bit for bit instead of exact sums.
//
// One k-step (32 products) adds to its accumulator C like this, as measured on the H200 (2026-12-02,
// tools/device/qgmma_probe.cu: 524288 outputs of crafted and random cases, A from shared memory and from
// registers, 1 and 4 chained k-steps; every one reproduced, bench/NOTES-fp8.md):
//   - each product is exact: significands s_a s_b (3 fraction bits each) at exponent e_a + e_b, the
//     factors' own exponents (an e4m3 subnormal's is -6), not renormalized when s_a s_b >= 2;
//   - the terms (the nonzero products and C, whose exponent is its fp32 one) are aligned to the largest
//     exponent E among them and cut toward zero below 2^(E - 13), then summed exactly;
//   - the sum is normalized and cut toward zero to 14 significant bits (13 mantissa bits, "e8m13");
//     an exact cancellation gives +0.
// Longer products chain k-steps, each step's result the next one's C. A wrong guess at any of these costs
// 2-16% of the outputs (the alternatives the fit tried, bench/NOTES-fp8.md).
#ifndef ZYFA_REF_TENSOR_CORE_SUMS_HPP_
#define ZYFA_REF_TENSOR_CORE_SUMS_HPP_

#include <cstdint>

namespace zyfa::ref {

// Products per k-step of an e4m3 wgmma (k = 32 bytes).
constexpr int kQgmmaK = 32;

// An e4m3 value as the tensor cores read it: value = sig * 2^(exp - 3), sig signed (|sig| < 16, 0 for zero),
// exp the format's exponent (at least -6).
struct Fp8Factor {
  int8_t sig = 0;
  int8_t exp = 0;
};
Fp8Factor fp8_factor(uint8_t e4m3_code);

// acc + sum_{k < n} a[k] b[k * b_stride] over ceil(n / kQgmmaK) chained k-steps, as the tensor cores return
// it; n need not be a multiple of kQgmmaK (the missing products are zero, as the kernels' padding is).
float qgmma_sum(float acc, const Fp8Factor *a, const Fp8Factor *b, int64_t b_stride, int n);

}  // namespace zyfa::ref

#endif  // ZYFA_REF_TENSOR_CORE_SUMS_HPP_
