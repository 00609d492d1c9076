// The device side of the bulk tensor copy engine (TMA): tiles from global to shared memory, completing on
// an mbarrier. The tensor map lives in the kernel's parameter space (__grid_constant__), so the copy
// needs no device memory written by the host.
#ifndef ZYFA_KERNELS_HOPPER_TMA_CUH_
#define ZYFA_KERNELS_HOPPER_TMA_CUH_

#include <cuda.h>

#include <cstdint>

#include "kernels/hopper/mbarrier.cuh"

namespace zyfa::hopper {

// L2 eviction priorities for cp.async.bulk's cache hint (the createpolicy encodings CUTLASS documents as
// TMA::CacheHintSm90): tiles read once go first, tiles every CTA of a head re-reads stay.
enum class L2Hint : uint64_t {
  kEvictFirst = 0x12F0000000000000ull,
  kEvictLast = 0x14F0000000000000ull,
};

// Fetches the tensor map into the TMA unit's cache ahead of the first copy.
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap &map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map)) : "memory");
}

// Copies the box at coordinates (c0, c1, c2, c3) of a rank-4 tensor map into shared memory at `dst`,
// signalling the box's bytes on `barrier`. Out-of-bounds elements arrive as zeros.
__device__ __forceinline__ void tma_load_4d(const CUtensorMap &map, void *dst, Mbarrier &barrier, int32_t c0,
                                            int32_t c1, int32_t c2, int32_t c3, L2Hint hint) {
  const uint32_t dst_addr = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;" ::"r"(dst_addr),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(barrier.address()),
      "l"(static_cast<uint64_t>(hint))
      : "memory");
}

}  // namespace zyfa::hopper

#endif  // ZYFA_KERNELS_HOPPER_TMA_CUH_
