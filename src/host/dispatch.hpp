// Chooses the kernel for a validated problem and launches it over its plan.
#ifndef ZYFA_HOST_DISPATCH_HPP_
#define ZYFA_HOST_DISPATCH_HPP_

#include "host/problem.hpp"
#include "zyfa/zyfa.h"

namespace zyfa {

// The plan for `problem` on the current device: built (unless the stream is capturing) and uploaded.
// With `launch` false this is zyfa_attn_prepare; with true, the kernel runs on `stream`.
zyfa_status run_attention(const Problem &problem, void *stream, bool launch);

}  // namespace zyfa

#endif  // ZYFA_HOST_DISPATCH_HPP_
