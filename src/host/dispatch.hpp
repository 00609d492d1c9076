// Chooses the kernel for a validated problem and launches it over its plan.
#ifndef ZYFA_HOST_DISPATCH_HPP_
#define ZYFA_HOST_DISPATCH_HPP_

#include "host/problem.hpp"
#include "zyfa/zyfa.h"

namespace zyfa {

// The plan for `problem` on the current device: built (unless the stream is capturing) and uploaded.
// With `launch` false this is zyfa_attn_prepare; with true, the kernel runs on `stream`. Split P that only a
// kernel rounding P once would take is refused first (check_split_p), before any device is looked for.
zyfa_status run_attention(const Problem &problem, void *stream, bool launch);

// Split P (ZYFA_P_ROUNDING_SPLIT) runs on the TMA/wgmma kernels only: BAD_ARGUMENT naming p_rounding and
// the field that keeps them from `problem` when only a kernel that rounds P once would take it; SUCCESS
// otherwise. The decision run_attention makes first, without a GPU.
zyfa_status check_split_p(const Problem &problem);

}  // namespace zyfa

#endif  // ZYFA_HOST_DISPATCH_HPP_
