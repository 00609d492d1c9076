// On the device: records what the FP8 tensor cores return for D = A B^T + C with e4m3 inputs and fp32
// accumulators (wgmma m64n8k32, A and B K-major in shared memory, the QGMMA of the attention kernels), so
// that the host can test models of their sums against bit-exact data (src/ref/tensor_core_sums.hpp).
// Each case is 1 or 4 chained k-steps (k = 32 or 128) on inputs of one of several kinds; the file holds the
// inputs and the output bits of every run mode (below), in that order.
// Build (here): nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -o qgmma_probe qgmma_probe.cu
// Run (device): ./qgmma_probe OUT_FILE [CASES]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <vector>

namespace {

constexpr int kM = 64, kN = 8, kK = 32;  // one wgmma
constexpr int kMaxSteps = 4;
constexpr int kSlabA = kM * kK, kSlabB = kN * kK;  // bytes of one k-step's operands
constexpr int kOut = kM * kN;
// No-swizzle K-major layout: core matrices of 8 rows x 16 bytes, 128 bytes each; the two of one row group
// along K are adjacent (128 bytes apart) and row groups are 256 bytes apart.
constexpr uint32_t kCoreK = 128, kCoreMN = 256;

__host__ __device__ int smem_offset(int row, int k) { return (row / 8) * kCoreMN + (k / 16) * kCoreK + (row % 8) * 16 + k % 16; }

__device__ uint64_t descriptor(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t(sbo >> 4) << 32) | (uint64_t(lbo >> 4) << 16) | uint64_t((addr >> 4) & 0x3FFF);
}

struct Case {
  int steps;
  uint8_t a[kMaxSteps][kM][kK];  // row-major per step: a[s][m][k]
  uint8_t b[kMaxSteps][kN][kK];
  float c[kM][kN];
};

// Run modes: bit 0, LBO and SBO exchanged, so that whichever reading of the two fields the hardware makes,
// one of the two runs is right (the host keeps the one that reproduces the exact cases); bit 1, A from
// registers (RS, as P V takes P) instead of shared memory (SS, as S = Q K^T takes Q).
constexpr int kModes = 4;

__global__ void probe(const Case *cases, float *out, int mode) {
  const bool swap = mode & 1, a_in_registers = mode & 2;
  __shared__ alignas(1024) uint8_t sa[kMaxSteps][kSlabA];
  // One slab of slack after B: under the exchanged reading a k-step's B spans 384 bytes, not 256.
  __shared__ alignas(1024) uint8_t sb[kMaxSteps + 1][kSlabB];
  const Case &cs = cases[blockIdx.x];
  for (int i = threadIdx.x; i < cs.steps * kSlabA; i += blockDim.x) {
    const int s = i / kSlabA, m = (i % kSlabA) / kK, k = i % kK;
    sa[s][smem_offset(m, k)] = cs.a[s][m][k];
  }
  for (int i = threadIdx.x; i < cs.steps * kSlabB; i += blockDim.x) {
    const int s = i / kSlabB, n = (i % kSlabB) / kK, k = i % kK;
    sb[s][smem_offset(n, k)] = cs.b[s][n][k];
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int r0 = 16 * warp + g, r1 = r0 + 8;
  float d0 = cs.c[r0][2 * t], d1 = cs.c[r0][2 * t + 1], d2 = cs.c[r1][2 * t], d3 = cs.c[r1][2 * t + 1];
  const uint32_t lbo = swap ? kCoreMN : kCoreK, sbo = swap ? kCoreK : kCoreMN;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int s = 0; s < cs.steps; ++s) {
    const uint64_t da = descriptor(uint32_t(__cvta_generic_to_shared(sa[s])), lbo, sbo);
    const uint64_t db = descriptor(uint32_t(__cvta_generic_to_shared(sb[s])), lbo, sbo);
    if (a_in_registers) {
      // Byte j of register 2 kh + h: row g + 8 h of this warp's 16, k = 16 kh + 4 t + j.
      uint32_t ra[4];
      for (int r = 0; r < 4; ++r) {
        const int row = 16 * warp + g + 8 * (r % 2), k0 = 16 * (r / 2) + 4 * t;
        ra[r] = 0;
        for (int j = 0; j < 4; ++j) ra[r] |= uint32_t(cs.a[s][row][k0 + j]) << (8 * j);
      }
      asm volatile(
          "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, 1, 1, 1;\n"
          : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
          : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "l"(db));
    } else {
      asm volatile(
          "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0, %1, %2, %3}, %4, %5, 1, 1, 1;\n"
          : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
          : "l"(da), "l"(db));
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  float *o = out + size_t(blockIdx.x) * kOut;
  o[r0 * kN + 2 * t] = d0;
  o[r0 * kN + 2 * t + 1] = d1;
  o[r1 * kN + 2 * t] = d2;
  o[r1 * kN + 2 * t + 1] = d3;
}

uint64_t splitmix(uint64_t &s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// An e4m3 code (never NaN) of one of the kinds below.
uint8_t code(uint64_t &rng, int kind) {
  const uint64_t r = splitmix(rng);
  const uint8_t sign = (r & 1) ? 0x80 : 0;
  const int mant = int((r >> 1) & 7);
  switch (kind) {
    case 0: {  // any finite code
      uint8_t c = uint8_t((r >> 8) & 0xFF);
      if ((c & 0x7F) == 0x7F) c &= 0xFE;
      return c;
    }
    case 1: {  // exponents 5..9 (values 2^-2 .. 2^2), like normalized activations
      const int e = 5 + int((r >> 8) % 5);
      return uint8_t(sign | (e << 3) | mant);
    }
    case 2: {  // exact cases: 0 or +-1 or +-2 (every sum exact)
      const int v = int((r >> 8) % 5);
      static const uint8_t kCodes[5] = {0x00, 0x38, 0xB8, 0x40, 0xC0};
      return kCodes[v];
    }
    case 3: {  // non-negative, exponents 0..8 (P codes: subnormals to 1)
      const int e = int((r >> 8) % 9);
      return uint8_t((e << 3) | mant);
    }
    default: {  // sparse: mostly zero, rare large values
      if ((r >> 8) % 8 != 0) return sign;
      const int e = 1 + int((r >> 12) % 14);
      return uint8_t(sign | (e << 3) | mant);
    }
  }
}

float accumulator(uint64_t &rng, int kind) {
  const uint64_t r = splitmix(rng);
  if (kind == 0) return 0.0f;
  const int e = int((r >> 24) % 41) - 20;                    // 2^-20 .. 2^20
  const float m = 1.0f + float(r & 0xFFFFFF) / float(1 << 24);  // 24 random bits
  return ((r >> 60) & 1 ? -1.0f : 1.0f) * std::ldexp(m, kind == 1 ? e : e / 4);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: qgmma_probe OUT_FILE [CASES]\n");
    return 2;
  }
  const int n_cases = argc > 2 ? std::atoi(argv[2]) : 1024;
  std::vector<Case> cases(static_cast<size_t>(n_cases));
  uint64_t rng = 0x5172676d6dull;
  for (int i = 0; i < n_cases; ++i) {
    Case &c = cases[size_t(i)];
    std::memset(&c, 0, sizeof c);
    c.steps = (i % 4 == 3) ? kMaxSteps : 1;
    const int kind_a = (i / 4) % 5, kind_b = kind_a == 3 ? 1 : kind_a;  // P-like A times signed B
    const int kind_c = kind_a == 2 ? 0 : (i / 20) % 3;
    for (int s = 0; s < c.steps; ++s) {
      for (int m = 0; m < kM; ++m)
        for (int k = 0; k < kK; ++k) c.a[s][m][k] = code(rng, kind_a);
      for (int n = 0; n < kN; ++n)
        for (int k = 0; k < kK; ++k) c.b[s][n][k] = code(rng, kind_b);
    }
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) c.c[m][n] = accumulator(rng, kind_c);
  }
  Case *d_cases = nullptr;
  float *d_out = nullptr;
  std::vector<float> out(size_t(n_cases) * kOut * kModes);
  auto check = [](cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
      std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
      std::exit(1);
    }
  };
  check(cudaMalloc(&d_cases, sizeof(Case) * cases.size()), "cudaMalloc cases");
  check(cudaMalloc(&d_out, sizeof(float) * out.size()), "cudaMalloc out");
  check(cudaMemcpy(d_cases, cases.data(), sizeof(Case) * cases.size(), cudaMemcpyHostToDevice), "copy in");
  check(cudaMemset(d_out, 0xFF, sizeof(float) * out.size()), "poison");  // NaN: unwritten stays visible
  for (int mode = 0; mode < kModes; ++mode) {
    probe<<<n_cases, 128>>>(d_cases, d_out + size_t(mode) * n_cases * kOut, mode);
    check(cudaGetLastError(), "launch");
  }
  check(cudaDeviceSynchronize(), "sync");
  check(cudaMemcpy(out.data(), d_out, sizeof(float) * out.size(), cudaMemcpyDeviceToHost), "copy out");
  FILE *f = std::fopen(argv[1], "wb");
  if (!f) return 1;
  const uint32_t header[5] = {0x5147474du, uint32_t(n_cases), uint32_t(sizeof(Case)), uint32_t(kOut), kModes};
  std::fwrite(header, sizeof header, 1, f);
  std::fwrite(cases.data(), sizeof(Case), cases.size(), f);
  std::fwrite(out.data(), sizeof(float), out.size(), f);
  std::fclose(f);
  std::printf("qgmma_probe: %d cases written to %s\n", n_cases, argv[1]);
  return 0;
}
