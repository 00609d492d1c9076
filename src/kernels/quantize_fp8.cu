// zyfa_quantize_fp8 on the GPU: BF16 rows to FP8 e4m3 with one power-of-two scale per tensor, optionally
// rotated first (src/kernels/rotation.h). The scale rule is src/kernels/fp8_scale.h; the host twin
// (src/ref/quantize_host.cpp) runs the same steps and must match this kernel bit for bit.
//
// Four operations in stream order, no scratch memory and no host wait:
//   0. memset *descale to 0: it holds the amax as float bits while the passes run;
//   1. amax pass: every warp reduces the |y| bit patterns of its rows and does one atomicMax (an integer
//      max: the same result in any order, so run to run identical);
//   2. quantize pass: derives the descale from the amax word and writes the codes;
//   3. one thread turns the amax word into the descale, in place.
// Pass 1 and pass 2 compute the rotation twice: cheaper than a round trip of fp32 rows through memory.
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/fp8_scale.h"
#include "kernels/launch.hpp"
#include "kernels/numerics.h"
#include "kernels/rotation.h"

namespace zyfa::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpSize = 32;
constexpr int kWarpsPerBlock = kThreads / kWarpSize;
constexpr unsigned kFullWarp = 0xffffffffu;
// A Hopper SM holds 2048 threads; the pass kernels are built to fit that many (at most 32 registers each,
// which __launch_bounds__ makes ptxas keep), so one wave of resident blocks covers the GPU.
constexpr int kResidentThreadsPerSm = 2048;
constexpr int kResidentBlocksPerSm = kResidentThreadsPerSm / kThreads;
// Elements per thread and step without a rotation: one 16-byte load of BF16, one 8-byte store of codes
// (the validation guarantees 16-byte aligned rows and dim % 8 == 0).
constexpr int kPlainVec = 8;

enum class Pass { kAmax, kQuantize };

struct Rows {
  const uint16_t *src;  // BF16 bits, row r at src + r * row_stride
  uint8_t *dst;         // codes, row r at dst + r * dim
  uint32_t *amax_word;  // *desc.descale: amax bits after pass 1, the descale after pass 3
  int64_t n_rows;
  int64_t dim;
  int64_t row_stride;
};

// ---- loads, conversions, stores

// N consecutive BF16 values (N = 2, 4 or 8, aligned to 2N bytes) widened to fp32: the low half of each
// 32-bit word is the first element.
template <int N>
__device__ __forceinline__ void load_bf16(const uint16_t *p, float (&v)[N]) {
  uint32_t w[N / 2];
  if constexpr (N == 2) {
    w[0] = __ldg(reinterpret_cast<const unsigned *>(p));
  } else if constexpr (N == 4) {
    const uint2 u = __ldg(reinterpret_cast<const uint2 *>(p));
    w[0] = u.x, w[1] = u.y;
  } else {
    static_assert(N == 8, "loads of 2, 4 or 8 BF16 values");
    const uint4 u = __ldg(reinterpret_cast<const uint4 *>(p));
    w[0] = u.x, w[1] = u.y, w[2] = u.z, w[3] = u.w;
  }
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    v[2 * i] = numerics::bits_float(w[i] << 16);
    v[2 * i + 1] = numerics::bits_float(w[i] & 0xffff0000u);
  }
}

// The codes of two values, the first in the low byte. cvt.rn.satfinite.e4m3x2.f32 rounds to nearest even
// and saturates to +-448, keeping NaN: numerics::e4m3_code, which the host twin calls. The GPU test checks
// the two against each other on every BF16 value and on random rotated rows.
__device__ __forceinline__ uint32_t e4m3_pair(float first, float second) {
  return __nv_cvt_float2_to_fp8x2(make_float2(first, second), __NV_SATFINITE, __NV_E4M3);
}

// N codes (N = 2, 4 or 8, aligned to N bytes) of the values times `inverse`.
template <int N>
__device__ __forceinline__ void store_codes(uint8_t *p, const float (&v)[N], float inverse) {
  uint32_t pairs[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    pairs[i] = e4m3_pair(fp8_scale::scaled_for_fp8(v[2 * i], inverse),
                         fp8_scale::scaled_for_fp8(v[2 * i + 1], inverse));
  }
  if constexpr (N == 2) {
    *reinterpret_cast<uint16_t *>(p) = uint16_t(pairs[0]);
  } else if constexpr (N == 4) {
    *reinterpret_cast<uint32_t *>(p) = pairs[0] | (pairs[1] << 16);
  } else {
    static_assert(N == 8, "stores of 2, 4 or 8 codes");
    *reinterpret_cast<uint2 *>(p) = make_uint2(pairs[0] | (pairs[1] << 16), pairs[2] | (pairs[3] << 16));
  }
}

template <int N>
__device__ __forceinline__ uint32_t max_magnitude(uint32_t amax, const float (&v)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) amax = max(amax, fp8_scale::magnitude_bits(v[i]));
  return amax;
}

// ---- the per-tensor scale

// Pass 2: the descale that pass 3 will store, derived from pass 1's amax word by the same function.
__device__ __forceinline__ float inverse_descale_from_amax(const uint32_t *amax_word) {
  return fp8_scale::inverse_descale(fp8_scale::descale_for_amax(numerics::bits_float(*amax_word)));
}

// End of pass 1: a warp-wide max, then one atomic per warp. Every lane of the warp must arrive.
__device__ __forceinline__ void publish_amax(uint32_t amax, uint32_t *amax_word) {
  amax = __reduce_max_sync(kFullWarp, amax);
  if (threadIdx.x % kWarpSize == 0) atomicMax(amax_word, amax);
}

// Pass 3.
__global__ void finish_descale_kernel(uint32_t *word) {
  *word = numerics::float_bits(fp8_scale::descale_for_amax(numerics::bits_float(*word)));
}

// ---- without a rotation: each thread takes kPlainVec elements at a time, grid-stride over the tensor.
template <Pass kPass>
__global__ void __launch_bounds__(kThreads, kResidentBlocksPerSm) plain_rows_kernel(Rows rows) {
  const int64_t chunks_per_row = rows.dim / kPlainVec;
  const int64_t first = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t step = int64_t(gridDim.x) * kThreads;
  // Walk (row, chunk) incrementally: one 64-bit division per thread instead of one per step.
  const int64_t step_rows = step / chunks_per_row, step_chunks = step % chunks_per_row;
  int64_t row = first / chunks_per_row, chunk = first % chunks_per_row;
  float inverse = 0.0f;
  if constexpr (kPass == Pass::kQuantize) inverse = inverse_descale_from_amax(rows.amax_word);
  uint32_t amax = 0;
  while (row < rows.n_rows) {
    float v[kPlainVec];
    load_bf16(rows.src + row * rows.row_stride + chunk * kPlainVec, v);
    if constexpr (kPass == Pass::kAmax) amax = max_magnitude(amax, v);
    else store_codes(rows.dst + row * rows.dim + chunk * kPlainVec, v, inverse);
    row += step_rows;
    chunk += step_chunks;
    if (chunk >= chunks_per_row) chunk -= chunks_per_row, ++row;
  }
  if constexpr (kPass == Pass::kAmax) publish_amax(amax, rows.amax_word);
}

// ---- with a rotation: one warp per row (grid-stride over rows, so the loop is warp-uniform). In every
// block of the row, lane l holds the kVec consecutive elements l * kVec .. l * kVec + kVec - 1. Hadamard
// stages h < kVec pair elements inside a lane; stages h >= kVec pair lane l with lane l ^ (h / kVec), and
// the lane holding the lower index of a pair computes the sum, the other the difference.
template <class Rotation, Pass kPass>
__global__ void __launch_bounds__(kThreads, kResidentBlocksPerSm) rotated_rows_kernel(Rows rows, uint64_t seed) {
  constexpr int kBlocks = Rotation::kBlocks, kBlockDim = Rotation::kBlockDim;
  constexpr int kVec = kBlockDim / kWarpSize;
  static_assert(kVec * kWarpSize == kBlockDim && kVec >= 2, "a block spreads evenly over a warp");
  const int lane = threadIdx.x % kWarpSize;
  uint32_t signs[kVec];
#pragma unroll
  for (int e = 0; e < kVec; ++e) signs[e] = rotation::sign_mask(seed, lane * kVec + e);
  float inverse = 0.0f;
  if constexpr (kPass == Pass::kQuantize) inverse = inverse_descale_from_amax(rows.amax_word);
  uint32_t amax = 0;
  const int64_t warps = int64_t(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize; row < rows.n_rows;
       row += warps) {
    float v[kBlocks][kVec];
    const uint16_t *src = rows.src + row * rows.row_stride + lane * kVec;
#pragma unroll
    for (int a = 0; a < kBlocks; ++a) {
      load_bf16(src + a * kBlockDim, v[a]);
#pragma unroll
      for (int e = 0; e < kVec; ++e) v[a][e] = rotation::apply_sign(v[a][e], signs[e]);
      rotation::hadamard_stages<kVec>(v[a]);
    }
#pragma unroll
    for (int h = kVec; h < kBlockDim; h *= 2) {
      const int lane_mask = h / kVec;
      const bool high = (lane & lane_mask) != 0;
#pragma unroll
      for (int a = 0; a < kBlocks; ++a) {
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          const float other = __shfl_xor_sync(kFullWarp, v[a][e], lane_mask);
          v[a][e] = high ? rotation::butterfly_high(other, v[a][e]) : rotation::butterfly_low(v[a][e], other);
        }
      }
    }
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      float column[kBlocks];
#pragma unroll
      for (int a = 0; a < kBlocks; ++a) column[a] = v[a][e];
      rotation::mix_column(column);
#pragma unroll
      for (int a = 0; a < kBlocks; ++a) v[a][e] = column[a];
    }
#pragma unroll
    for (int a = 0; a < kBlocks; ++a) {
      if constexpr (kPass == Pass::kAmax) amax = max_magnitude(amax, v[a]);
      else store_codes(rows.dst + row * rotation::kRowDim<Rotation> + a * kBlockDim + lane * kVec, v[a], inverse);
    }
  }
  if constexpr (kPass == Pass::kAmax) publish_amax(amax, rows.amax_word);
}

// ---- launching

// A grid that fills the GPU once (the kernels loop over their work) but no larger than the work.
cudaError_t persistent_grid(int64_t blocks_of_work, int *grid) {
  int device = 0, sms = 0;
  if (cudaError_t e = cudaGetDevice(&device)) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) return e;
  const int64_t resident_blocks = int64_t(sms) * kResidentBlocksPerSm;
  *grid = int(std::max<int64_t>(1, std::min(blocks_of_work, resident_blocks)));
  return cudaSuccess;
}

template <class... Params, class... Args>
cudaError_t launch(void (*kernel)(Params...), int grid, int threads, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(grid));
  config.blockDim = dim3(unsigned(threads));
  config.stream = stream;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

// Passes 1 to 3 for one pair of pass kernels that take the same arguments, after zeroing the amax word. The
// grid query comes first, so that a call failing there has not touched *descale.
template <class... Params, class... Args>
cudaError_t run_passes(void (*amax_pass)(Params...), void (*quantize_pass)(Params...), int64_t blocks_of_work,
                       uint32_t *amax_word, cudaStream_t stream, Args... args) {
  int grid = 0;
  if (cudaError_t e = persistent_grid(blocks_of_work, &grid)) return e;
  if (cudaError_t e = cudaMemsetAsync(amax_word, 0, sizeof(uint32_t), stream)) return e;
  if (cudaError_t e = launch(amax_pass, grid, kThreads, stream, args...)) return e;
  if (cudaError_t e = launch(quantize_pass, grid, kThreads, stream, args...)) return e;
  return launch(finish_descale_kernel, 1, 1, stream, amax_word);
}

int64_t blocks_for(int64_t items, int64_t items_per_block) { return (items + items_per_block - 1) / items_per_block; }

}  // namespace

int launch_quantize_fp8(const zyfa_quantize_desc &desc, int64_t row_stride, void *stream_handle) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  Rows rows;
  rows.src = static_cast<const uint16_t *>(desc.src);
  rows.dst = static_cast<uint8_t *>(desc.dst);
  rows.amax_word = reinterpret_cast<uint32_t *>(desc.descale);
  rows.n_rows = desc.n_rows;
  rows.dim = desc.dim;
  rows.row_stride = row_stride;

  if (desc.rotation == ZYFA_ROTATION_NONE) {
    const int64_t chunks = desc.n_rows * (desc.dim / kPlainVec);  // validated: no overflow
    return run_passes(plain_rows_kernel<Pass::kAmax>, plain_rows_kernel<Pass::kQuantize>,
                      blocks_for(chunks, kThreads), rows.amax_word, stream, rows);
  }
  const int64_t row_blocks = blocks_for(desc.n_rows, kWarpsPerBlock);
  if (desc.dim == rotation::kRowDim<rotation::Hadamard128>) {
    return run_passes(rotated_rows_kernel<rotation::Hadamard128, Pass::kAmax>,
                      rotated_rows_kernel<rotation::Hadamard128, Pass::kQuantize>, row_blocks, rows.amax_word,
                      stream, rows, desc.rotation_seed);
  }
  return run_passes(rotated_rows_kernel<rotation::DctHadamard192, Pass::kAmax>,
                    rotated_rows_kernel<rotation::DctHadamard192, Pass::kQuantize>, row_blocks, rows.amax_word,
                    stream, rows, desc.rotation_seed);
}

}  // namespace zyfa::kernels
