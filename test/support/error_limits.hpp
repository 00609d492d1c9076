// The limits of a backend's error against the fp64 oracle on std-1 Gaussian and LLM-like inputs, per dtype
// and P rounding: the CPU backend's tests and the emitter's interpreted kernels (which run the same
// recurrence) are held to them. The GPU tests hold kernels to the CPU backend more sharply (backend_ratio.hpp).
#ifndef ZYFA_TEST_SUPPORT_ERROR_LIMITS_HPP_
#define ZYFA_TEST_SUPPORT_ERROR_LIMITS_HPP_

#include "support/backend_ratio.hpp"
#include "support/host_attention.hpp"
#include "zyfa/zyfa.h"

namespace zyfa::test {

// Relative RMS error against fp64 on the same quantized inputs. BF16 and FP8 exact P get the acceptance
// limits of issue 2. Lean P reads each code as 2^floor(x) (1 + frac(x)), which overestimates 2^x by up to
// 6.1% (Mitchell's approximation) on top of e4m3's rounding: with the headroom of numerics.h it measures
// 1.95-2.09e-2 at S = 128-300 and 2.16e-2 at S = 1000 on the CPU backend's cases (exact P at d_qk = 192:
// 1.57-1.86e-2; session 37), close to issue 2's 2.5e-2, which earlier headroom choices crossed (2.4-2.8e-2,
// bench/NOTES.md). The lean limit keeps a margin over both.
constexpr double kMaxRelRmsBf16 = 3e-3;
constexpr double kMaxRelRmsFp8ExactP = 2.5e-2;
constexpr double kMaxRelRmsFp8LeanP = 3.0e-2;
// Split P (hi + lo within 2^-8 of P) measures 1.4-1.74e-3 relative RMS and at most 2.2e-3 nats of LSE: the
// limits are those with a margin, far under exact P's, so a split request that ran exact P (or an LSE summed
// from P_hi alone, off by about 2e-2) fails.
constexpr double kMaxRelRmsFp8SplitP = 5e-3;
constexpr double kMaxLseErrFp8SplitP = 5e-3;
// LSE error (nats, max abs). BF16 P is within 2^-9 of exp2, so ln(1 + 2^-9) = 1.95e-3 bounds the sum's
// error; an e4m3 P within 2^-4 gives ln(1 + 2^-4) = 0.061. A lean code's value lies within 2^(+-1/16) of the
// Mitchell estimate, which is 1 to 1.0615 times 2^x, so ln of the sum is off by -0.043 to +0.102 (the
// headroom keeps small P from vanishing; without it rows lost 0.14). A wrong recurrence shows as order 1.
constexpr double kMaxLseErrBf16 = 2.5e-3;
constexpr double kMaxLseErrFp8ExactP = 0.065;
constexpr double kMaxLseErrFp8LeanP = 0.105;

inline double max_rel_rms(const AttentionShape &s) {
  if (!s.fp8()) return kMaxRelRmsBf16;
  if (s.p_rounding == ZYFA_P_ROUNDING_SPLIT) return kMaxRelRmsFp8SplitP;
  return s.lean_p() ? kMaxRelRmsFp8LeanP : kMaxRelRmsFp8ExactP;
}

inline double max_lse_err(const AttentionShape &s) {
  if (!s.fp8()) return kMaxLseErrBf16;
  if (s.p_rounding == ZYFA_P_ROUNDING_SPLIT) return kMaxLseErrFp8SplitP;
  return s.lean_p() ? kMaxLseErrFp8LeanP : kMaxLseErrFp8ExactP;
}

// A GPU kernel's limits against fp64: the CPU backend's for the shape, widened by the kMaxBackendRatio a
// kernel may differ from it (backend_ratio.hpp). FP8: lean P 3.6e-2 and 0.126 nats, exact P 3.0e-2 and 0.078,
// split P 6e-3 and 6e-3.
inline double max_rel_rms_gpu(const AttentionShape &s) { return (1 + kMaxBackendRatio) * max_rel_rms(s); }
inline double max_lse_err_gpu(const AttentionShape &s) { return (1 + kMaxBackendRatio) * max_lse_err(s); }

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_ERROR_LIMITS_HPP_
