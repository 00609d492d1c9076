// zyfa's numerics, shared by the CPU backend (src/ref) and every GPU kernel (src/kernels, src/asmgen).
// One definition of each rounding and of the softmax recurrence, so the backends cannot drift apart.
//
// The recurrence for one query row, over key blocks of kKeyBlock keys (causal: keys <= the row):
//   s_j   = q . k_j                       raw score, fp32 accumulation (exact products); the FP8 wgmma
//                                         kernels' tensor cores keep 14 bits of each k-step's sum instead,
//                                         for S and for P V (src/ref/tensor_core_sums.hpp, which the CPU
//                                         backend follows), the one place a kernel departs from it
//   c     = softmax_scale * log2(e) [* q_descale * k_descale for FP8]      (fp32, in this order)
//   bmax  = c * max_j s_j                 block max in base-2 units
//   if m == -inf or bmax > m + tau:       lazy rescale (tau: lazy_rescale_threshold, 8 FP8, 4 BF16)
//       m_new = bmax (FP8: rounded up to a multiple of 1/8, as ZYFA's integer code offsets needed)
//       alpha = exp2(m - m_new); O *= alpha; l *= alpha; m = m_new
//   BF16: p_j = bf16(exp2(fma(s_j, c, -m)));                      O += sum p_j v_j; l += sum p_j
//   FP8:  per-block scaling, so that small P stay normal e4m3 values (H = kFp8HeadroomBinades):
//         (which of the two: Problem::lean_p, from the descriptor's p_rounding; see uses_lean_p)
//         lean P (default at d = 128): the block max gets the code kLeanPTopCode (118, value 224) exactly,
//                            G = log2(224) = kLeanPTopBinade:
//                            y_j = fma(s_j, c / 8, offset), offset = fl(2 + (118.5 - 8 bmax) / 64), so that
//                            y_j = 2 + level_j / 64 with level_j = 8 (c s_j - bmax) + 118.5; the code is
//                            floor(level_j), bits 16-22 of y_j, clamped at 0 (lean_p_code),
//                            unscale = exp2((bmax - m) - G)
//         exact P (default at d_qk = 192): the block's largest p becomes exactly 2^H (code 120), so the
//                            dominant weight of a peaked row carries no rounding error, G = H:
//                            code_j = e4m3(exp2(fma(s_j, c, H - bmax))), unscale = exp2((bmax - m) - G)
//         split P (ZYFA_P_ROUNDING_SPLIT, either head dim): exact P's p_j, rounded twice:
//                            hi_j = e4m3(p_j) (exact P's code) and lo_j = e4m3(f16(p_j) - hi_j) (fp8_split_p_lo),
//                            and the block's acc and rs take the hi products first, then the lo ones, in the
//                            same fp32 sums (the kernels: a second P V product into the same accumulator,
//                            whose ones rows of V^T add lo_j to rs); unscale is exact P's
//         acc = sum e4m3_value(code_j) v_j, rs = sum e4m3_value(code_j) (fp32; rs is the denominator of
//         the rounded P)
//         O += unscale acc; l += unscale rs
//   out = bf16(O * output_scale(l, v_descale)),  lse = (m + log2(l)) * ln(2)
#ifndef ZYFA_KERNELS_NUMERICS_H_
#define ZYFA_KERNELS_NUMERICS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#  define ZYFA_HD __host__ __device__ __forceinline__
#else
#  define ZYFA_HD inline
#endif

namespace zyfa::numerics {

// Keys per block of the softmax recurrence: the unit of the block max, the lazy rescale and the FP8 scaling.
constexpr int kKeyBlock = 128;
// Queries per tile of the causal job table (the unit that the plan cache pairs first-with-last).
constexpr int kQueryTile = 128;

// The lazy rescale's thresholds tau, in base-2 units of the score. ZYFA rescales at 0.125 (FP8), 0.5 (BF16,
// d = 128) and 8 (BF16, d_qk = 192). A rescale, 66 FMULs per thread for a whole warp when any of its 16 rows
// needs one, costs in the softmax phase the other warpgroup's products must hide, so tau is as large as the
// rounding of P allows:
// - FP8: 8. P is scaled per block from the block's own max, so tau changes no code, only the unscale, and O and
//   l stay far inside fp32.
// - BF16: 4. P is rounded against the running m, so a block max above m puts the row's heaviest keys at
//   P = 2^(bmax - m), which bf16 rounds, where a fresh m gives the top key P = 1 exactly. On peaked rows that
//   one rounding is the error. zyfa's error over cuDNN's, worst case of gqa-d128 / gqa-d192 / mha-d192 at 4K and
//   16K on Gaussian, outlier and structured inputs (H200, session 27; bench/NOTES.md): 1.114x at tau 8,
//   1.079x at 4, 1.039x at 2 (gqa-d192 16K structured; the host model bench/candidates/bf16-rounding-study.cpp
//   gives the same, 1.065x at 3, 1.076x at 4 at 32K, FA3's 0.99x at 0). Speed at 16K on std-1 inputs against
//   tau 8: 1.00-1.02x Gaussian, 0.94x outlier at tau 4; 0.95x and 0.94x at tau 2; std 0.1 rescales at no tau.
//   So 4, the largest tau under issue 4's 1.1x. P before the block max (below) tests P < 2^(tau - 1) = 8.
// bench/lazy_rescale_study.py counted the warp-blocks that rescale on the benchmark's inputs (S = 4K): none
// at any tau on the speed protocol's std-0.1 Gaussians; at 0.125 / 0.5 / 8, 66-69% / 52-55% / 0% on std-1
// Gaussians, 68-70% / 61-62% / 2-3% on outlier inputs and 22-31% / 19-28% / 1-3% on structured ones; at 2 / 4
// (BF16, session 27), 12-13% / 0.04-0.06%, 38% / 11-14% and 4-13% / 1-7%.
constexpr float kFp8LazyRescaleThreshold = 8.0f;
constexpr float kBf16LazyRescaleThreshold = 4.0f;
ZYFA_HD float lazy_rescale_threshold(bool fp8) { return fp8 ? kFp8LazyRescaleThreshold : kBf16LazyRescaleThreshold; }
// The rule itself: a row's first block, or a block max more than tau above the reference.
ZYFA_HD bool lazy_rescale_due(float m, float bmax, float tau) { return m == -INFINITY || bmax > m + tau; }

// The e4m3 code of 1.0: exponent bias 7, so 7 << 3.
constexpr int kE4m3CodeOfOne = 56;
// Codes per binade of e4m3 (three mantissa bits).
constexpr int kE4m3CodesPerBinade = 8;
// The code of the largest finite e4m3 value (0x7f is NaN).
constexpr int kE4m3MaxFiniteCode = 0x7e;
// Largest finite e4m3 value.
constexpr float kE4m3Max = 448.0f;
// Blocks more than this many binades below the row max contribute nothing representable; clamping the
// exponent of a block's unscale there keeps the unscale a normal float.
constexpr int kMaxBlockShift = 64;
// Headroom of the FP8 per-block scaling, in binades. ZYFA puts each block's largest p next to the code of
// p = 1, which leaves only 6 normal binades below it: smaller probabilities become subnormal codes or
// zero, and in peaked rows whole tails vanish. Hopper folds the scale back with an FFMA, so any scale is
// free: 8 binades more keep 14 normal binades per block and put the top code at 120 (256), below the
// largest finite code 126 (448). Exact P maps the block max to 2^8 exactly, lean P to code 118
// (kLeanPTopCode). Measured: bench/NOTES.md.
constexpr int kFp8HeadroomBinades = 8;
// Lean P's code of the block max. Its value 1 + f follows 2^f only at the ends of a binade (Mitchell's
// approximation: up to 6.1% high inside, 4.07% on average), and the denominators, taken from the same codes,
// cancel only the average. A block max at the top code 120 (f = 0) is therefore weighed 4% low against the
// rest of its row; at code 118 (f = 3/4, 1 + f = 1.0406 x 2^f) it carries the average bias, which cancels,
// and it sits exactly on a code, so the dominant weight of a peaked row is not rounded. Measured on the
// benchmark's inputs (bench/lean_p_study.py --anchors): 0.38x the error of the m-anchored codes on
// structured inputs, 0.81x on std-1 Gaussians, 0.65x on outlier inputs; 117.5 or 119 does worse.
constexpr int kLeanPTopCode = 118;
// Lean P's codes as floats y = 2 + level / 64 in [2, 4): there the float's bits 16-31 read as a signed 16-bit
// integer are 0x4000 + floor(level) (sign 0, exponent 128 with its low bit 0, then the top seven mantissa
// bits), the FFMA rounds the level to 2^-16 of a code, and the offset need not be an integer, so the block
// max can sit exactly on kLeanPTopCode. Every y below 2 (negative levels, a negative y, -inf) reads below
// 0x4000 as that integer, so one max.s16x2 clamps two codes at once after a PRMT has gathered their bits
// 16-31 into one register; the low byte of each half is then the code.
constexpr float kLeanCodeBase = 2.0f;
constexpr int kLeanLevelsPerUnit = 64;     // levels per unit of y in [2, 4): 128 codes over its 2 units
constexpr int kLeanFieldOfCodeZero = 0x4000;  // bits 16-31 of y = 2.0

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// A block max within tau above the reference keeps its unscale, 2^((bmax - m) - G), near or below 1.
static_assert(kFp8LazyRescaleThreshold <= kFp8HeadroomBinades,
              "a block max within tau of the reference must keep the FP8 unscale near or below 1");
// The default P rounding (ZYFA_P_ROUNDING_DEFAULT): lean P (codes from one multiply-add) at d = 128, exact
// P (an exponential) at d_qk = 192, as ZYFA chose (its lean P missed its accuracy test in 1 of 24 cases there). A
// descriptor may ask for the other one at either head dim (Problem::lean_p).
ZYFA_HD bool uses_lean_p(int d_qk) { return d_qk == 128; }

ZYFA_HD uint32_t float_bits(float x) { uint32_t u; std::memcpy(&u, &x, 4); return u; }
ZYFA_HD float bits_float(uint32_t u) { float x; std::memcpy(&x, &u, 4); return x; }

// ---- bfloat16, round to nearest even; NaN stays NaN.
ZYFA_HD uint16_t bf16_bits(float x) {
  uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
ZYFA_HD float bf16_value(uint16_t b) { return bits_float(uint32_t(b) << 16); }
ZYFA_HD float round_bf16(float x) { return bf16_value(bf16_bits(x)); }

// The factor of a row's output, (1 / l) * v_descale (v_descale = 1 for BF16), each step rounded once: one
// reciprocal per row and one multiply per element, where a division per element costs the epilogue about
// ten dependent instructions and a slow path (a tenth of a 2K tile's time in the BF16 kernel).
ZYFA_HD float output_scale(float l, float v_descale) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(__frcp_rn(l), v_descale);
#else
  return (1.0f / l) * v_descale;
#endif
}

// ---- BF16's P before the block max (bf16_attention.cuh): P rounded against the running m first, which is the
// recurrence's P whenever the block keeps m, and the block max looked for only where P could show a rescale.
// The OR of a block's P words bounds the largest of their exponent fields, so `clear` means every P below
// 2^(tau - 1): every c s - m below tau - 1 (up to ex2.approx's error), a binade clear of the rule's
// bmax > m + tau however fp32 rounds c smax, m + tau and the FFMA, while |m| < kBf16ClearReferenceBound.
// NaN and infinite P, and m = -inf, are never clear. `words_or` is the OR of words of two bf16 each.
constexpr uint32_t kBf16ExponentMask = 0x7F80u;
constexpr uint32_t kBf16ExponentOfRescaleBound = uint32_t(127 + int(kBf16LazyRescaleThreshold) - 1) << 7;
constexpr float kBf16ClearReferenceBound = 0x1p22f;
static_assert(kBf16LazyRescaleThreshold == float(int(kBf16LazyRescaleThreshold)) && kBf16LazyRescaleThreshold >= 2,
              "the bound on P before the block max is a whole binade below tau");
// The bound itself, on bits that bound the block's largest P from above (sign and exponent fields at least).
ZYFA_HD bool bf16_top_bits_clear_of_rescale(uint32_t top_bits, float m) {
  return top_bits < kBf16ExponentOfRescaleBound && std::fabs(m) < kBf16ClearReferenceBound;
}
ZYFA_HD bool bf16_p_clear_of_rescale(uint32_t words_or, float m) {
  return bf16_top_bits_clear_of_rescale((words_or | (words_or >> 16)) & kBf16ExponentMask, m);
}
// The same from the largest word instead of the OR, exact at any P: where the OR fails only because it mixes P
// below 1 with P from 2 up (a row's new maximum by a binade or more: the common case of std-1 Gaussian and
// outlier inputs, 0.94-0.98x before this test), the halfwise max of the words still proves the block clear. As
// bits, a non-negative bf16 orders as its value; -NaN's sign bit, +inf and +NaN all fail the bound. `words_max`
// is the halfwise unsigned max of words of two bf16 each (bf16x2_bits_max).
ZYFA_HD uint32_t bf16x2_bits_max(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vmaxu2(a, b);
#else
  const uint32_t lo = std::max(a & 0xFFFFu, b & 0xFFFFu), hi = std::max(a >> 16, b >> 16);
  return lo | (hi << 16);
#endif
}
ZYFA_HD bool bf16_p_max_clear_of_rescale(uint32_t words_max, float m) {
  const uint32_t lo = words_max & 0xFFFFu, hi = words_max >> 16;
  return bf16_top_bits_clear_of_rescale(lo > hi ? lo : hi, m);
}

// ---- float8 e4m3 (OCP "fn": no infinities, 0x7f/0xff are NaN, max 448), round to nearest even,
// saturating to +-448 like cvt.rn.satfinite.e4m3x2.f32.
ZYFA_HD float e4m3_value(uint8_t c) {
  const int sign = c >> 7, e = (c >> 3) & 15, mant = c & 7;
  float v;
  if (e == 15 && mant == 7) v = NAN;
  else if (e == 0) v = std::ldexp(float(mant), -9);
  else v = std::ldexp(float(8 + mant), e - 10);
  return sign ? -v : v;
}
ZYFA_HD uint8_t e4m3_code(float x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  float a = std::fabs(x);
  if (a >= kE4m3Max) return sign | 0x7e;
  // Quantum of a's binade: 2^(e-3) for normals (e >= -6), 2^-9 for subnormals.
  int e;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): the binade is 2^(e-1)
  const int q = (e - 1 < -6) ? -9 : (e - 1) - 3;
  const float n = std::nearbyint(std::ldexp(a, -q));  // exact scaling; nearbyint is RNE in the default mode
  const float r = std::ldexp(n, q);
  if (r >= kE4m3Max) return sign | 0x7e;
  if (r == 0.0f) return sign;
  int re;
  std::frexp(r, &re);
  if (re - 1 < -6) return uint8_t(sign | uint8_t(n));                        // subnormal: code = mantissa
  return uint8_t(sign | ((re - 1 + 7) << 3) | (uint8_t(std::ldexp(r, -(re - 1 - 3))) - 8));
}

// ---- lean P: the e4m3 code of 2^(c s - bmax + G) as one rounded multiply-add. fp8_lean_p_scale(c) is its
// multiplier, c / 8 (exact), and fp8_lean_p_offset the per-row addend, as the GPU forms it (one FFMA):
// 2 + (118.5 - 8 bmax) / 64, so that the block max's score lands at level 118.5 and floors to 118. What can
// move it, for the whole row alike: bmax's rounding (the FFMA's product c smax / 8 is exact, bmax is not: up
// to 4 ulp(bmax) in codes), the offset's (64 half-ulps of it in codes: about as much) and the FFMA's (2^-16
// of a code). At |bmax| = 2^k that is about 2^(k - 20) codes; the top code passes 126 (8.5 codes) only
// around |bmax| = 2^23, far beyond fuzz_attention's kSaneScoreRange (2^16).
ZYFA_HD float fp8_lean_p_scale(float c) { return c * (float(kE4m3CodesPerBinade) / float(kLeanLevelsPerUnit)); }
// The offset's FFMA, offset = fma(bmax, kLeanOffsetPerBmax, kLeanOffsetAtZero); both exact in fp32. The
// emitters write these two constants into the same FFMA.
constexpr float kLeanOffsetPerBmax = -float(kE4m3CodesPerBinade) / float(kLeanLevelsPerUnit);
constexpr float kLeanOffsetAtZero = kLeanCodeBase + (float(kLeanPTopCode) + 0.5f) / float(kLeanLevelsPerUnit);
ZYFA_HD float fp8_lean_p_offset(float bmax) { return std::fma(bmax, kLeanOffsetPerBmax, kLeanOffsetAtZero); }
// The code of score s, exactly as the GPU makes it: y = fma(s, scale, offset); bits 16-31 of y as a signed
// 16-bit integer, max with kLeanFieldOfCodeZero (max.s16x2), then its low byte. A NaN y is the GPU's
// canonical NaN (0x7fffffff), whose field is 0x7fff: code 0xff, an e4m3 NaN, so NaN scores give NaN outputs.
ZYFA_HD int lean_p_code(float s, float scale, float offset) {
  const float y = std::fma(s, scale, offset);
  const uint32_t bits = y != y ? 0x7fffffffu : float_bits(y);
  const int field = int(int16_t(uint16_t(bits >> 16)));
  return (field > kLeanFieldOfCodeZero ? field : kLeanFieldOfCodeZero) & 0xff;
}

// Lazy-rescale reference max for FP8: rounded up to a multiple of 1/kE4m3CodesPerBinade.
ZYFA_HD float fp8_reference_max(float bmax) {
  return std::ceil(bmax * float(kE4m3CodesPerBinade)) / float(kE4m3CodesPerBinade);
}

// ---- binary16, round to nearest even (cvt.rn.f16.f32), overflowing to infinity; NaN stays NaN.
ZYFA_HD float round_f16(float x) {
  if (std::isnan(x) || std::isinf(x)) return x;
  const float a = std::fabs(x);
  int e;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): the binade is 2^(e-1)
  const int q = (e - 1 < -14) ? -24 : (e - 1) - 10;  // quantum: 2^(e-11) for normals, 2^-24 for subnormals
  const float r = std::ldexp(std::nearbyint(std::ldexp(a, -q)), q);
  // 65520 = 65504 + half its quantum: it and above round to infinity (RNE ties go to the even 2^16).
  const float v = r >= 65520.0f ? INFINITY : r;
  return std::signbit(x) ? -v : v;
}

// Split P's low part: the e4m3 value of p's residual after exact P's hi = e4m3(p), as the kernels compute it
// on f16x2 pairs: cvt.rn.f16x2.f32 (p to f16), cvt.rn.f16x2.e4m3x2 (hi, exact in f16), sub.rn.f16x2 and
// cvt.rn.satfinite.e4m3x2.f16x2. The f16 subtraction is exact (hi is within a factor 2 of f16(p), or 0), so
// the residual is f16(p) - hi: p's own residual to within f16's 11 bits, far below lo's e4m3 quantum (the
// f16 route takes four instructions per pair where an f32 one takes six). Rounding f16(p) rather than p
// changes lo's rounding only on near-ties, and both backends do it.
ZYFA_HD float fp8_split_p_lo(float p, float hi) {
  return e4m3_value(e4m3_code(round_f16(round_f16(p) - hi)));
}

// The binade G that a block's max takes: exact P's 2^H, lean P's code kLeanPTopCode.
// Lean P's G is the top code's own value, log2(224) = 7 + log2(1.75), not its place in the binades (7.75): the top
// weight then enters l exactly, and the rest of the row carries Mitchell's factor over 1.0406 (code 118's), which
// averages out; with 7.75, l (and the LSE from it) carried the whole mean factor, 4% (0.04 nats).
constexpr float kLeanPTopBinade = 7.807354922057604f;
ZYFA_HD float fp8_top_binade(bool lean_p) { return lean_p ? kLeanPTopBinade : float(kFp8HeadroomBinades); }
// Exact P: the exponent bias that maps the block max bmax to exactly 2^H.
ZYFA_HD float fp8_exact_p_bias(float bmax) { return float(kFp8HeadroomBinades) - bmax; }
// The log2 of the factor that folds a block whose max (2^G) is bmax back under reference m, clamped so that
// the factor stays a normal float (a block that far below the row max adds nothing representable).
ZYFA_HD float fp8_unscale_log2(float m, float bmax, bool lean_p) {
  const float x = (bmax - m) - fp8_top_binade(lean_p);
  const float lowest = -float(kMaxBlockShift + kFp8HeadroomBinades);
  return x >= lowest ? x : lowest;  // a NaN x gives lowest, as the kernels' max.f32 does
}

}  // namespace zyfa::numerics

#endif  // ZYFA_KERNELS_NUMERICS_H_
