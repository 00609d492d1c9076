// zyfa_quantize_fp8 and zyfa_quantize_fp8_host: validation of the zyfa_quantize_desc, then the kernel
// (src/kernels/quantize_fp8.cu) or its host twin (src/ref/quantize_host.cpp). Nothing is launched or
// written unless every check passes.
#include <cstdint>

#include "host/byte_range.hpp"
#include "host/c_enum.hpp"
#include "host/cuda_api.hpp"
#include "host/error.hpp"
#include "kernels/launch.hpp"
#include "kernels/rotation.h"
#include "ref/quantize_host.hpp"
#include "zyfa/zyfa.h"

namespace zyfa {
namespace {

// src and dst start 16-byte aligned (kTensorAlignmentBytes), and so does every source row: the kernel moves
// rows with 16-byte loads (8 BF16 values), so without a rotation dim is a multiple of 8 too.
constexpr int64_t kElementsPer16Bytes = kTensorAlignmentBytes / kBf16Bytes;
// The descale is reduced with 32-bit atomics.
constexpr int64_t kDescaleAlignmentBytes = alignof(float);

zyfa_status check_dim(const zyfa_quantize_desc &d) {
  const int rotation_kind = c_enum_value(d.rotation);
  if (rotation_kind != ZYFA_ROTATION_NONE && rotation_kind != ZYFA_ROTATION_HADAMARD) {
    return fail(ZYFA_STATUS_BAD_ARGUMENT, "desc->rotation = %d: not a zyfa_rotation (NONE = 0, HADAMARD = 1)",
                rotation_kind);
  }
  if (d.rotation == ZYFA_ROTATION_HADAMARD) {
    if (d.dim != rotation::kRowDim<rotation::Hadamard128> && d.dim != rotation::kRowDim<rotation::DctHadamard192>) {
      return fail(ZYFA_STATUS_UNSUPPORTED_HEAD_DIM, "desc->dim = %lld: the Hadamard rotation needs dim 128 or 192",
                  (long long)d.dim);
    }
  } else if (d.dim < kElementsPer16Bytes || d.dim % kElementsPer16Bytes != 0) {
    return fail(ZYFA_STATUS_BAD_ARGUMENT, "desc->dim = %lld: must be a positive multiple of %lld",
                (long long)d.dim, (long long)kElementsPer16Bytes);
  }
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status check_row_stride(const zyfa_quantize_desc &d, int64_t *row_stride) {
  if (d.row_stride < 0 || (d.row_stride != 0 && d.row_stride < d.dim)) {
    return fail(ZYFA_STATUS_BAD_STRIDE, "desc->row_stride = %lld: must be 0 (meaning dim) or >= dim = %lld",
                (long long)d.row_stride, (long long)d.dim);
  }
  *row_stride = d.row_stride == 0 ? d.dim : d.row_stride;
  if (*row_stride % kElementsPer16Bytes != 0) {
    return fail(ZYFA_STATUS_BAD_STRIDE,
                "desc->row_stride = %lld: must be a multiple of %lld elements, so that every row is 16-byte aligned",
                (long long)d.row_stride, (long long)kElementsPer16Bytes);
  }
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status check_pointers(const zyfa_quantize_desc &d) {
  if (!d.src) return fail(ZYFA_STATUS_NULL_TENSOR, "desc->src = NULL");
  if (!d.dst) return fail(ZYFA_STATUS_NULL_TENSOR, "desc->dst = NULL");
  if (!d.descale) return fail(ZYFA_STATUS_NULL_ARGUMENT, "desc->descale = NULL: the descale is written there");
  if (misaligned(d.src, kTensorAlignmentBytes)) {
    return fail(ZYFA_STATUS_MISALIGNED, "desc->src = %p: must be %zu-byte aligned", d.src, size_t(kTensorAlignmentBytes));
  }
  if (misaligned(d.dst, kTensorAlignmentBytes)) {
    return fail(ZYFA_STATUS_MISALIGNED, "desc->dst = %p: must be %zu-byte aligned", d.dst, size_t(kTensorAlignmentBytes));
  }
  if (misaligned(d.descale, kDescaleAlignmentBytes)) {
    return fail(ZYFA_STATUS_MISALIGNED, "desc->descale = %p: must be %zu-byte aligned", static_cast<void *>(d.descale),
                size_t(kDescaleAlignmentBytes));
  }
  return ZYFA_STATUS_SUCCESS;
}

// The bytes that src spans and that dst covers, or SIZE_OVERFLOW; then no output may overlap another
// buffer (the kernel reads src while it writes dst, and reduces into *descale).
zyfa_status check_extents(const zyfa_quantize_desc &d, int64_t row_stride) {
  int64_t src_elements = 0, src_bytes = 0, dst_bytes = 0;
  AddressRange src, dst, descale;
  if (__builtin_mul_overflow(d.n_rows - 1, row_stride, &src_elements) ||
      __builtin_add_overflow(src_elements, d.dim, &src_elements) ||
      __builtin_mul_overflow(src_elements, kBf16Bytes, &src_bytes) ||
      !address_range(d.src, uint64_t(src_bytes), &src)) {
    return fail(ZYFA_STATUS_SIZE_OVERFLOW, "desc->n_rows = %lld with row_stride %lld: the source overflows 64 bits",
                (long long)d.n_rows, (long long)row_stride);
  }
  if (__builtin_mul_overflow(d.n_rows, d.dim, &dst_bytes) || __builtin_mul_overflow(dst_bytes, kFp8Bytes, &dst_bytes) ||
      !address_range(d.dst, uint64_t(dst_bytes), &dst)) {
    return fail(ZYFA_STATUS_SIZE_OVERFLOW, "desc->n_rows = %lld with dim %lld: the destination overflows 64 bits",
                (long long)d.n_rows, (long long)d.dim);
  }
  if (dst.overlaps(src)) {
    return fail(ZYFA_STATUS_ALIASED_OUTPUT, "desc->dst = %p: its %lld bytes overlap src (%p, %lld bytes)", d.dst,
                (long long)dst_bytes, d.src, (long long)src_bytes);
  }
  // One aligned float: it wraps only as the address space's last 4 bytes, which no allocation holds.
  if (address_range(d.descale, sizeof(float), &descale) && (descale.overlaps(src) || descale.overlaps(dst))) {
    return fail(ZYFA_STATUS_ALIASED_OUTPUT, "desc->descale = %p: overlaps %s (%p)", static_cast<void *>(d.descale),
                descale.overlaps(src) ? "src" : "dst", descale.overlaps(src) ? d.src : static_cast<const void *>(d.dst));
  }
  return ZYFA_STATUS_SUCCESS;
}

// Every check of a zyfa_quantize_desc, each failure with its own status; on success *row_stride is the
// resolved stride (never 0).
zyfa_status validate_quantize(const zyfa_quantize_desc *desc, int64_t *row_stride) {
  if (!desc) return fail(ZYFA_STATUS_NULL_ARGUMENT, "desc = NULL");
  // One layout exists so far: a smaller struct_size is no layout this library knows, a larger one comes
  // from a newer header whose fields would be ignored.
  if (desc->struct_size != sizeof(zyfa_quantize_desc)) {
    return fail(ZYFA_STATUS_BAD_STRUCT_SIZE, "desc->struct_size = %zu: this library knows only %zu",
                desc->struct_size, sizeof(zyfa_quantize_desc));
  }
  if (zyfa_status s = check_pointers(*desc)) return s;
  if (desc->n_rows < 1) {
    return fail(ZYFA_STATUS_BAD_ARGUMENT, "desc->n_rows = %lld: must be >= 1", (long long)desc->n_rows);
  }
  if (zyfa_status s = check_dim(*desc)) return s;
  if (zyfa_status s = check_row_stride(*desc, row_stride)) return s;
  return check_extents(*desc, *row_stride);
}

}  // namespace
}  // namespace zyfa

extern "C" {

ZYFA_API zyfa_status zyfa_quantize_fp8(const zyfa_quantize_desc *desc, void *stream) {
  return zyfa::guarded("zyfa_quantize_fp8", [&] {
    int64_t row_stride = 0;
    if (zyfa_status s = zyfa::validate_quantize(desc, &row_stride)) return s;
    int device = 0;
    if (zyfa_status s = zyfa::cuda::current_hopper_device(&device)) return s;
    return zyfa::cuda::from_cuda_error(zyfa::kernels::launch_quantize_fp8(*desc, row_stride, stream),
                                       "zyfa_quantize_fp8: launching the quantization kernels");
  });
}

ZYFA_API zyfa_status zyfa_quantize_fp8_host(const zyfa_quantize_desc *desc) {
  return zyfa::guarded("zyfa_quantize_fp8_host", [&] {
    int64_t row_stride = 0;
    if (zyfa_status s = zyfa::validate_quantize(desc, &row_stride)) return s;
    zyfa::ref::quantize_fp8_host(*desc, row_stride);
    return ZYFA_STATUS_SUCCESS;
  });
}

}  // extern "C"
