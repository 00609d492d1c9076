// On the device: does a warpgroup held at wgmma issue (the wgmma queue full, tools/device/wgmma_issue_probe.cu)
// slow another warpgroup's arithmetic on the same SM sub-partitions? The BF16 key loop's timeline (bench/NOTES.md,
// session 24) has consumer 0's softmax at 1534 cycles and consumer 1's at 1204 for the same work, and the tile's
// store at about one instruction per six cycles; the softmax that overlaps the other warpgroup's held issue is the
// slow one. Here warpgroup 1 runs a softmax's instructions (a row max, 64 FFMA + EX2, 32 bf16x2 conversions) while
// warpgroup 0 does one of: nothing, the same softmax, 24 products issued back to back (held at issue for most of
// the time), or 8 products issued and then waited for (held at the wait, not at issue).
// Build (here): nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -I src -o issue_interference_probe
//               tools/device/issue_interference_probe.cu
// Run (device): ./issue_interference_probe
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "kernels/hopper/warpgroup.cuh"
#include "kernels/hopper/wgmma.cuh"
#include "probe_timing.cuh"

namespace hw = zyfa::hopper;
namespace timing = zyfa::probe;

namespace {

using timing::clock;
using timing::kRepeats;
using timing::median;
constexpr int kSmemBytes = 48 * 1024;  // A (16 KiB) and B (32 KiB) of the SS products, zeros
constexpr int kScores = hw::kAccumulatorsN128;

// What warpgroup 0 does while warpgroup 1 runs the softmax.
enum class Other : int { kIdle, kSoftmax, kHeldAtIssue, kHeldAtWait };
const char *name(Other o) {
  switch (o) {
    case Other::kIdle: return "nothing (at the barrier)";
    case Other::kSoftmax: return "the same softmax";
    case Other::kHeldAtIssue: return "24 SS products, issued";
    case Other::kHeldAtWait: return "8 SS products, then wait";
  }
  return "?";
}

struct Stamps {
  long long softmax[kRepeats], other[kRepeats];
};

// A softmax over one thread's 64 scores of an m64n128 accumulator, as the BF16 kernel's: the row maxima (two rows
// of 32 values, across the quad), 64 FFMA + EX2 in place, 32 bf16x2 conversions. Returns the packed words' xor.
__device__ __forceinline__ uint32_t softmax(float (&x)[kScores]) {
  float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int i = 0; i < kScores; ++i) mx[(i / 2) % 2] = fmaxf(mx[(i / 2) % 2], x[i]);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
  }
#pragma unroll
  for (int i = 0; i < kScores; ++i) {
    const float arg = __fmaf_rn(x[i], 0.125f, -mx[(i / 2) % 2]);
    asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(x[i]) : "f"(arg));
  }
  uint32_t words = 0;
#pragma unroll
  for (int i = 0; i < kScores; i += 2) {
    uint32_t w;
    asm volatile("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(x[i + 1]), "f"(x[i]));
    words ^= w;
  }
  return words;
}

template <Other kOther>
__global__ void __launch_bounds__(256) probe(Stamps *stamps) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = timing::zero_operands(smem, kSmemBytes);
  const uint64_t a_desc = hw::make_smem_descriptor(base, hw::kDescriptorUnit, hw::kSwizzleAtomBytes);
  const uint64_t b_desc = hw::make_smem_descriptor(base + 16384, hw::kDescriptorUnit, hw::kSwizzleAtomBytes);
  const int role = hw::warpgroup_index();
  float s[kScores];
  float x[kScores];
  uint32_t sink = 0;
  for (int i = 0; i < kScores; ++i) s[i] = 0.0f;
  for (int r = 0; r < kRepeats; ++r) {
    for (int i = 0; i < kScores; ++i) x[i] = -float(i + int(threadIdx.x) + r) / 64.0f;  // not foldable
    __syncthreads();
    const long long t0 = clock();
    if (role == 1 || kOther == Other::kSoftmax) {
      sink ^= softmax(x);
    } else if constexpr (kOther == Other::kHeldAtIssue || kOther == Other::kHeldAtWait) {
      constexpr int kProducts = kOther == Other::kHeldAtIssue ? 24 : 8;
      hw::pin_registers(s);
      hw::wgmma_fence();
#pragma unroll
      for (int k = 0; k < kProducts; ++k)
        hw::wgmma_m64n128k16_ss<true>(s, hw::advance_descriptor(a_desc, 32 * (k % 8)),
                                      hw::advance_descriptor(b_desc, 32 * (k % 8)));
      hw::wgmma_commit();
      hw::wgmma_wait<0>();
      hw::pin_registers(s);
    }
    const long long t1 = clock();
    if (threadIdx.x % hw::kWarpgroupThreads == 0) (role == 1 ? stamps->softmax : stamps->other)[r] = t1 - t0;
  }
  if ((sink ^ __float_as_uint(s[0])) == 1u) stamps->softmax[0] = -1;  // keeps both live
}

template <Other kOther>
bool run(Stamps *dev) {
  Stamps host;
  if (!timing::run_once(probe<kOther>, 2 * hw::kWarpgroupThreads, kSmemBytes, dev, &host)) return false;
  std::printf("| %-26s | %6lld | %6lld |\n", name(kOther), median(host.softmax), median(host.other));
  return true;
}

}  // namespace

int main() {
  Stamps *dev = nullptr;
  if (cudaMalloc(&dev, sizeof(Stamps)) != cudaSuccess) return 1;
  std::printf("| warpgroup 0 meanwhile | softmax of warpgroup 1, cycles | warpgroup 0, cycles |\n");
  std::printf("| --- | ---: | ---: |\n");
  const bool ok = run<Other::kIdle>(dev) && run<Other::kSoftmax>(dev) && run<Other::kHeldAtIssue>(dev) &&
                  run<Other::kHeldAtWait>(dev);
  cudaFree(dev);
  return ok ? 0 : 1;
}
