// Float activations into the library's input formats: BF16, or FP8 e4m3 with one power-of-two descale
// per tensor (or per slice), the rule of zyfa_quantize_fp8. The conversions are numerics.h's.
#ifndef ZYFA_TEST_SUPPORT_QUANTIZE_HPP_
#define ZYFA_TEST_SUPPORT_QUANTIZE_HPP_

#include <cstdint>

namespace zyfa::test {

// 2^ceil(log2(amax / 448)): the smallest power of two that brings amax within e4m3's range. 1 for an
// all-zero tensor, so that the descale stays a positive normal float.
float fp8_descale_for_amax(float amax);

// The e4m3 code of x / descale, x first rounded to BF16: FP8 inputs come from BF16 activations through
// zyfa_quantize_fp8, and rounding here the same way keeps the two paths on the same codes.
uint8_t fp8_code(float x, float descale);

// The largest |round_bf16(x)| of n values (what zyfa_quantize_fp8 sees).
float bf16_amax(const float *x, int64_t n);

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_QUANTIZE_HPP_
