// The CPU backend behind zyfa_attn_fwd_host: the GPU kernels' algorithm on host memory, following the
// recurrence of src/kernels/numerics.h key block by key block, with fp32 accumulation. It may differ
// from a GPU kernel only in the order of fp32 sums and in the last ulp of exp2 (see README). FP8's two
// products (S = Q K^T and a block's P V with its row sums) are summed as Hopper's FP8 tensor cores sum them
// (tensor_core_sums.hpp), as the wgmma kernels do, or exactly in fp32, as the mma.sync ones (which widen
// to f16) and the fallback do.
#ifndef ZYFA_REF_CPU_BACKEND_HPP_
#define ZYFA_REF_CPU_BACKEND_HPP_

#include "host/problem.hpp"

namespace zyfa::ref {

enum class Fp8Sums { kTensorCores, kExactFp32 };

// Writes problem.out (BF16) and problem.lse (when set). Inputs are host memory; multi-threaded.
void attention_cpu_backend(const Problem &problem, Fp8Sums fp8_sums = Fp8Sums::kTensorCores);

}  // namespace zyfa::ref

#endif  // ZYFA_REF_CPU_BACKEND_HPP_
