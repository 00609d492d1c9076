// The CPU backend behind zyfa_attn_fwd_host: the GPU kernels' algorithm on host memory, following the
// recurrence of src/kernels/numerics.h key block by key block, with fp32 accumulation. It may differ
// from a GPU kernel only in the order of fp32 sums and in the last ulp of exp2 (see README).
#ifndef ZYFA_REF_CPU_BACKEND_HPP_
#define ZYFA_REF_CPU_BACKEND_HPP_

#include "host/problem.hpp"

namespace zyfa::ref {

// Writes problem.out (BF16) and problem.lse (when set). Inputs are host memory; multi-threaded.
void attention_cpu_backend(const Problem &problem);

}  // namespace zyfa::ref

#endif  // ZYFA_REF_CPU_BACKEND_HPP_
