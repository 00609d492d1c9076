// The general fallback kernel: causal FlashAttention forward with mma.sync (m16n8k16, bf16 x bf16 -> fp32)
// for every configuration a Problem can express (BF16 and FP8 e4m3, d_qk 128 or 192 with d_v 128, GQA and
// MQA, any element strides, optional LSE, any seqlen). It follows the recurrence of src/kernels/numerics.h
// step by step, so that it matches the CPU backend up to the order of fp32 sums and the last ulp of exp2.
//
// Shape of the work: one CTA of kWarps warps takes a query tile of kQueryTile rows (16 rows per warp, the M
// of the MMA) and walks the key blocks 0..tile, staging each K and V block in shared memory as bf16. FP8
// codes are widened to bf16 on the way in, which is exact; their descales stay out of the MMAs and enter
// as fp32 factors (c for the scores, v_descale on the output), exactly where numerics.h puts them.
// Simple on purpose: no pipelining, no warp specialization. The fast kernels live elsewhere.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/launch.hpp"
#include "kernels/numerics.h"

namespace zyfa::kernels {
namespace {

namespace nx = zyfa::numerics;

constexpr int kDv = 128;                          // the only d_v a Problem can have
constexpr int kMmaRows = 16;                      // M of m16n8k16: query rows per warp
constexpr int kMmaK = 16;                         // K of m16n8k16
constexpr int kMmaN = 8;                          // N of m16n8k16
constexpr int kWarps = nx::kQueryTile / kMmaRows;
constexpr int kThreads = kWarps * 32;
constexpr int kScoreTiles = nx::kKeyBlock / kMmaN;  // n8 tiles of scores per warp and key block
constexpr int kOutTiles = kDv / kMmaN;              // n8 tiles of the output per warp
constexpr int kChunkBytes = 16;  // one global load: validation makes rows and strides 16-byte granular
// Padding of each shared-memory row, in bf16: the row pitch becomes an odd multiple of 16 bytes, so the 8 row
// addresses of one ldmatrix phase fall in distinct bank groups.
constexpr int kRowPad = 8;
constexpr unsigned kFullWarp = 0xffffffffu;
// Shifting an e4m3 code left by this many bits lines its exponent and mantissa up with a float's...
constexpr int kE4m3ToFloatShift = 23 - 3;
// ...and adding this (in code units) moves the exponent bias from 7 to 127.
constexpr int kE4m3ToFloatRebias = (127 - 7) * nx::kE4m3CodesPerBinade;
// The smallest normal e4m3 code; codes below it are subnormal: code * 2^-9.
constexpr int kE4m3FirstNormal = nx::kE4m3CodesPerBinade;
constexpr float kE4m3SubnormalQuantum = 0x1p-9f;

// Every row has at least one unmasked key in every key block it visits (key block j <= query tile t, and the
// first key of block j is <= every row of tile t), so a block max is never -inf: the recurrence needs no
// special case. That holds only because the diagonal block is exactly one key block.
static_assert(nx::kKeyBlock == nx::kQueryTile, "the diagonal of a query tile must be exactly one key block");
static_assert(nx::kQueryTile == kWarps * kMmaRows, "each warp owns 16 rows of the tile");

template <int kDqk>
struct SmemLayout {
  static constexpr int kQkPitch = kDqk + kRowPad;  // bf16 elements per Q or K row
  static constexpr int kVPitch = kDv + kRowPad;
  static constexpr int kQElems = nx::kQueryTile * kQkPitch;
  static constexpr int kKElems = nx::kKeyBlock * kQkPitch;
  static constexpr int kVElems = nx::kKeyBlock * kVPitch;
  static constexpr int kBytes = (kQElems + kKElems + kVElems) * int(sizeof(__nv_bfloat16));
};

// ---------------------------------------------------------------- fragments (PTX ISA, "mma.m16n8k16")
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const __nv_bfloat16 *p) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a)
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const __nv_bfloat16 *p) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a)
               : "memory");
}
// d += a * b for one 16x8 tile; a is 16x16 (row major), b is 16x8 (column major).
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t *>(&v);
}

// ---------------------------------------------------------------- FP8 helpers
// The value of a non-negative e4m3 code below 0x7f (P codes of finite scores in kSaneScoreRange are neither
// negative nor NaN). Exact.
__device__ __forceinline__ float e4m3_magnitude(int code) {
  return code >= kE4m3FirstNormal ? __int_as_float((code + kE4m3ToFloatRebias) << kE4m3ToFloatShift)
                                  : float(code) * kE4m3SubnormalQuantum;
}

// Sixteen e4m3 codes to sixteen bf16 values (through f16, which holds every e4m3 value exactly).
__device__ __forceinline__ void widen_fp8x16(const uint4 &codes, uint4 (&bf16)[2]) {
  const uint32_t in[4] = {codes.x, codes.y, codes.z, codes.w};
  uint32_t out[8];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const __half2 h = __half2(__nv_cvt_fp8x2_to_halfraw2(
          static_cast<__nv_fp8x2_storage_t>(in[i] >> (16 * half)), __NV_E4M3));
      const float2 f = __half22float2(h);
      out[2 * i + half] = pack_bf16x2(f.x, f.y);
    }
  }
  bf16[0] = make_uint4(out[0], out[1], out[2], out[3]);
  bf16[1] = make_uint4(out[4], out[5], out[6], out[7]);
}

__device__ __forceinline__ float read_descale(const Descale &d, int64_t b, int64_t kv_head) {
  return d.ptr ? d.ptr[b * d.batch_stride + kv_head * d.head_stride] : d.value;
}

// ---------------------------------------------------------------- staging
// Copies rows [row0, row0 + kRows) of one head (`head` points at its row 0) into shared memory as bf16.
// Rows at and past seqlen become zeros: the inputs are read in place, never padded by a copy.
template <bool kFp8, int kCols, int kRows>
__device__ __forceinline__ void stage_rows(__nv_bfloat16 *smem, int pitch, const uint8_t *head,
                                           int64_t seq_stride_bytes, int64_t row0, int64_t seqlen) {
  constexpr int kElemBytes = kFp8 ? 1 : 2;
  constexpr int kChunksPerRow = kCols * kElemBytes / kChunkBytes;
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % kThreads == 0, "every thread stages the same number of chunks");
  constexpr int kPerThread = kChunks / kThreads;
  constexpr int kElemsPerChunk = kChunkBytes / kElemBytes;

  uint4 chunk[kPerThread];
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {  // all loads first, so they are in flight together
    const int idx = int(threadIdx.x) + i * kThreads;
    const int row = idx / kChunksPerRow, col_chunk = idx % kChunksPerRow;
    const int64_t grow = row0 + row;
    chunk[i] = make_uint4(0, 0, 0, 0);
    if (grow < seqlen)
      chunk[i] = __ldg(reinterpret_cast<const uint4 *>(head + grow * seq_stride_bytes) + col_chunk);
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int idx = int(threadIdx.x) + i * kThreads;
    const int row = idx / kChunksPerRow, col_chunk = idx % kChunksPerRow;
    __nv_bfloat16 *dst = smem + row * pitch + col_chunk * kElemsPerChunk;
    if constexpr (kFp8) {
      uint4 wide[2];
      widen_fp8x16(chunk[i], wide);
      reinterpret_cast<uint4 *>(dst)[0] = wide[0];
      reinterpret_cast<uint4 *>(dst)[1] = wide[1];
    } else {
      *reinterpret_cast<uint4 *>(dst) = chunk[i];
    }
  }
}

// Start of (batch b, head h, row 0) of a tensor, in bytes.
template <bool kFp8>
__device__ __forceinline__ const uint8_t *head_base(const TensorRef &t, int64_t b, int64_t h) {
  constexpr int64_t kElemBytes = kFp8 ? 1 : 2;
  return static_cast<const uint8_t *>(t.ptr) + (b * t.batch_stride + h * t.head_stride) * kElemBytes;
}

// ---------------------------------------------------------------- one query tile
// Per-thread state of the two rows a thread's MMA fragments touch: row g = lane / 4 and row g + 8 of its warp.
struct RowState {
  float m[2];  // running reference max, base-2 units
  float l[2];  // this thread's part of the denominator (the quad's four parts add up to the row's)
};

template <bool kFp8, int kDqk>
__device__ void attend_tile(const Problem &p, __nv_bfloat16 *smem, int64_t b, int64_t h, int64_t tile) {
  using L = SmemLayout<kDqk>;
  const bool lean_p = p.lean_p;  // p_rounding as validation resolved it (uniform over the grid)
  constexpr int64_t kElemBytes = kFp8 ? 1 : 2;
  __nv_bfloat16 *q_s = smem;
  __nv_bfloat16 *k_s = q_s + L::kQElems;
  __nv_bfloat16 *v_s = k_s + L::kKElems;

  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int g = lane / 4, tig = lane % 4;  // the MMA's "groupID" and "threadID_in_group"
  const int64_t kv_head = h / (p.nheads / p.nheads_k);
  const int64_t row0 = tile * nx::kQueryTile;

  // c = softmax_scale * log2(e) [* q_descale * k_descale], in this order (numerics.h).
  float c = p.softmax_scale * nx::kLog2e;
  float v_descale = 1.0f;
  if constexpr (kFp8) {
    c = c * read_descale(p.q_descale, b, kv_head);
    c = c * read_descale(p.k_descale, b, kv_head);
    v_descale = read_descale(p.v_descale, b, kv_head);
  }
  const float lean_scale = nx::fp8_lean_p_scale(c);  // exact: a power of two

  const uint8_t *q_head = head_base<kFp8>(p.q, b, h);
  const uint8_t *k_head = head_base<kFp8>(p.k, b, kv_head);
  const uint8_t *v_head = head_base<kFp8>(p.v, b, kv_head);

  float o[kOutTiles][4];
#pragma unroll
  for (int j = 0; j < kOutTiles; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  RowState st;
  st.m[0] = st.m[1] = -INFINITY;
  st.l[0] = st.l[1] = 0.0f;

  for (int64_t kb = 0; kb <= tile; ++kb) {
    const int64_t key0 = kb * nx::kKeyBlock;
    __syncthreads();  // every warp is done with the shared memory of the previous block (or tile)
    if (kb == 0)
      stage_rows<kFp8, kDqk, nx::kQueryTile>(q_s, L::kQkPitch, q_head, p.q.seq_stride * kElemBytes, row0,
                                             p.seqlen);
    stage_rows<kFp8, kDqk, nx::kKeyBlock>(k_s, L::kQkPitch, k_head, p.k.seq_stride * kElemBytes, key0, p.seqlen);
    stage_rows<kFp8, kDv, nx::kKeyBlock>(v_s, L::kVPitch, v_head, p.v.seq_stride * kElemBytes, key0, p.seqlen);
    __syncthreads();

    // ---- S = Q K^T for this warp's 16 rows and the block's keys (raw scores, fp32 accumulation).
    float s[kScoreTiles][4];
#pragma unroll
    for (int j = 0; j < kScoreTiles; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll 1  // kk only moves addresses; rolled, it keeps the K fragments of one step live at a time
    for (int kk = 0; kk < kDqk / kMmaK; ++kk) {
      uint32_t a[4];
      ldmatrix_x4(a, q_s + (warp * kMmaRows + (lane & 15)) * L::kQkPitch + kk * kMmaK + (lane >> 4) * 8);
#pragma unroll
      for (int j2 = 0; j2 < kScoreTiles / 2; ++j2) {
        uint32_t bk[4];  // keys j2*16 + [0, 8) then [8, 16); each with k halves [0, 8) and [8, 16)
        ldmatrix_x4(bk, k_s + (j2 * 16 + (lane & 7) + (lane >> 4) * 8) * L::kQkPitch + kk * kMmaK +
                            ((lane >> 3) & 1) * 8);
        mma_bf16(s[2 * j2], a, bk[0], bk[1]);
        mma_bf16(s[2 * j2 + 1], a, bk[2], bk[3]);
      }
    }

    // ---- mask the diagonal block: keys after the row (causal) and keys at or past seqlen.
    if (kb == tile) {
      const int64_t keys_left = p.seqlen - key0;
      const int valid_keys = keys_left < nx::kKeyBlock ? int(keys_left) : nx::kKeyBlock;
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = j * kMmaN + 2 * tig + (e & 1);            // local to the block
          const int row = warp * kMmaRows + g + (e >> 1) * 8;       // local to the tile = the block
          if (key > row || key >= valid_keys) s[j][e] = -INFINITY;
        }
    }

    // ---- block max (raw), then bmax = c * max in base-2 units; the quad's four threads share a row.
    float bmax[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * r], s[j][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(kFullWarp, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(kFullWarp, mx, 2));
      bmax[r] = c * mx;
    }

    // ---- lazy rescale: only when the block max passes the reference by more than numerics' threshold.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (nx::lazy_rescale_due(st.m[r], bmax[r], nx::lazy_rescale_threshold(kFp8))) {
        const float m_new = kFp8 ? nx::fp8_reference_max(bmax[r]) : bmax[r];
        const float alpha = exp2f(st.m[r] - m_new);
        st.l[r] *= alpha;
#pragma unroll
        for (int j = 0; j < kOutTiles; ++j) {
          o[j][2 * r] *= alpha;
          o[j][2 * r + 1] *= alpha;
        }
        st.m[r] = m_new;
      }
    }

    // ---- P, rounded as numerics.h rounds it, packed as the bf16 A fragments of the PV MMA. The C fragment
    // of score tiles 2kk and 2kk+1 is exactly the A fragment of PV's k-step kk.
    uint32_t pk[kScoreTiles][2];
    // FP8: the part of each row's unscale that P cannot carry exactly (below).
    float fold[2] = {1.0f, 1.0f};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if constexpr (!kFp8) {
        const float neg_m = -st.m[r];
#pragma unroll
        for (int j = 0; j < kScoreTiles; ++j) {
          const float p0 = __bfloat162float(__float2bfloat16_rn(exp2f(fmaf(s[j][2 * r], c, neg_m))));
          const float p1 = __bfloat162float(__float2bfloat16_rn(exp2f(fmaf(s[j][2 * r + 1], c, neg_m))));
          st.l[r] += p0 + p1;  // the denominator of the rounded P
          pk[j][r] = pack_bf16x2(p0, p1);
        }
      } else {
        // Per-block scaling (numerics.h). The unscale 2^((bmax - m) - G) is not a power of two: P carries
        // its power of two (exactly, in bf16), and O and l are divided by the rest, fold in [1, 2), before
        // the MMA and multiplied back after it (fp32 rounding only).
        int exponent = 0;
        fold[r] = 2.0f * frexpf(exp2f(nx::fp8_unscale_log2(st.m[r], bmax[r], lean_p)), &exponent);
        const float unscale = ldexpf(1.0f, exponent - 1);
        const float inv_fold = 1.0f / fold[r];
        st.l[r] *= inv_fold;
#pragma unroll
        for (int jo = 0; jo < kOutTiles; ++jo) {
          o[jo][2 * r] *= inv_fold;
          o[jo][2 * r + 1] *= inv_fold;
        }
        // Lean P: numerics::lean_p_code (one FFMA, then the clamp the wgmma kernels do with max.s16x2). Exact P:
        // code = e4m3(exp2(fma(s, c, H - bmax))), rounded by cvt.rn.satfinite.e4m3x2.f32; the block max
        // becomes exactly 2^H.
        const float lean_offset = nx::fp8_lean_p_offset(bmax[r]);
        const float bias = nx::fp8_exact_p_bias(bmax[r]);
#pragma unroll
        for (int j = 0; j < kScoreTiles; ++j) {
          int code[2];
          if (lean_p) {
#pragma unroll
            for (int e = 0; e < 2; ++e) code[e] = nx::lean_p_code(s[j][2 * r + e], lean_scale, lean_offset);
          } else {
            const float2 pe = make_float2(exp2f(fmaf(s[j][2 * r], c, bias)), exp2f(fmaf(s[j][2 * r + 1], c, bias)));
            const uint32_t codes = __nv_cvt_float2_to_fp8x2(pe, __NV_SATFINITE, __NV_E4M3);  // .x in the low byte
            code[0] = int(codes & 0xffu);
            code[1] = int(codes >> 8);
          }
          const float v0 = e4m3_magnitude(code[0]) * unscale;
          const float v1 = e4m3_magnitude(code[1]) * unscale;
          st.l[r] += v0 + v1;
          pk[j][r] = pack_bf16x2(v0, v1);  // exact: e4m3 values times a power of two
        }
      }
    }

    // ---- O += P V.
#pragma unroll
    for (int kk = 0; kk < nx::kKeyBlock / kMmaK; ++kk) {
      const uint32_t a[4] = {pk[2 * kk][0], pk[2 * kk][1], pk[2 * kk + 1][0], pk[2 * kk + 1][1]};
#pragma unroll
      for (int n2 = 0; n2 < kOutTiles / 2; ++n2) {
        uint32_t bv[4];  // keys kk*16 + [0, 8) and [8, 16), for output columns n2*16 + [0, 8) then [8, 16)
        ldmatrix_x4_trans(bv, v_s + (kk * kMmaK + (lane & 7) + ((lane >> 3) & 1) * 8) * L::kVPitch + n2 * 16 +
                                  (lane >> 4) * 8);
        mma_bf16(o[2 * n2], a, bv[0], bv[1]);
        mma_bf16(o[2 * n2 + 1], a, bv[2], bv[3]);
      }
    }
    if constexpr (kFp8) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        st.l[r] *= fold[r];
#pragma unroll
        for (int jo = 0; jo < kOutTiles; ++jo) {
          o[jo][2 * r] *= fold[r];
          o[jo][2 * r + 1] *= fold[r];
        }
      }
    }
  }

  // ---- out = bf16(O * output_scale(l, v_descale)) and lse = (m + log2 l) ln 2, for rows inside seqlen.
  __nv_bfloat16 *out = static_cast<__nv_bfloat16 *>(const_cast<void *>(p.out.ptr));
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = st.l[r];
    l += __shfl_xor_sync(kFullWarp, l, 1);
    l += __shfl_xor_sync(kFullWarp, l, 2);
    const int64_t row = row0 + warp * kMmaRows + g + r * 8;
    if (row >= p.seqlen) continue;
    __nv_bfloat16 *out_row = out + b * p.out.batch_stride + row * p.out.seq_stride + h * p.out.head_stride;
    if (p.lse != nullptr && tig == 0) p.lse[(b * p.nheads + h) * p.seqlen + row] = (st.m[r] + log2f(l)) * nx::kLn2;
    const float scale = nx::output_scale(l, v_descale);
#pragma unroll
    for (int j = 0; j < kOutTiles; ++j) {
      const float y0 = __fmul_rn(o[j][2 * r], scale), y1 = __fmul_rn(o[j][2 * r + 1], scale);
      *reinterpret_cast<__nv_bfloat162 *>(out_row + j * kMmaN + 2 * tig) = __floats2bfloat162_rn(y0, y1);
    }
  }
}

// The persistent grid: CTA x takes jobs x, x + grid, ... of the table; each job is one or two query tiles.
template <bool kFp8, int kDqk>
__global__ void __launch_bounds__(kThreads, 1) fallback_attention_kernel(const Problem p, const Schedule sched) {
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  __nv_bfloat16 *smem = reinterpret_cast<__nv_bfloat16 *>(smem_bytes);
  for (int32_t i = int32_t(blockIdx.x); i < sched.n_jobs; i += int32_t(gridDim.x)) {
    const Job job = sched.jobs[i];
    attend_tile<kFp8, kDqk>(p, smem, job.batch, job.head, job.tile_first);
    if (job.tile_second != kNoTile) attend_tile<kFp8, kDqk>(p, smem, job.batch, job.head, job.tile_second);
  }
}

// Per call, not once: the attribute belongs to the current device, and it costs a host call only. Loads the
// kernel too, where CUDA loads lazily.
template <bool kFp8, int kDqk>
cudaError_t set_shared_memory() {
  return cudaFuncSetAttribute(fallback_attention_kernel<kFp8, kDqk>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              SmemLayout<kDqk>::kBytes);
}

template <bool kFp8, int kDqk>
int launch(const Problem &problem, const Schedule &schedule, cudaStream_t stream) {
  constexpr int kSmemBytes = SmemLayout<kDqk>::kBytes;
  if (cudaError_t err = set_shared_memory<kFp8, kDqk>(); err != cudaSuccess) return err;
  fallback_attention_kernel<kFp8, kDqk><<<schedule.grid, kThreads, kSmemBytes, stream>>>(problem, schedule);
  return cudaGetLastError();
}

}  // namespace

int prepare_fallback_attention(const Problem &problem) {
  const bool fp8 = problem.fp8();
  if (problem.d_qk == 128) return fp8 ? set_shared_memory<true, 128>() : set_shared_memory<false, 128>();
  if (problem.d_qk == 192) return fp8 ? set_shared_memory<true, 192>() : set_shared_memory<false, 192>();
  return cudaErrorInvalidValue;
}

int launch_fallback_attention(const Problem &problem, const Schedule &schedule, void *stream) {
  if (schedule.jobs == nullptr || schedule.n_jobs < 1 || schedule.grid < 1) return cudaErrorInvalidValue;
  if (problem.d_v != kDv) return cudaErrorInvalidValue;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const bool fp8 = problem.fp8();
  if (problem.d_qk == 128) return fp8 ? launch<true, 128>(problem, schedule, s) : launch<false, 128>(problem, schedule, s);
  if (problem.d_qk == 192) return fp8 ? launch<true, 192>(problem, schedule, s) : launch<false, 192>(problem, schedule, s);
  return cudaErrorInvalidValue;
}

// Shared memory (102 KiB at d_qk = 128, 134 KiB at 192) and up to 255 registers per thread of 256 threads
// leave room for one CTA per SM.
int fallback_ctas_per_sm() { return 1; }

}  // namespace zyfa::kernels
