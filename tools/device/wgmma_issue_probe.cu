// On the device: how long a warpgroup is held issuing wgmma, against how long the products run, for the
// bf16 products of the BF16 kernel: m64n128k16 with A from shared memory (SS, as S = Q K^T) or from registers
// (RS, as O += P V), the n8 product of P x ones, and n136 (both in one). The key loop's timeline (bench/NOTES.md,
// session 13) found a turn's 24 wgmma taking as long to issue as to run, which keeps a warpgroup from starting its
// softmax while its own products run; this says what holds the issuing warp (the operand form, fences, the
// number of products queued, a second warpgroup's products) and what each costs the tensor pipe.
// Results of session 23 (H200): bench/NOTES.md.
// Each case: one or two warpgroups issue the same products at once; thread 0 reads %clock64 before the first
// wgmma, after the commit and after the wait; medians over the repeats, the first ones left out.
// Build (here): nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -I src -o wgmma_issue_probe
//               tools/device/wgmma_issue_probe.cu
// Run (device): ./wgmma_issue_probe
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "kernels/hopper/wgmma.cuh"
#include "probe_timing.cuh"

namespace hw = zyfa::hopper;
namespace timing = zyfa::probe;

namespace {

using timing::clock;
using timing::kRepeats;
using timing::median;
constexpr int kSteps = 8;  // k-steps of one product: 8 x 16 = 128 (S at d = 128, or P V over 128 keys)
constexpr int kSmemBytes = 96 * 1024;  // A, B, and an MN-major B of three 64-column blocks (n136)

enum class Case : int { kSs, kRs, kSsThenRs, kRsThenSs, kSsTwice, kSsFenced, kRsFenced, kRsWoven, kExpOnly, kPvPairs, kPvFused, kTurnPairs, kTurnFused };
const char *name(Case c) {
  switch (c) {
    case Case::kSs: return "8 SS";
    case Case::kRs: return "8 RS";
    case Case::kSsThenRs: return "8 SS, then 8 RS (a turn)";
    case Case::kRsThenSs: return "8 RS, then 8 SS";
    case Case::kSsTwice: return "16 SS";
    case Case::kSsFenced: return "8 SS, a fence before each";
    case Case::kRsFenced: return "8 RS, a fence before each";
    case Case::kRsWoven: return "8 RS woven among 64 EX2";
    case Case::kExpOnly: return "64 EX2, no product";
    case Case::kPvPairs: return "8 x (RS n128 + RS n8)";
    case Case::kPvFused: return "8 RS n136";
    case Case::kTurnPairs: return "8 SS, 8 x (RS n128 + RS n8)";
    case Case::kTurnFused: return "8 SS, 8 RS n136";
  }
  return "?";
}

struct Stamps {
  long long issued[kRepeats], done[kRepeats];
};

template <Case kCase>
__global__ void __launch_bounds__(256) probe(Stamps *stamps) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = timing::zero_operands(smem, kSmemBytes);
  const uint64_t a_desc = hw::make_smem_descriptor(base, hw::kDescriptorUnit, hw::kSwizzleAtomBytes);
  const uint64_t b_desc = hw::make_smem_descriptor(base + 16384, hw::kDescriptorUnit, hw::kSwizzleAtomBytes);
  const uint64_t v_desc = hw::make_smem_descriptor(base + 32768, 128 * hw::kSwizzleBytes, hw::kSwizzleAtomBytes);
  float s[hw::kAccumulatorsN128], o[hw::kAccumulatorsN128], l[hw::kAccumulatorsN8] = {};
  uint32_t p[kSteps][hw::kRegistersA];
  float x[hw::kAccumulatorsN128];  // a softmax's scores: the exponentials' operands and results
  for (int i = 0; i < hw::kAccumulatorsN128; ++i) s[i] = o[i] = 0.0f;
  for (int i = 0; i < hw::kAccumulatorsN128; ++i) x[i] = -float(i + int(threadIdx.x)) / 64.0f;  // not foldable
  auto exponentials = [&](int first, int count) {
#pragma unroll
    for (int i = first; i < first + count; ++i) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x[i]));
  };
  for (int k = 0; k < kSteps; ++k)
    for (int j = 0; j < hw::kRegistersA; ++j) p[k][j] = 0x3F803F80u;
  // `fenced`: a wgmma.fence (WARPGROUP.ARRIVE) before every product, which ptxas injects itself (C7519) when
  // other instructions sit between products, as in a weave of P V steps among the softmax (session 15).
  auto issue_ss = [&](bool fenced = false) {
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      if (fenced) hw::wgmma_fence();
      hw::wgmma_m64n128k16_ss<true>(s, hw::advance_descriptor(a_desc, 32 * k), hw::advance_descriptor(b_desc, 32 * k));
    }
  };
  auto issue_rs = [&](bool fenced = false) {
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      if (fenced) hw::wgmma_fence();
      hw::wgmma_m64n128k16_rs_transposed_b(o, p[k], hw::advance_descriptor(v_desc, uint32_t(16 * k) * hw::kSwizzleBytes));
    }
  };
  for (int r = 0; r < kRepeats; ++r) {
    // Every warpgroup of the CTA issues the same products at the same moment (one path for all: a branch on the
    // warpgroup makes ptxas serialize every wgmma, C7520).
    __syncthreads();
    hw::pin_registers(s);
    hw::pin_registers(o);
    hw::pin_registers(l);
    hw::wgmma_fence();
    const long long t0 = clock();
    if constexpr (kCase == Case::kSs) {
      issue_ss();
    } else if constexpr (kCase == Case::kRs) {
      issue_rs();
    } else if constexpr (kCase == Case::kSsThenRs) {
      issue_ss();
      issue_rs();
    } else if constexpr (kCase == Case::kRsThenSs) {
      issue_rs();
      issue_ss();
    } else if constexpr (kCase == Case::kSsTwice) {
      issue_ss();
      issue_ss();
    } else if constexpr (kCase == Case::kSsFenced) {
      issue_ss(true);
    } else if constexpr (kCase == Case::kRsFenced) {
      issue_rs(true);
    } else if constexpr (kCase == Case::kRsWoven) {
#pragma unroll
      for (int k = 0; k < kSteps; ++k) {
        exponentials(8 * k, 8);
        hw::wgmma_fence();
        hw::wgmma_m64n128k16_rs_transposed_b(o, p[k], hw::advance_descriptor(v_desc, uint32_t(16 * k) * hw::kSwizzleBytes));
      }
    } else if constexpr (kCase == Case::kExpOnly) {
      exponentials(0, 64);
    } else {
      if constexpr (kCase == Case::kTurnPairs || kCase == Case::kTurnFused) issue_ss();
      constexpr bool kFused = kCase == Case::kPvFused || kCase == Case::kTurnFused;
#pragma unroll
      for (int k = 0; k < kSteps; ++k) {
        const uint64_t v_k = hw::advance_descriptor(v_desc, uint32_t(16 * k) * hw::kSwizzleBytes);
        if constexpr (kFused) {
          hw::wgmma_m64n136k16_rs_transposed_b(o, l, p[k], v_k);
        } else {
          hw::wgmma_m64n128k16_rs_transposed_b(o, p[k], v_k);
          hw::wgmma_m64n8k16_rs_transposed_b(l, p[k], v_k);
        }
      }
    }
    hw::wgmma_commit();
    const long long t1 = clock();
    hw::wgmma_wait<0>();
    hw::pin_registers(s);
    hw::pin_registers(o);
    hw::pin_registers(l);
    const long long t2 = clock();
    if (threadIdx.x == 0) {
      stamps->issued[r] = t1 - t0;
      stamps->done[r] = t2 - t0;
    }
  }
  // Keep the products live.
  float live = s[0] + o[0] + l[0];
  for (int i = 0; i < hw::kAccumulatorsN128; ++i) live += x[i];  // else ptxas drops the exponentials
  if (live == 1.0f) stamps->issued[0] = -1;
}

template <Case kCase>
bool run(Stamps *dev, int busy) {
  Stamps host;
  if (!timing::run_once(probe<kCase>, 128 * (1 + busy), kSmemBytes, dev, &host)) return false;
  std::printf("| %-26s | %d | %6lld | %6lld |\n", name(kCase), 1 + busy, median(host.issued), median(host.done));
  return true;
}

}  // namespace

int main() {
  Stamps *dev = nullptr;
  if (cudaMalloc(&dev, sizeof(Stamps)) != cudaSuccess) return 1;
  std::printf("| each warpgroup issues | warpgroups | cycles to issue | cycles to done |\n");
  std::printf("| --- | ---: | ---: | ---: |\n");
  bool ok = true;
  for (int busy = 0; busy <= 1 && ok; ++busy) {
    ok = ok && run<Case::kSs>(dev, busy) && run<Case::kRs>(dev, busy) && run<Case::kSsThenRs>(dev, busy) &&
         run<Case::kRsThenSs>(dev, busy) && run<Case::kSsTwice>(dev, busy) && run<Case::kSsFenced>(dev, busy) &&
         run<Case::kRsFenced>(dev, busy) && run<Case::kRsWoven>(dev, busy) && run<Case::kExpOnly>(dev, busy) &&
         run<Case::kPvPairs>(dev, busy) && run<Case::kPvFused>(dev, busy) && run<Case::kTurnPairs>(dev, busy) &&
         run<Case::kTurnFused>(dev, busy);
  }
  cudaFree(dev);
  return ok ? 0 : 1;
}
