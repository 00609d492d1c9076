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
// Longer products chain k-steps, each step's result the next one's C. Each of these choices is needed: the
// alternatives the fit tried miss 2-27% of the outputs (bench/NOTES-fp8.md).
#ifndef ZYFA_REF_TENSOR_CORE_SUMS_HPP_
#define ZYFA_REF_TENSOR_CORE_SUMS_HPP_

#include <cstdint>

namespace zyfa::ref {

// Products per k-step of an e4m3 wgmma (k = 32 bytes).
constexpr int kQgmmaK = 32;
// The exponent given to zero factors: far below any product's, so that a zero never sets the alignment.
constexpr int16_t kZeroFactorExponent = -100;

// The exponent the tensor cores align an e4m3 value by: the format's own (at least -6), or
// kZeroFactorExponent for a zero.
int16_t fp8_exponent(uint8_t e4m3_code);

// For every column c < n_cols: acc[c] += sum_{k < depth} a[k] b[k * ld + c], as the tensor cores sum it, in
// k-steps of kQgmmaK from k = 0 (a shorter last step stands for zeros, as the kernels' padding does). a and
// b are e4m3 values (exact in float) with their fp8_exponent()s in a_exp and b_exp (laid out as b).
// The columns are the outputs of one row of a product: a block's scores (b = K^T) or its P V (b = V).
void qgmma_columns(float *acc, const float *a, const int16_t *a_exp, const float *b, const int16_t *b_exp, int64_t ld,
                   int n_cols, int depth);

}  // namespace zyfa::ref

#endif  // ZYFA_REF_TENSOR_CORE_SUMS_HPP_
