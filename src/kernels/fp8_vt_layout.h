// V^T as the FP8 wgmma kernel's P V product reads it, written once per call into the caller's workspace
// (zyfa_attn_desc.workspace) by fp8_vt_prepass.cu, so that the kernel's producer copies each block by TMA
// instead of transposing it (src/asmgen/fp8_wgmma_producer.cpp).
//
// The workspace is one V^T per (batch, kv head): kVtDims rows (one per dimension of V) of `padded_keys`
// bytes, the keys of each 16 in the order of P's registers (src/asmgen/fp8_vt_transpose.hpp): position
// 4t + j of every 16 holds key 8 (j / 2) + 2t + j % 2. Keys from seqlen up to the next whole key block
// are zeros: TMA's out-of-bounds fill cannot stand in for them, since the order mixes keys within a group,
// and P's zero codes times stale bytes could be NaN.
#ifndef ZYFA_KERNELS_FP8_VT_LAYOUT_H_
#define ZYFA_KERNELS_FP8_VT_LAYOUT_H_

#include <cstdint>

#include "kernels/numerics.h"

namespace zyfa::fp8_vt {

constexpr int kVtDims = 128;  // d_v
constexpr int kKeyGroup = 16;

// The key stored at `position` of its group of 16.
ZYFA_HD constexpr int key_at(int position) {
  const int t = position / 4, j = position % 4;
  return 8 * (j / 2) + 2 * t + j % 2;
}

// Keys per V^T row: seqlen rounded up to whole key blocks.
ZYFA_HD constexpr int64_t padded_keys(int64_t seqlen) {
  return (seqlen + numerics::kKeyBlock - 1) / numerics::kKeyBlock * numerics::kKeyBlock;
}

// Bytes of the workspace for (batch, nheads_k, seqlen); element (b, h, dim, position) at
// ((b * nheads_k + h) * kVtDims + dim) * padded_keys + position.
ZYFA_HD constexpr int64_t workspace_bytes(int64_t batch, int64_t nheads_k, int64_t seqlen) {
  return batch * nheads_k * kVtDims * padded_keys(seqlen);
}

}  // namespace zyfa::fp8_vt

#endif  // ZYFA_KERNELS_FP8_VT_LAYOUT_H_
