// Exact attention in fp64: the oracle of every test and of the zyfa command. It reads the problem's
// inputs as stored (BF16, or FP8 codes times their descales), so its answer is the exact attention of
// the quantized inputs and an error against it counts only what a kernel adds.
#ifndef ZYFA_REF_REFERENCE_HPP_
#define ZYFA_REF_REFERENCE_HPP_

#include <vector>

#include "host/problem.hpp"

namespace zyfa::ref {

struct ReferenceResult {
  std::vector<double> out;  // (batch, seqlen, nheads, d_v), contiguous
  std::vector<double> lse;  // (batch, nheads, seqlen), natural log
};

// `problem` points at host memory. Multi-threaded over (batch, head).
ReferenceResult attention_fp64(const Problem &problem);

// Reads one input element as a double (BF16, or the FP8 code times the descale of its (batch, kv head)).
double input_value(const Problem &problem, const TensorRef &t, const Descale &descale, int64_t b,
                   int64_t s, int64_t h, int64_t kv_head, int64_t d);

}  // namespace zyfa::ref

#endif  // ZYFA_REF_REFERENCE_HPP_
