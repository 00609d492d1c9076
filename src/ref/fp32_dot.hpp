// The CPU backend's fp32 dot product of raw inputs, in a header so that host studies (bench/candidates/)
// form scores exactly as the backend does.
#ifndef ZYFA_REF_FP32_DOT_HPP_
#define ZYFA_REF_FP32_DOT_HPP_

#include <cstdint>

namespace zyfa::ref {

// Products are exact (BF16 and e4m3 mantissas fit in fp32); eight partial sums in a fixed order keep the add
// chain short, as a tensor core's adder tree does.
inline float fp32_dot(const float *a, const float *b, int64_t n) {
  constexpr int kLanes = 8;
  float part[kLanes] = {};
  int64_t d = 0;
  for (; d + kLanes <= n; d += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] += a[d + l] * b[d + l];
  for (; d < n; ++d) part[0] += a[d] * b[d];
  return ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
}

}  // namespace zyfa::ref

#endif  // ZYFA_REF_FP32_DOT_HPP_
