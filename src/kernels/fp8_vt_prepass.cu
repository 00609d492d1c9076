// V -> the FP8 wgmma kernel's V^T in the caller's workspace (fp8_vt_layout.h). Each thread moves one 16 x 16
// byte tile: a group of 16 keys times one 16-byte chunk of V's row (16 dims). It loads the tile's 16 rows
// and transposes them in registers by byte permutes into 16 V^T chunks, one per dim, of the group's 16 keys
// in P's register order. No shared memory and no barrier: each thread has its 16 loads in flight at once,
// so more of it runs at the memory's pace: at mha-d128 8K (32 MiB of V) 19.8 us and 48% of DRAM's peak, where
// a shared-memory transpose per 128-key block took 31.3 us at 29% (6% of the attention's time; ncu, session 33).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/fp8_vt_layout.h"
#include "kernels/launch.hpp"

namespace zyfa::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kTileBytes = 16;                            // one uint4: the tile's side, in keys and in dims
constexpr int kRowChunks = fp8_vt::kVtDims / kTileBytes;  // tiles across a V row
constexpr int kWords = kTileBytes / 4;
static_assert(fp8_vt::kKeyGroup == kTileBytes, "a tile's keys are one group of V^T's key order");

// __byte_perm selectors (nibble i picks result byte i from x's bytes 0-3 and y's 4-7).
constexpr unsigned kZipLowBytes = 0x5140;   // x0 y0 x1 y1
constexpr unsigned kZipHighBytes = 0x7362;  // x2 y2 x3 y3
constexpr unsigned kLowHalves = 0x5410;     // x's low half, then y's
constexpr unsigned kHighHalves = 0x7632;    // x's high half, then y's

// The 4 x 4 byte transpose: word w of the result holds byte w of a, b, c and d, in that order.
__device__ __forceinline__ void transpose4x4(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t out[4]) {
  const uint32_t ab_lo = __byte_perm(a, b, kZipLowBytes), ab_hi = __byte_perm(a, b, kZipHighBytes);
  const uint32_t cd_lo = __byte_perm(c, d, kZipLowBytes), cd_hi = __byte_perm(c, d, kZipHighBytes);
  out[0] = __byte_perm(ab_lo, cd_lo, kLowHalves);
  out[1] = __byte_perm(ab_lo, cd_lo, kHighHalves);
  out[2] = __byte_perm(ab_hi, cd_hi, kLowHalves);
  out[3] = __byte_perm(ab_hi, cd_hi, kHighHalves);
}

// Tile index: ((b * nheads_k + h) * groups_per_head + group) * kRowChunks + chunk, so that a warp's 32 threads
// read 4 groups' rows whole (8 chunks of 16 bytes each) and write 64 contiguous bytes of 8 V^T rows.
__global__ void __launch_bounds__(kThreads) fp8_vt_prepass_kernel(const uint8_t *__restrict__ v, int64_t batch_stride,
                                                                  int64_t seq_stride, int64_t head_stride,
                                                                  int32_t nheads_k, int32_t seqlen,
                                                                  int64_t padded_keys, int64_t tiles,
                                                                  uint8_t *__restrict__ vt) {
  // A kernel launched to overlap this grid (CodeObject::overlaps_prepass) may start now: its CTAs take SMs
  // as this grid's blocks leave them, and wait for this grid's completion before their first V^T copy. Without
  // such a dependent the trigger does nothing.
  cudaTriggerProgrammaticLaunchCompletion();
  const int64_t groups_per_head = padded_keys / fp8_vt::kKeyGroup;
  for (int64_t tile = int64_t(blockIdx.x) * kThreads + threadIdx.x; tile < tiles; tile += int64_t(gridDim.x) * kThreads) {
    const int chunk = int(tile % kRowChunks);
    const int64_t group = tile / kRowChunks % groups_per_head;
    const int64_t head_index = tile / kRowChunks / groups_per_head;  // b * nheads_k + h
    const int64_t b = head_index / nheads_k, h = head_index % nheads_k;
    const int64_t key0 = group * fp8_vt::kKeyGroup;
    const uint8_t *rows = v + b * batch_stride + h * head_stride + chunk * kTileBytes;
    uint4 row[kTileBytes];  // row[k]: dims chunk * 16 ... + 15 of key key0 + k; keys past seqlen are zeros
#pragma unroll
    for (int k = 0; k < kTileBytes; ++k)
      row[k] = key0 + k < seqlen ? __ldg(reinterpret_cast<const uint4 *>(rows + (key0 + k) * seq_stride))
                                 : make_uint4(0, 0, 0, 0);
    uint8_t *out = vt + (head_index * fp8_vt::kVtDims + chunk * kTileBytes) * padded_keys + key0;
#pragma unroll
    for (int q = 0; q < kWords; ++q) {  // dims 4q ... 4q + 3 of the chunk
      uint32_t col[4][kWords];          // col[j][t]: word t of dim 4q + j's V^T chunk
#pragma unroll
      for (int t = 0; t < kWords; ++t) {
        uint32_t w[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const uint4 &r = row[fp8_vt::key_at(4 * t + j)];
          w[j] = q == 0 ? r.x : q == 1 ? r.y : q == 2 ? r.z : r.w;
        }
        uint32_t dims[4];
        transpose4x4(w[0], w[1], w[2], w[3], dims);
#pragma unroll
        for (int j = 0; j < 4; ++j) col[j][t] = dims[j];
      }
#pragma unroll
      for (int j = 0; j < 4; ++j)
        *reinterpret_cast<uint4 *>(out + (4 * q + j) * padded_keys) = make_uint4(col[j][0], col[j][1], col[j][2], col[j][3]);
    }
  }
}

// Enough CTAs to fill the GPU several times over; each thread walks tiles x, x + grid * kThreads, ...
constexpr int64_t kMaxGrid = 1 << 16;

}  // namespace

int prepare_fp8_vt_prepass() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, fp8_vt_prepass_kernel);
}

int launch_fp8_vt_prepass(const Problem &p, void *workspace, void *stream) {
  const int64_t padded = fp8_vt::padded_keys(p.seqlen);
  const int64_t tiles = p.batch * p.nheads_k * (padded / fp8_vt::kKeyGroup) * kRowChunks;
  const int64_t blocks = (tiles + kThreads - 1) / kThreads;
  const int grid = int(blocks < kMaxGrid ? blocks : kMaxGrid);
  fp8_vt_prepass_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const uint8_t *>(p.v.ptr), p.v.batch_stride, p.v.seq_stride, p.v.head_stride, int32_t(p.nheads_k),
      int32_t(p.seqlen), padded, tiles, static_cast<uint8_t *>(workspace));
  return cudaGetLastError();
}

}  // namespace zyfa::kernels
