// Validation of every field of a zyfa_attn_desc, and its translation into a Problem. Nothing is
// launched or written before this succeeds.
#ifndef ZYFA_HOST_VALIDATE_HPP_
#define ZYFA_HOST_VALIDATE_HPP_

#include "host/problem.hpp"
#include "zyfa/zyfa.h"

namespace zyfa {

enum class PointerCheck {
  kRequired,  // a call that reads and writes the tensors
  kOptional,  // zyfa_attn_prepare: only the shape matters, pointers may be NULL
  kShapeOnly  // zyfa_attn_workspace_size: as kOptional, and the workspace fields are not read
};

// On failure returns a distinct status and records a message naming the field and its value.
zyfa_status validate_attention(const zyfa_attn_desc *desc, PointerCheck pointers, Problem *problem);

}  // namespace zyfa

#endif  // ZYFA_HOST_VALIDATE_HPP_
