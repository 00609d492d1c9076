// Thread block clusters: CTAs launched together on one GPC that can reach each other's shared memory. The
// BF16 kernel pairs two CTAs whose query heads read the same kv head, so that one L2 read of each K and V
// tile lands in both (TMA multicast), and each CTA's consumers hand a buffer back to both producers.
#ifndef ZYFA_KERNELS_HOPPER_CLUSTER_CUH_
#define ZYFA_KERNELS_HOPPER_CLUSTER_CUH_

#include <cuda.h>

#include <cstdint>

#include "kernels/hopper/mbarrier.cuh"
#include "kernels/hopper/tma.cuh"

namespace zyfa::hopper {

// This CTA's rank in its cluster (0 for a launch without clusters).
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster arrives and waits: shared-memory writes and barrier inits before
// it are visible cluster-wide after it (release / acquire).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// One arrival on the barrier at the same shared-memory offset as `barrier` in the cluster's CTA `rank`, with
// mbarrier.arrive's default semantics (one SYNCS.ARRIVE.TRANS64.RED). A `.release.cluster` arrive here, on the
// consumers' path after every S wait, made the paired BF16 kernel 16% slower (bench/NOTES.md, session 20).
__device__ __forceinline__ void arrive_on_rank(const Mbarrier &barrier, uint32_t rank) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(barrier.address()),
      "r"(rank)
      : "memory");
}

// tma_load_4d's box written to the same shared-memory offset in every CTA of `cta_mask` (bit i: rank i),
// its bytes signalled on the barrier at `barrier`'s offset in each of them.
__device__ __forceinline__ void tma_load_4d_multicast(const CUtensorMap &map, void *dst, Mbarrier &barrier,
                                                      int32_t c0, int32_t c1, int32_t c2, int32_t c3,
                                                      uint16_t cta_mask, L2Hint hint) {
  const uint32_t dst_addr = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      ".L2::cache_hint [%0], [%1, {%2, %3, %4, %5}], [%6], %7, %8;" ::"r"(dst_addr),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(barrier.address()),
      "h"(cta_mask), "l"(static_cast<uint64_t>(hint))
      : "memory");
}

}  // namespace zyfa::hopper

#endif  // ZYFA_KERNELS_HOPPER_CLUSTER_CUH_
