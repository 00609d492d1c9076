// The host side of TMA: tensor maps over one attention operand of logical shape (batch, seqlen, heads,
// dim), built per call from the Problem's strides and passed to the kernel by value. The encoder comes
// from the driver through the runtime's entry-point query, so libzyfa needs no link to libcuda.
#ifndef ZYFA_KERNELS_HOPPER_TENSOR_MAP_CUH_
#define ZYFA_KERNELS_HOPPER_TENSOR_MAP_CUH_

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdint>

#include "host/problem.hpp"

namespace zyfa::hopper {

// What TMA can address (CUDA driver API, cuTensorMapEncodeTiled): each global stride a multiple of 16
// bytes below 2^40, each dimension at most 2^32 elements; coordinates are signed 32-bit.
constexpr int64_t kTmaStrideAlignBytes = 16;
constexpr int64_t kTmaMaxStrideBytes = int64_t(1) << 40;
constexpr int64_t kTmaMaxCoordinate = INT32_MAX;

// Whether TMA can take a stride (in elements of elem_bytes) of a dimension of `extent`. Its bytes are formed only
// where the dimension is stepped (extent > 1), and checked for overflow: validation accepts any stride on a
// dimension of extent 1, 2^62 included.
inline bool tma_stride_ok(int64_t extent, int64_t stride, int64_t elem_bytes) {
  if (extent <= 1) return true;  // never stepped: the map gets a placeholder
  int64_t stride_bytes = 0;
  if (__builtin_mul_overflow(stride, elem_bytes, &stride_bytes)) return false;
  return stride_bytes > 0 && stride_bytes % kTmaStrideAlignBytes == 0 && stride_bytes < kTmaMaxStrideBytes;
}

// The first part of an operand of shape (batch, seqlen, heads, dim) with these strides (elements of
// kElemBytes) that a tensor map cannot take, or kMappable: what tma_can_map tests, named for messages.
enum class TmaRefusal { kMappable, kAddress, kBatch, kSeqlen, kHeads, kDim, kSeqStride, kHeadStride, kBatchStride };

inline TmaRefusal tma_refusal(const TensorRef &t, int64_t batch, int64_t seqlen, int64_t heads, int64_t dim,
                              int64_t kElemBytes = 2) {
  const auto address = reinterpret_cast<uintptr_t>(t.ptr);
  if (address % kTmaStrideAlignBytes != 0) return TmaRefusal::kAddress;
  if (batch > kTmaMaxCoordinate) return TmaRefusal::kBatch;
  if (seqlen > kTmaMaxCoordinate) return TmaRefusal::kSeqlen;
  if (heads > kTmaMaxCoordinate) return TmaRefusal::kHeads;
  if (dim > kTmaMaxCoordinate) return TmaRefusal::kDim;
  if (!tma_stride_ok(seqlen, t.seq_stride, kElemBytes)) return TmaRefusal::kSeqStride;
  if (!tma_stride_ok(heads, t.head_stride, kElemBytes)) return TmaRefusal::kHeadStride;
  if (!tma_stride_ok(batch, t.batch_stride, kElemBytes)) return TmaRefusal::kBatchStride;
  return TmaRefusal::kMappable;
}

// Whether an operand of shape (batch, seqlen, heads, dim) with these strides (elements of kElemBytes)
// fits a tensor map.
inline bool tma_can_map(const TensorRef &t, int64_t batch, int64_t seqlen, int64_t heads, int64_t dim,
                        int64_t kElemBytes = 2) {
  return tma_refusal(t, batch, seqlen, heads, dim, kElemBytes) == TmaRefusal::kMappable;
}

// The driver's cuTensorMapEncodeTiled, looked up once (a thread-safe static), or nullptr.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    constexpr unsigned kDriverApiVersion = 12000;  // the version that introduced the entry point
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, kDriverApiVersion, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encoder;
}

// A rank-4 map (dim, seqlen, heads, batch) over bf16 (elem_bytes 2) or bytes (1: e4m3 codes) with boxes
// of `box_cols` x `box_rows` x 1 x 1, stored with `swizzle` (box_cols * elem_bytes must be its span). Rows
// past seqlen read as zeros. Returns a cudaError_t value.
inline int encode_head_map(CUtensorMap *map, const TensorRef &t, int64_t batch, int64_t seqlen, int64_t heads,
                           int64_t dim, int64_t elem_bytes, uint32_t box_cols, uint32_t box_rows,
                           CUtensorMapSwizzle swizzle) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return cudaErrorNotSupported;
  // A dimension of extent 1 is never stepped; any legal stride stands in for one the caller left at 0.
  const auto stride_or_placeholder = [elem_bytes](int64_t extent, int64_t stride_elems) {
    return cuuint64_t(extent > 1 ? stride_elems * elem_bytes : kTmaStrideAlignBytes);
  };
  const cuuint64_t dims[4] = {cuuint64_t(dim), cuuint64_t(seqlen), cuuint64_t(heads), cuuint64_t(batch)};
  const cuuint64_t strides[3] = {stride_or_placeholder(seqlen, t.seq_stride),
                                 stride_or_placeholder(heads, t.head_stride),
                                 stride_or_placeholder(batch, t.batch_stride)};
  const cuuint32_t box[4] = {box_cols, box_rows, 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const CUtensorMapDataType type = elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const CUresult r = encode(map, type, 4, const_cast<void *>(t.ptr), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// bf16 with 128-byte swizzle (box_cols * 2 = 128): the BF16 kernel's operands.
inline int encode_bf16_head_map(CUtensorMap *map, const TensorRef &t, int64_t batch, int64_t seqlen,
                                int64_t heads, int64_t dim, uint32_t box_cols, uint32_t box_rows) {
  return encode_head_map(map, t, batch, seqlen, heads, dim, 2, box_cols, box_rows, CU_TENSOR_MAP_SWIZZLE_128B);
}

}  // namespace zyfa::hopper

#endif  // ZYFA_KERNELS_HOPPER_TENSOR_MAP_CUH_
