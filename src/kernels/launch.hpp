// Host-callable launchers of the CUDA kernels. Plain C++ (no CUDA types), so src/host can include it
// without nvcc. Each returns a cudaError_t value (0 = cudaSuccess) and never synchronizes.
#ifndef ZYFA_KERNELS_LAUNCH_HPP_
#define ZYFA_KERNELS_LAUNCH_HPP_

#include <cstdint>

#include "host/problem.hpp"
#include "kernels/job.h"

namespace zyfa::kernels {

// What a persistent kernel needs from the plan: the job table in device memory and the grid to walk it.
struct Schedule {
  const Job *jobs = nullptr;  // device memory
  int32_t n_jobs = 0;
  int32_t grid = 0;           // walkers (CTAs, or clusters of heads_per_job CTAs); each walks jobs w, w + grid, ...
  int32_t heads_per_job = 1;  // query heads of one kv head per job, one CTA each (a cluster when > 1)
};

// The general kernel: every configuration the descriptor can express, the zyfa numerics of
// src/kernels/numerics.h, mma.sync. `stream` is a cudaStream_t.
int launch_fallback_attention(const Problem &problem, const Schedule &schedule, void *stream);
// Loads the kernel that would run `problem` (CUDA loads a runtime kernel lazily, at its first launch or
// attribute call), so that zyfa_attn_prepare does it rather than a captured first call.
int prepare_fallback_attention(const Problem &problem);

// CTAs per SM the fallback kernel is built for (the plan sizes the grid with it).
int fallback_ctas_per_sm();

// The BF16 Hopper kernel (wgmma, TMA, warp specialization): BF16 inputs, d_qk 128 or 192 with d_v 128,
// tensors TMA can map (16-byte granular strides below 2^40 bytes) and outputs whose rows start on 16 bytes.
// `supports` says whether it takes a problem.
bool bf16_attention_supports(const Problem &problem);
int bf16_attention_ctas_per_sm();
// Query heads of one kv head per job the kernel prefers: 2 (the CTAs of a cluster, sharing each K and V copy)
// where the group is even, else 1. A launch takes that or 1 (Schedule::heads_per_job, from the plan).
int bf16_attention_heads_per_job(const Problem &problem);
// How many clusters of `heads_per_job` CTAs of the kernel that runs `problem` the current context can hold at
// once (cudaOccupancyMaxActiveClusters), into *clusters. 0 where its SMs cannot hold one, as in an MPS or
// green-context partition: a launch with that cluster shape would fail, so the plan takes one head per job.
int bf16_attention_max_active_clusters(const Problem &problem, int heads_per_job, int *clusters);
int launch_bf16_attention(const Problem &problem, const Schedule &schedule, void *stream);
// Loads the kernels that could run `problem` (paired and unpaired heads), as prepare_fallback_attention does.
int prepare_bf16_attention(const Problem &problem);

// The FP8 wgmma kernel's V^T (src/kernels/fp8_vt_layout.h) written from problem.v into `workspace` (device
// memory of fp8_vt::workspace_bytes), in stream order before the attention kernel that reads it. V must be
// what that kernel maps: 16-byte aligned rows.
int launch_fp8_vt_prepass(const Problem &problem, void *workspace, void *stream);
// Loads the pre-pass kernel in the current context (see prepare_fallback_attention).
int prepare_fp8_vt_prepass();

// zyfa_quantize_fp8 on the GPU: validated arguments (row_stride resolved), device pointers. Needs no
// scratch: the amax is reduced into *desc.descale, then turned into the descale in place, in stream order.
int launch_quantize_fp8(const zyfa_quantize_desc &desc, int64_t row_stride, void *stream);

}  // namespace zyfa::kernels

#endif  // ZYFA_KERNELS_LAUNCH_HPP_
