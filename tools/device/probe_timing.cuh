// What the wgmma timing probes of tools/device share: the SM clock read, the zeroed operands in shared memory, the
// launch of one CTA with its stamps copied back, and the median of a probe's repeats with the first ones (warm-up)
// left out.
#ifndef ZYFA_TOOLS_DEVICE_PROBE_TIMING_CUH_
#define ZYFA_TOOLS_DEVICE_PROBE_TIMING_CUH_

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "kernels/hopper/wgmma.cuh"

namespace zyfa::probe {

constexpr int kRepeats = 24, kSkipped = 8;

__device__ __forceinline__ long long clock() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

// Zeros `bytes` of the CTA's shared memory for the products' operands (zeros keep the tensor cores' power, and
// so the clock, the same in every case) and hands them to the async proxy that wgmma reads through.
// Returns the shared-memory address of `smem`.
__device__ __forceinline__ uint32_t zero_operands(unsigned char *smem, int bytes) {
  for (int i = int(threadIdx.x); i < bytes / 4; i += int(blockDim.x)) reinterpret_cast<uint32_t *>(smem)[i] = 0;
  zyfa::hopper::fence_shared_to_async_proxy();
  __syncthreads();
  return uint32_t(__cvta_generic_to_shared(smem));
}

inline long long median(const long long *v) {
  std::vector<long long> x(v + kSkipped, v + kRepeats);
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

// True if `e` is cudaSuccess; else prints what failed and why.
inline bool cuda_ok(cudaError_t e, const char *what) {
  if (e != cudaSuccess) std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

// One CTA of `threads` threads with `smem_bytes` of dynamic shared memory runs `kernel(dev)`; its stamps are then
// copied into *host. False (and the CUDA error printed) if any step fails.
template <class Stamps>
bool run_once(void (*kernel)(Stamps *), int threads, int smem_bytes, Stamps *dev, Stamps *host) {
  if (!cuda_ok(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes),
               "cudaFuncSetAttribute"))
    return false;
  kernel<<<1, threads, smem_bytes>>>(dev);
  return cuda_ok(cudaGetLastError(), "launch") && cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize") &&
         cuda_ok(cudaMemcpy(host, dev, sizeof(Stamps), cudaMemcpyDeviceToHost), "cudaMemcpy");
}

}  // namespace zyfa::probe

#endif  // ZYFA_TOOLS_DEVICE_PROBE_TIMING_CUH_
