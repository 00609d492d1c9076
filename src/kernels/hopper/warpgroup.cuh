// Warpgroups (4 consecutive warps, the unit of wgmma) and what they coordinate with: register budgets
// moved between them with setmaxnreg, and named barriers for ordering among some of the CTA's threads.
#ifndef ZYFA_KERNELS_HOPPER_WARPGROUP_CUH_
#define ZYFA_KERNELS_HOPPER_WARPGROUP_CUH_

#include <cstdint>

namespace zyfa::hopper {

constexpr int kWarpSize = 32;
constexpr int kWarpsPerWarpgroup = 4;
constexpr int kWarpgroupThreads = kWarpSize * kWarpsPerWarpgroup;

// Registers per thread that setmaxnreg may set: a multiple of 8 in [24, 256].
constexpr bool valid_register_budget(int registers) {
  return registers >= 24 && registers <= 256 && registers % 8 == 0;
}

// setmaxnreg takes effect only when every warp of the warpgroup runs it and the kernel has a register cap
// at entry (__launch_bounds__(threads, 1)); otherwise ptxas ignores it and warns (C7508).
template <int kRegisters>
__device__ __forceinline__ void shrink_registers_to() {
  static_assert(valid_register_budget(kRegisters), "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void grow_registers_to() {
  static_assert(valid_register_budget(kRegisters), "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegisters));
}

// A hardware named barrier among `threads` threads (a multiple of the warp size). Id 0 is __syncthreads'.
struct NamedBarrier {
  uint32_t id;
  uint32_t threads;
  __device__ void sync() const { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory"); }
  __device__ void arrive() const { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory"); }
};

// Broadcast from lane 0, so that the compiler knows it is warp-uniform: what derives from it (the Q
// descriptor, the turn barriers' ids) then lives in uniform registers instead of being moved there (R2UR)
// before every wgmma. The whole warp must call it.
__device__ __forceinline__ int warpgroup_index() {
  return __shfl_sync(0xffffffffu, int(threadIdx.x) / kWarpgroupThreads, 0);
}
__device__ __forceinline__ int thread_in_warpgroup() { return int(threadIdx.x) % kWarpgroupThreads; }

}  // namespace zyfa::hopper

#endif  // ZYFA_KERNELS_HOPPER_WARPGROUP_CUH_
