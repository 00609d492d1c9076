// V -> the FP8 wgmma kernel's V^T in the caller's workspace (fp8_vt_layout.h), one CTA per 128-key block
// of a (batch, kv head): V's rows land in shared memory, and each V^T row of the block leaves as 16-byte
// stores of 16 keys in P's register order. A read and a write of V per call, which at long sequences costs
// less than the kernel's per-block transposition it replaces (bench/NOTES.md, session 16).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/fp8_vt_layout.h"
#include "kernels/launch.hpp"

namespace zyfa::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kChunkBytes = 16;                               // one uint4
constexpr int kRowChunks = fp8_vt::kVtDims / kChunkBytes;     // 8 per V row (and per 128 keys of a V^T row)
constexpr int kBlockChunks = numerics::kKeyBlock * kRowChunks;  // 1024: a block of V, and of V^T
constexpr int kSwizzleChunks = 8;
static_assert(fp8_vt::kVtDims == numerics::kKeyBlock, "a V block and its V^T are both 128 x 128 bytes");
static_assert(kBlockChunks % kThreads == 0, "every thread moves the same number of chunks");

// Shared memory holds the block's V rows with chunk c of key row r at c ^ ((r / 16) % 8): the second pass
// reads one byte per key of a 16-key group, and a warp's 8 groups then fall in 8 distinct chunks.
__device__ __forceinline__ int tile_offset(int key, int chunk) {
  return key * fp8_vt::kVtDims + ((chunk ^ ((key / fp8_vt::kKeyGroup) % kSwizzleChunks)) * kChunkBytes);
}

__global__ void __launch_bounds__(kThreads) fp8_vt_prepass_kernel(const uint8_t *__restrict__ v, int64_t batch_stride,
                                                                  int64_t seq_stride, int64_t head_stride,
                                                                  int32_t nheads_k, int32_t seqlen,
                                                                  int64_t padded_keys, int64_t blocks_per_head,
                                                                  int64_t units, uint8_t *__restrict__ vt) {
  __shared__ __align__(16) uint8_t tile[numerics::kKeyBlock * fp8_vt::kVtDims];
  for (int64_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const int64_t head_index = unit / blocks_per_head;  // b * nheads_k + h
    const int64_t key0 = (unit % blocks_per_head) * numerics::kKeyBlock;
    const int64_t b = head_index / nheads_k, h = head_index % nheads_k;
    const uint8_t *v_head = v + b * batch_stride + h * head_stride;
    for (int i = threadIdx.x; i < kBlockChunks; i += kThreads) {
      const int key = i / kRowChunks, chunk = i % kRowChunks;
      uint4 bytes = make_uint4(0, 0, 0, 0);
      if (key0 + key < seqlen)
        bytes = __ldg(reinterpret_cast<const uint4 *>(v_head + (key0 + key) * seq_stride) + chunk);
      *reinterpret_cast<uint4 *>(tile + tile_offset(key, chunk)) = bytes;
    }
    __syncthreads();
    uint8_t *vt_head = vt + head_index * fp8_vt::kVtDims * padded_keys + key0;
    for (int i = threadIdx.x; i < kBlockChunks; i += kThreads) {
      const int dim = i / kRowChunks, group = i % kRowChunks;
      uint32_t words[4];
      for (int w = 0; w < 4; ++w) {
        uint32_t word = 0;
        for (int j = 0; j < 4; ++j) {
          const int key = group * fp8_vt::kKeyGroup + fp8_vt::key_at(4 * w + j);
          word |= uint32_t(tile[tile_offset(key, dim / kChunkBytes) + dim % kChunkBytes]) << (8 * j);
        }
        words[w] = word;
      }
      *reinterpret_cast<uint4 *>(vt_head + dim * padded_keys + group * fp8_vt::kKeyGroup) =
          make_uint4(words[0], words[1], words[2], words[3]);
    }
    __syncthreads();  // the tile is refilled by the next unit
  }
}

// Enough CTAs to fill the GPU several times over; each walks units x, x + grid, ...
constexpr int64_t kMaxGrid = 1 << 16;

}  // namespace

int launch_fp8_vt_prepass(const Problem &p, void *workspace, void *stream) {
  const int64_t padded = fp8_vt::padded_keys(p.seqlen);
  const int64_t blocks_per_head = padded / numerics::kKeyBlock;
  const int64_t units = p.batch * p.nheads_k * blocks_per_head;
  const int grid = int(units < kMaxGrid ? units : kMaxGrid);
  fp8_vt_prepass_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const uint8_t *>(p.v.ptr), p.v.batch_stride, p.v.seq_stride, p.v.head_stride, int32_t(p.nheads_k),
      int32_t(p.seqlen), padded, blocks_per_head, units, static_cast<uint8_t *>(workspace));
  return cudaGetLastError();
}

}  // namespace zyfa::kernels
