// The orthogonal rotations that zyfa_quantize_fp8 can fuse in before quantizing q and k (seed README,
// "Using FP8 attention in a model"). A row x becomes y = x R; R is orthogonal, so (qR)(kR)^T = q k^T and
// only the rounding error of the FP8 products changes. One definition for the host twin and the kernel.
//
//   d = 128:  R = diag(s) H_128 / sqrt(128)
//   d = 192:  R = C^T (x) (diag(s) H_64 / 8)      (Kronecker product, row and column index 64 a + b)
// with
//   H_n  the Sylvester Hadamard matrix, H[i][j] = (-1)^popcount(i & j): symmetric, H H = n I.
//   s    the random signs of rotation_seed: s_j = -1 exactly when bit 63 of splitmix64(seed, j) is set,
//        j = 0 .. n-1 (n = 128, or 64 at d = 192, where all three blocks share the 64 signs).
//   C    the orthonormal 3-point DCT-II: C[k][a] = c_k cos(pi (2a + 1) k / 6), c_0 = sqrt(1/3),
//        c_1 = c_2 = sqrt(2/3); rows k = (1, 1, 1)/sqrt(3), (1, 0, -1)/sqrt(2), (1, -2, 1)/sqrt(6).
// At d = 192 the row is three blocks of 64: x[64 a + b] is element b of block a. Each block gets its signs
// and a 64-point Hadamard transform, z_a = H_64 (s * x_a); then the DCT runs across the blocks, column by
// column: y[64 k + b] = sum_a C[k][a] z_a[b] / 8.
//
// Bit-identical on host and GPU: the arithmetic is one fixed graph of fp32 operations, each rounded once
// (src/kernels/rounded_ops.h), in this order:
//   1. signs: flip the sign bit (exact);
//   2. Hadamard butterflies in stages h = 1, 2, 4, ..., n/2; a stage maps every pair (i, i + h) with
//      i & h == 0 to (x_i + x_{i+h}, x_i - x_{i+h});
//   3. mixing of each column of the blocks (mix_column below): at d = 128 a multiply by fl(1/sqrt(128));
//      at d = 192, with t = the column and e = t_0 + t_2:
//        y_0 = (e + t_1) * fl(1/(8 sqrt 3)),  y_1 = (t_0 - t_2) * fl(1/(8 sqrt 2)),
//        y_2 = (e - (t_1 + t_1)) * fl(1/(8 sqrt 6)).
// Which thread computes a butterfly does not change its value, so the kernel may spread a row over a
// warp (its lanes exchange the stages whose pairs straddle lanes) and still match rotate_row exactly.
#ifndef ZYFA_KERNELS_ROTATION_H_
#define ZYFA_KERNELS_ROTATION_H_

#include <cstdint>

#include "kernels/numerics.h"
#include "kernels/rounded_ops.h"

// Full unrolling keeps a lane's values in registers on the GPU; host compilers would warn about the pragma.
#if defined(__CUDA_ARCH__)
#  define ZYFA_UNROLL _Pragma("unroll")
#else
#  define ZYFA_UNROLL
#endif

namespace zyfa::rotation {

// ---- the random signs: output `index` of a SplitMix64 generator seeded with `seed` (Steele, Lea and
// Flood, 2014), computed directly from the index so that any thread can derive any sign.
constexpr uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kSplitMixMul1 = 0xBF58476D1CE4E5B9ull;
constexpr uint64_t kSplitMixMul2 = 0x94D049BB133111EBull;

ZYFA_HD uint64_t splitmix64(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * kSplitMixGamma;
  z = (z ^ (z >> 30)) * kSplitMixMul1;
  z = (z ^ (z >> 27)) * kSplitMixMul2;
  return z ^ (z >> 31);
}

constexpr uint32_t kFloatSignBit = 0x80000000u;

// The sign of column j as a mask for the float's sign bit: kFloatSignBit for s_j = -1, else 0.
ZYFA_HD uint32_t sign_mask(uint64_t seed, int j) {
  return (splitmix64(seed, uint64_t(j)) >> 63) ? kFloatSignBit : 0u;
}

// x * s_j, exactly.
ZYFA_HD float apply_sign(float x, uint32_t mask) {
  return numerics::bits_float(numerics::float_bits(x) ^ mask);
}

// ---- the two rotations, by their block structure: kBlocks blocks of a kBlockDim-point Hadamard.
struct Hadamard128 {
  static constexpr int kBlocks = 1;
  static constexpr int kBlockDim = 128;
};
struct DctHadamard192 {
  static constexpr int kBlocks = 3;
  static constexpr int kBlockDim = 64;
};
template <class Rotation>
constexpr int kRowDim = Rotation::kBlocks * Rotation::kBlockDim;

// fl(1/sqrt(128)), also fl(1/(8 sqrt 2)).
constexpr float kInvSqrt128 = 0.08838834764831843f;
// The DCT rows' norms folded with the Hadamard's 1/sqrt(64) = 1/8 (a power of two: no extra rounding).
constexpr float kDctRow0Scale = 0.07216878364870323f;  // 1 / (8 sqrt 3)
constexpr float kDctRow1Scale = kInvSqrt128;             // 1 / (8 sqrt 2)
constexpr float kDctRow2Scale = 0.05103103630798288f;  // 1 / (8 sqrt 6)

// The two halves of one butterfly, named so that a lane holding either element computes its half with
// the same operands in the same order.
ZYFA_HD float butterfly_low(float lo, float hi) { return rounded::add(lo, hi); }
ZYFA_HD float butterfly_high(float lo, float hi) { return rounded::sub(lo, hi); }

// Stages h = 1 .. n/2 over n contiguous values: the whole Hadamard transform of a block on the host, and
// the stages inside one lane's values on the GPU.
template <int N>
ZYFA_HD void hadamard_stages(float *v) {
  static_assert(N >= 1 && (N & (N - 1)) == 0, "a Sylvester Hadamard transform has a power-of-two size");
ZYFA_UNROLL
  for (int h = 1; h < N; h *= 2) {
ZYFA_UNROLL
    for (int i = 0; i < N; ++i) {
      if (i & h) continue;
      const float lo = v[i], hi = v[i + h];
      v[i] = butterfly_low(lo, hi);
      v[i + h] = butterfly_high(lo, hi);
    }
  }
}

// Step 3 on one column: t[a] is element b of block a after the Hadamard stages.
ZYFA_HD void mix_column(float (&t)[Hadamard128::kBlocks]) { t[0] = rounded::mul(t[0], kInvSqrt128); }
ZYFA_HD void mix_column(float (&t)[DctHadamard192::kBlocks]) {
  const float even = rounded::add(t[0], t[2]);
  const float y0 = rounded::mul(rounded::add(even, t[1]), kDctRow0Scale);
  const float y1 = rounded::mul(rounded::sub(t[0], t[2]), kDctRow1Scale);
  const float y2 = rounded::mul(rounded::sub(even, rounded::add(t[1], t[1])), kDctRow2Scale);
  t[0] = y0;
  t[1] = y1;
  t[2] = y2;
}

// The signs of one rotation and seed, as sign masks for columns 0 .. kBlockDim-1.
template <class Rotation>
struct SignMasks {
  uint32_t mask[Rotation::kBlockDim];
};
template <class Rotation>
inline SignMasks<Rotation> make_sign_masks(uint64_t seed) {
  SignMasks<Rotation> s{};
  for (int j = 0; j < Rotation::kBlockDim; ++j) s.mask[j] = sign_mask(seed, j);
  return s;
}

// y = x R for one row of kRowDim<Rotation> values (host; the kernel runs the same steps across a warp).
// x and y may be the same array.
template <class Rotation>
inline void rotate_row(const float *x, float *y, const SignMasks<Rotation> &signs) {
  constexpr int kBlocks = Rotation::kBlocks, kBlockDim = Rotation::kBlockDim;
  for (int a = 0; a < kBlocks; ++a) {
    float *block = y + a * kBlockDim;
    for (int b = 0; b < kBlockDim; ++b) block[b] = apply_sign(x[a * kBlockDim + b], signs.mask[b]);
    hadamard_stages<kBlockDim>(block);
  }
  for (int b = 0; b < kBlockDim; ++b) {
    float column[kBlocks];
    for (int a = 0; a < kBlocks; ++a) column[a] = y[a * kBlockDim + b];
    mix_column(column);
    for (int a = 0; a < kBlocks; ++a) y[a * kBlockDim + b] = column[a];
  }
}

}  // namespace zyfa::rotation

#endif  // ZYFA_KERNELS_ROTATION_H_
