#include "host/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>

#include "host/byte_range.hpp"
#include "host/c_enum.hpp"
#include "host/error.hpp"
#include "host/fp8_asm_attention.hpp"
#include "kernels/numerics.h"

namespace zyfa {
namespace {

constexpr int64_t kLseBytes = 4;

struct SupportedHeadDims {
  int64_t d_qk, d_v;
};
// d = 128, and the per-head form of multi-head latent attention that prefill uses.
constexpr SupportedHeadDims kSupportedHeadDims[] = {{128, 128}, {192, 128}};

bool mul_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out); }
bool add_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_add_overflow(a, b, out); }

// One tensor of shape (batch, seqlen, heads, dim) as validation sees it.
struct TensorSpec {
  const char *name;  // "q", "k", "v", "out"
  const void *ptr;
  int64_t heads, dim, element_bytes;
  zyfa_strides strides;  // elements
};

// Strides of a contiguous tensor in the two named layouts.
zyfa_strides layout_strides(zyfa_layout layout, int64_t seqlen, int64_t heads, int64_t dim) {
  if (layout == ZYFA_LAYOUT_BSHD) return {seqlen * heads * dim, heads * dim, dim};
  return {heads * seqlen * dim, dim, seqlen * dim};  // BHSD
}

// Where the bytes from an array's first element to one past its last overflow 64 bits: the array holds
// `inner` contiguous elements at every index of `extents` (each extent >= 1), `strides` elements apart.
enum class SpanOverflow { kNone, kLastOffset, kBytes };
template <size_t N>
SpanOverflow span_bytes(const int64_t (&extents)[N], const int64_t (&strides)[N], int64_t inner,
                        int64_t element_bytes, int64_t *elements, int64_t *bytes) {
  int64_t last = inner - 1;  // the offset of the last element, in elements
  for (size_t i = 0; i < N; ++i) {
    int64_t term = 0;
    if (mul_overflows(extents[i] - 1, strides[i], &term) || add_overflows(last, term, &last)) {
      return SpanOverflow::kLastOffset;
    }
  }
  if (add_overflows(last, 1, elements) || mul_overflows(*elements, element_bytes, bytes)) return SpanOverflow::kBytes;
  return SpanOverflow::kNone;
}

// The number of bytes from the tensor's first element to one past its last, or an overflow status.
zyfa_status tensor_extent_bytes(const TensorSpec &t, int64_t batch, int64_t seqlen, int64_t *bytes) {
  const int64_t extents[3] = {batch, seqlen, t.heads};
  const int64_t strides[3] = {t.strides.batch, t.strides.seq, t.strides.head};
  int64_t elements = 0;
  switch (span_bytes(extents, strides, t.dim, t.element_bytes, &elements, bytes)) {
    case SpanOverflow::kNone: return ZYFA_STATUS_SUCCESS;
    case SpanOverflow::kLastOffset:
      return fail(ZYFA_STATUS_SIZE_OVERFLOW,
                  "desc->%s: the offset of its last element overflows 64 bits (extents %lld, %lld, %lld; strides "
                  "%lld, %lld, %lld elements)",
                  t.name, (long long)extents[0], (long long)extents[1], (long long)extents[2],
                  (long long)strides[0], (long long)strides[1], (long long)strides[2]);
    case SpanOverflow::kBytes: break;
  }
  return fail(ZYFA_STATUS_SIZE_OVERFLOW,
              "desc->%s: its size in bytes overflows 64 bits (%lld elements from first to last, %lld bytes each)",
              t.name, (long long)elements, (long long)t.element_bytes);
}

zyfa_status check_strides(const TensorSpec &t, int64_t batch, int64_t seqlen, bool written) {
  const char *const names[3] = {"batch", "seq", "head"};
  const int64_t extents[3] = {batch, seqlen, t.heads};
  const int64_t strides[3] = {t.strides.batch, t.strides.seq, t.strides.head};
  for (int i = 0; i < 3; ++i) {
    if (strides[i] < 0) {
      return fail(ZYFA_STATUS_BAD_STRIDE, "desc->%s_strides.%s = %lld: strides must be >= 0", t.name, names[i],
                  (long long)strides[i]);
    }
    // In elements, so that no product of a caller's stride can overflow.
    const int64_t granule = kTensorAlignmentBytes / t.element_bytes;
    if (extents[i] > 1 && strides[i] % granule != 0) {
      return fail(ZYFA_STATUS_BAD_STRIDE,
                  "desc->%s_strides.%s = %lld elements: must be a multiple of %lld elements (%lld bytes)", t.name,
                  names[i], (long long)strides[i], (long long)granule, (long long)kTensorAlignmentBytes);
    }
  }
  if (!written) return ZYFA_STATUS_SUCCESS;  // inputs may overlap themselves (broadcast reads)
  // A written tensor must map distinct elements to distinct addresses: ordered by stride, each dimension
  // must step past everything the smaller ones cover, which ends (extent - 1) strides past their span.
  // Dimensions of extent 1 never step.
  struct Dim {
    int64_t stride, extent;
  };
  Dim dims[3] = {{strides[0], extents[0]}, {strides[1], extents[1]}, {strides[2], extents[2]}};
  std::sort(dims, dims + 3, [](const Dim &a, const Dim &b) { return a.stride < b.stride; });
  int64_t covered = t.dim;  // elements spanned by the dimensions below
  for (const Dim &d : dims) {
    if (d.extent == 1) continue;
    if (d.stride < covered) {
      return fail(ZYFA_STATUS_BAD_STRIDE,
                  "desc->%s_strides = {%lld, %lld, %lld}: rows of the output overlap (a stride of %lld elements "
                  "is smaller than the %lld elements below it)",
                  t.name, (long long)strides[0], (long long)strides[1], (long long)strides[2], (long long)d.stride,
                  (long long)covered);
    }
    int64_t last_step = 0;
    if (mul_overflows(d.stride, d.extent - 1, &last_step) || add_overflows(covered, last_step, &covered)) {
      return fail(ZYFA_STATUS_SIZE_OVERFLOW,
                  "desc->%s: the span of a stride of %lld elements over its extent %lld overflows 64 bits", t.name,
                  (long long)d.stride, (long long)d.extent);
    }
  }
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status check_descale(const char *name, const zyfa_descale &d, bool fp8, int64_t batch, int64_t nheads_k,
                          PointerCheck pointers, Descale *out, int64_t *device_bytes) {
  *device_bytes = 0;
  const int kind = c_enum_value(d.kind);
  if (!fp8) {
    if (kind != ZYFA_DESCALE_NONE) {
      return fail(ZYFA_STATUS_FP8_FIELD_WITH_BF16,
                  "desc->%s.kind = %d: descales apply to FP8 inputs only; with dtype BF16 leave it "
                  "ZYFA_DESCALE_NONE",
                  name, kind);
    }
    *out = Descale{};
    return ZYFA_STATUS_SUCCESS;
  }
  switch (kind) {
    case ZYFA_DESCALE_HOST:
      if (!(d.value > 0.0f) || !std::isfinite(d.value) || !std::isnormal(d.value)) {
        return fail(ZYFA_STATUS_BAD_DESCALE, "desc->%s.value = %g: must be a positive normal float", name,
                    (double)d.value);
      }
      *out = Descale{d.value, nullptr, 0, 0};
      return ZYFA_STATUS_SUCCESS;
    case ZYFA_DESCALE_DEVICE: {
      if (d.ptr == nullptr && pointers == PointerCheck::kRequired) {
        return fail(ZYFA_STATUS_BAD_DESCALE, "desc->%s.ptr = NULL: kind ZYFA_DESCALE_DEVICE needs a float32 pointer",
                    name);
      }
      if (misaligned(d.ptr, alignof(float))) {
        return fail(ZYFA_STATUS_BAD_DESCALE, "desc->%s.ptr = %p: not 4-byte aligned", name, (const void *)d.ptr);
      }
      if (d.batch_stride < 0 || d.head_stride < 0) {
        return fail(ZYFA_STATUS_BAD_DESCALE,
                    "desc->%s strides = (%lld, %lld): must be >= 0 (0, 0 for one element; (batch, nheads_k) "
                    "otherwise)",
                    name, (long long)d.batch_stride, (long long)d.head_stride);
      }
      const int64_t extents[2] = {batch, nheads_k}, strides[2] = {d.batch_stride, d.head_stride};
      int64_t elements = 0;
      switch (span_bytes(extents, strides, 1, int64_t(sizeof(float)), &elements, device_bytes)) {
        case SpanOverflow::kNone: break;
        case SpanOverflow::kLastOffset:
          return fail(ZYFA_STATUS_SIZE_OVERFLOW,
                      "desc->%s: the offset of its last element overflows 64 bits (extents batch %lld, nheads_k %lld; "
                      "batch_stride %lld, head_stride %lld)",
                      name, (long long)batch, (long long)nheads_k, (long long)d.batch_stride, (long long)d.head_stride);
        case SpanOverflow::kBytes:
          return fail(ZYFA_STATUS_SIZE_OVERFLOW,
                      "desc->%s: its size in bytes overflows 64 bits (extents batch %lld, nheads_k %lld; batch_stride "
                      "%lld, head_stride %lld)",
                      name, (long long)batch, (long long)nheads_k, (long long)d.batch_stride, (long long)d.head_stride);
      }
      *out = Descale{1.0f, d.ptr, d.batch_stride, d.head_stride};
      return ZYFA_STATUS_SUCCESS;
    }
    case ZYFA_DESCALE_NONE:
      return fail(ZYFA_STATUS_BAD_DESCALE,
                  "desc->%s.kind = ZYFA_DESCALE_NONE: FP8 inputs need a descale (ZYFA_DESCALE_HOST or "
                  "ZYFA_DESCALE_DEVICE)",
                  name);
    default:
      return fail(ZYFA_STATUS_BAD_DESCALE, "desc->%s.kind = %d: not a zyfa_descale_kind", name, kind);
  }
}

// Every size of zyfa_attn_desc ever released, oldest first, as released (LP64): when a field is appended, add
// the new size here. A caller's descriptor is read up to its struct_size, and the fields past it keep the
// defaults of ZYFA_ATTN_DESC_INIT. The sizes are literals so that a field moved or inserted by mistake fails
// here instead of moving an old layout's size with it.
static_assert(sizeof(void *) == 8 && sizeof(size_t) == 8, "zyfa's descriptor layouts are those of LP64 hosts");
constexpr size_t kAttnDescV1Size = 304;  // 0.1.0: up to v_descale
constexpr size_t kAttnDescV2Size = 312;  // up to p_rounding and its padding (reserved0), before 0.2.0
constexpr size_t kAttnDescV3Size = 328;  // 0.2.0: up to workspace_bytes
static_assert(offsetof(zyfa_attn_desc, p_rounding) == kAttnDescV1Size, "p_rounding starts where layout 1 ended");
static_assert(offsetof(zyfa_attn_desc, workspace) == kAttnDescV2Size, "the workspace starts where layout 2 ended");
static_assert(sizeof(zyfa_attn_desc) == kAttnDescV3Size, "a field appended: add its layout's size here");
constexpr size_t kKnownAttnDescSizes[] = {kAttnDescV1Size, kAttnDescV2Size, kAttnDescV3Size};
// The workspace's alignment: TMA's and every vector access's, with room.
constexpr int64_t kWorkspaceAlignmentBytes = 256;

const char *p_rounding_name(int value) {
  switch (value) {
    case ZYFA_P_ROUNDING_DEFAULT: return "ZYFA_P_ROUNDING_DEFAULT";
    case ZYFA_P_ROUNDING_LEAN: return "ZYFA_P_ROUNDING_LEAN";
    case ZYFA_P_ROUNDING_EXACT: return "ZYFA_P_ROUNDING_EXACT";
    case ZYFA_P_ROUNDING_SPLIT: return "ZYFA_P_ROUNDING_SPLIT";
  }
  return nullptr;
}

// p_rounding: a known value; FP8 only. Every FP8 head dim has both lean and exact P kernels.
zyfa_status check_p_rounding(int value, bool fp8) {
  const char *name = p_rounding_name(value);
  if (name == nullptr) {
    return fail(ZYFA_STATUS_BAD_ARGUMENT,
                "desc->p_rounding = %d: not a zyfa_p_rounding (ZYFA_P_ROUNDING_DEFAULT (0), ZYFA_P_ROUNDING_LEAN "
                "(1), ZYFA_P_ROUNDING_EXACT (2) or ZYFA_P_ROUNDING_SPLIT (3))",
                value);
  }
  if (!fp8 && value != ZYFA_P_ROUNDING_DEFAULT) {
    return fail(ZYFA_STATUS_FP8_FIELD_WITH_BF16,
                "desc->p_rounding = %s (%d): P rounding applies to FP8 inputs only; with dtype BF16 leave it "
                "ZYFA_P_ROUNDING_DEFAULT",
                name, value);
  }
  return ZYFA_STATUS_SUCCESS;
}

struct ByteRange {
  const char *name;
  AddressRange range;
  bool written;  // out, lse and the workspace
};

// The workspace fields, for a problem whose other fields are valid: where the call can use a workspace and
// the caller gives one, it must be large enough, aligned, and (in a call) not NULL; it then joins the
// written ranges and the problem runs the kernel that reads it.
zyfa_status check_workspace(const zyfa_attn_desc &d, PointerCheck pointers, Problem *p, ByteRange *ranges,
                            int *n_ranges) {
  if (d.workspace_bytes == 0) return ZYFA_STATUS_SUCCESS;  // runs without one: nothing to size
  const int64_t needed = kernels::fp8_vt_workspace_bytes(*p);
  if (needed == 0) return ZYFA_STATUS_SUCCESS;  // the problem has no use for one: it runs without
  if (d.workspace_bytes < uint64_t(needed)) {
    return fail(ZYFA_STATUS_BAD_ARGUMENT,
                "desc->workspace_bytes = %zu: below the %lld bytes this problem uses (zyfa_attn_workspace_size); "
                "give at least that many, or 0 to run without a workspace",
                d.workspace_bytes, (long long)needed);
  }
  if (d.workspace == nullptr) {
    if (pointers == PointerCheck::kRequired) {
      return fail(ZYFA_STATUS_NULL_TENSOR, "desc->workspace = NULL with desc->workspace_bytes = %zu: give the "
                  "workspace's device memory, or workspace_bytes = 0 to run without one", d.workspace_bytes);
    }
  } else {
    if (misaligned(d.workspace, kWorkspaceAlignmentBytes)) {
      return fail(ZYFA_STATUS_MISALIGNED, "desc->workspace = %p: must be %llu-byte aligned", d.workspace,
                  (unsigned long long)kWorkspaceAlignmentBytes);
    }
    AddressRange range;
    if (!address_range(d.workspace, uint64_t(needed), &range)) {
      return fail(ZYFA_STATUS_SIZE_OVERFLOW, "desc->workspace = %p: the workspace wraps around the address space",
                  d.workspace);
    }
    ranges[(*n_ranges)++] = {"workspace", range, /*written=*/true};
  }
  p->vt_prepass = true;
  p->workspace = d.workspace;
  return ZYFA_STATUS_SUCCESS;
}

}  // namespace

zyfa_status validate_attention(const zyfa_attn_desc *desc, PointerCheck pointers, Problem *problem) {
  if (desc == nullptr) return fail(ZYFA_STATUS_NULL_ARGUMENT, "desc = NULL");
  const size_t size = desc->struct_size;
  if (std::find(std::begin(kKnownAttnDescSizes), std::end(kKnownAttnDescSizes), size) ==
      std::end(kKnownAttnDescSizes)) {
    return fail(ZYFA_STATUS_BAD_STRUCT_SIZE,
                "desc->struct_size = %zu: this zyfa (%d.%d.%d) reads zyfa_attn_desc of %zu bytes (or %zu and %zu, "
                "the earlier layouts); initialize with ZYFA_ATTN_DESC_INIT and build against the header of the "
                "library you load",
                size, ZYFA_VERSION_MAJOR, ZYFA_VERSION_MINOR, ZYFA_VERSION_PATCH, sizeof(zyfa_attn_desc),
                kAttnDescV1Size, kAttnDescV2Size);
  }
  // Only the caller's bytes are read: an older caller's struct ends before the newer fields.
  zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;
  std::memcpy(static_cast<void *>(&d), desc, size);
  const int dtype = c_enum_value(d.dtype), layout = c_enum_value(d.layout);
  if (dtype != ZYFA_DTYPE_BF16 && dtype != ZYFA_DTYPE_FP8_E4M3) {
    return fail(ZYFA_STATUS_BAD_DTYPE, "desc->dtype = %d: must be ZYFA_DTYPE_BF16 (0) or ZYFA_DTYPE_FP8_E4M3 (1)",
                dtype);
  }
  if (layout != ZYFA_LAYOUT_BSHD && layout != ZYFA_LAYOUT_BHSD && layout != ZYFA_LAYOUT_STRIDED) {
    return fail(ZYFA_STATUS_BAD_LAYOUT,
                "desc->layout = %d: must be ZYFA_LAYOUT_BSHD (0), ZYFA_LAYOUT_BHSD (1) or ZYFA_LAYOUT_STRIDED (2)",
                layout);
  }
  if (d.causal != 1) {
    return fail(ZYFA_STATUS_NOT_CAUSAL, "desc->causal = %d: zyfa implements causal attention only; set it to 1",
                (int)d.causal);
  }
  const struct {
    const char *name;
    int64_t value;
  } extents[] = {{"batch", d.batch}, {"seqlen", d.seqlen}, {"nheads", d.nheads}, {"nheads_k", d.nheads_k}};
  for (const auto &e : extents) {
    if (e.value < 1) return fail(ZYFA_STATUS_BAD_SHAPE, "desc->%s = %lld: must be >= 1", e.name, (long long)e.value);
  }
  // The kernels index batch, heads and query tiles with 32-bit integers (src/kernels/job.h).
  constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();
  for (const auto &e : extents) {
    if (e.value > kMaxExtent) {
      return fail(ZYFA_STATUS_SIZE_OVERFLOW, "desc->%s = %lld: must be at most %lld", e.name, (long long)e.value,
                  (long long)kMaxExtent);
    }
  }
  if (d.nheads % d.nheads_k != 0) {
    return fail(ZYFA_STATUS_BAD_HEAD_RATIO, "desc->nheads = %lld is not a multiple of desc->nheads_k = %lld",
                (long long)d.nheads, (long long)d.nheads_k);
  }
  const bool head_dims_supported = std::any_of(std::begin(kSupportedHeadDims), std::end(kSupportedHeadDims),
                                               [&](const SupportedHeadDims &s) { return s.d_qk == d.d_qk && s.d_v == d.d_v; });
  if (!head_dims_supported) {
    return fail(ZYFA_STATUS_UNSUPPORTED_HEAD_DIM,
                "(desc->d_qk, desc->d_v) = (%lld, %lld): supported are (128, 128) and (192, 128)", (long long)d.d_qk,
                (long long)d.d_v);
  }
  if (std::isnan(d.softmax_scale) || std::isinf(d.softmax_scale) || d.softmax_scale < 0.0f) {
    return fail(ZYFA_STATUS_BAD_SOFTMAX_SCALE, "desc->softmax_scale = %g: must be finite and >= 0 (0 = 1/sqrt(d_qk))",
                (double)d.softmax_scale);
  }
  const bool fp8 = d.dtype == ZYFA_DTYPE_FP8_E4M3;
  const int p_rounding = c_enum_value(d.p_rounding);
  if (zyfa_status s = check_p_rounding(p_rounding, fp8)) return s;
  Problem p;
  p.dtype = d.dtype;
  p.batch = d.batch;
  p.seqlen = d.seqlen;
  p.nheads = d.nheads;
  p.nheads_k = d.nheads_k;
  p.d_qk = d.d_qk;
  p.d_v = d.d_v;
  p.softmax_scale = resolve_softmax_scale(d.softmax_scale, d.d_qk);
  p.lean_p = resolve_lean_p(fp8, p_rounding, d.d_qk);
  p.split_p = fp8 && p_rounding == ZYFA_P_ROUNDING_SPLIT;
  const struct {
    const char *name;
    const zyfa_descale &given;
    Descale &resolved;
  } descales[3] = {{"q_descale", d.q_descale, p.q_descale},
                   {"k_descale", d.k_descale, p.k_descale},
                   {"v_descale", d.v_descale, p.v_descale}};
  int64_t descale_bytes[3] = {};
  for (int i = 0; i < 3; ++i) {
    if (zyfa_status s = check_descale(descales[i].name, descales[i].given, fp8, d.batch, d.nheads_k, pointers,
                                      &descales[i].resolved, &descale_bytes[i])) {
      return s;
    }
  }

  // The kernels scale scores by c = softmax_scale * log2(e) [* q_descale * k_descale] in fp32, in that order
  // (numerics.h): finite fields whose product overflows would make every output NaN. Device descales are
  // not read here (each counts as 1).
  const float score_scale = p.softmax_scale * numerics::kLog2e;
  if (!std::isfinite(score_scale)) {
    return fail(ZYFA_STATUS_BAD_SOFTMAX_SCALE, "desc->softmax_scale = %g: times log2(e) it overflows float",
                (double)d.softmax_scale);
  }
  if (fp8) {
    // e4m3 bounds every input by 448, so the largest score is c times 448^2 d_qk (c itself overflowing is the
    // extreme case), and the largest output 448 v_descale. Descales under which those overflow the kernels'
    // arithmetic (the float score, its reference max rounded up to 1/8, the BF16 output) are refused. This
    // bounds the descales, not the inputs: scores whose magnitude passes about 2^22 (log2 units) are beyond
    // the numerics anyway (numerics.h), far above any attention's.
    constexpr double kLargestBf16 = 3.3895313892515355e38;  // 0x7f7f
    const double largest_score = double(score_scale) * p.q_descale.value * p.k_descale.value *
                                 double(numerics::kE4m3Max) * numerics::kE4m3Max * double(d.d_qk);
    constexpr double kScoreHeadroom = 8;  // how far below float's largest value the largest score must stay
    if (largest_score > double(std::numeric_limits<float>::max()) / kScoreHeadroom) {
      return fail(ZYFA_STATUS_BAD_DESCALE,
                  "desc->q_descale.value * desc->k_descale.value = %g * %g: the score of two 448-valued rows (d_qk "
                  "= %lld) times softmax_scale * log2(e) = %g overflows float (with 8x headroom)",
                  (double)p.q_descale.value, (double)p.k_descale.value, (long long)d.d_qk, (double)score_scale);
    }
    if (double(p.v_descale.value) * numerics::kE4m3Max > kLargestBf16) {
      return fail(ZYFA_STATUS_BAD_DESCALE, "desc->v_descale.value = %g: times 448, the largest e4m3 value, it "
                  "overflows the BF16 output", (double)p.v_descale.value);
    }
  }

  // Element counts: batch * seqlen * heads * dim must fit 64 bits for every tensor before any stride math.
  const int64_t in_bytes = fp8 ? kFp8Bytes : kBf16Bytes;
  TensorSpec tensors[4] = {{"q", d.q, d.nheads, d.d_qk, in_bytes, {}},
                           {"k", d.k, d.nheads_k, d.d_qk, in_bytes, {}},
                           {"v", d.v, d.nheads_k, d.d_v, in_bytes, {}},
                           {"out", d.out, d.nheads, d.d_v, kBf16Bytes, {}}};
  const zyfa_strides given[4] = {d.q_strides, d.k_strides, d.v_strides, d.out_strides};
  for (int i = 0; i < 4; ++i) {
    TensorSpec &t = tensors[i];
    int64_t count = 0;
    if (mul_overflows(d.batch, d.seqlen, &count) || mul_overflows(count, t.heads, &count) ||
        mul_overflows(count, t.dim, &count) || mul_overflows(count, t.element_bytes, &count)) {
      return fail(ZYFA_STATUS_SIZE_OVERFLOW,
                  "desc->%s: batch * seqlen * heads * dim = %lld * %lld * %lld * %lld bytes overflows 64 bits", t.name,
                  (long long)d.batch, (long long)d.seqlen, (long long)t.heads, (long long)t.dim);
    }
    t.strides = d.layout == ZYFA_LAYOUT_STRIDED ? given[i] : layout_strides(d.layout, d.seqlen, t.heads, t.dim);
    if (zyfa_status s = check_strides(t, d.batch, d.seqlen, /*written=*/i == 3)) return s;
  }
  int64_t lse_bytes = 0;
  if (mul_overflows(d.batch * d.nheads, d.seqlen, &lse_bytes) || mul_overflows(lse_bytes, kLseBytes, &lse_bytes)) {
    return fail(ZYFA_STATUS_SIZE_OVERFLOW, "desc->lse: batch * nheads * seqlen = %lld * %lld * %lld floats overflows 64 bits",
                (long long)d.batch, (long long)d.nheads, (long long)d.seqlen);
  }

  // q, k, v, out, lse, up to three device descales (read by every CTA while others write out) and the
  // workspace.
  ByteRange ranges[9];
  int n_ranges = 0;
  for (const TensorSpec &t : tensors) {
    int64_t extent = 0;
    if (zyfa_status s = tensor_extent_bytes(t, d.batch, d.seqlen, &extent)) return s;
    if (t.ptr == nullptr) {
      if (pointers == PointerCheck::kRequired) {
        return fail(ZYFA_STATUS_NULL_TENSOR, "desc->%s = NULL: a tensor pointer is required", t.name);
      }
      continue;
    }
    if (misaligned(t.ptr, kTensorAlignmentBytes)) {
      return fail(ZYFA_STATUS_MISALIGNED, "desc->%s = %p: must be %lld-byte aligned", t.name, t.ptr,
                  (long long)kTensorAlignmentBytes);
    }
    AddressRange range;
    if (!address_range(t.ptr, uint64_t(extent), &range)) {
      return fail(ZYFA_STATUS_SIZE_OVERFLOW, "desc->%s = %p: the tensor wraps around the address space", t.name,
                  t.ptr);
    }
    ranges[n_ranges++] = {t.name, range, /*written=*/&t == &tensors[3]};
  }
  if (d.lse != nullptr) {
    if (misaligned(d.lse, alignof(float))) {
      return fail(ZYFA_STATUS_MISALIGNED, "desc->lse = %p: must be 4-byte aligned", (void *)d.lse);
    }
    AddressRange range;
    if (!address_range(d.lse, uint64_t(lse_bytes), &range)) {
      return fail(ZYFA_STATUS_SIZE_OVERFLOW, "desc->lse = %p: the LSE wraps around the address space", (void *)d.lse);
    }
    ranges[n_ranges++] = {"lse", range, /*written=*/true};
  }
  for (int i = 0; i < 3; ++i) {
    if (descales[i].resolved.ptr == nullptr) continue;
    AddressRange range;
    if (!address_range(descales[i].resolved.ptr, uint64_t(descale_bytes[i]), &range)) {
      return fail(ZYFA_STATUS_SIZE_OVERFLOW, "desc->%s.ptr = %p: its %lld bytes of descales wrap around the address space",
                  descales[i].name, (const void *)descales[i].resolved.ptr, (long long)descale_bytes[i]);
    }
    ranges[n_ranges++] = {descales[i].name, range, /*written=*/false};
  }
  auto ref = [](const TensorSpec &t) { return TensorRef{t.ptr, t.strides.batch, t.strides.seq, t.strides.head}; };
  p.q = ref(tensors[0]);
  p.k = ref(tensors[1]);
  p.v = ref(tensors[2]);
  p.out = ref(tensors[3]);
  p.lse = d.lse;
  if (pointers != PointerCheck::kShapeOnly) {
    if (zyfa_status s = check_workspace(d, pointers, &p, ranges, &n_ranges)) return s;
  }
  // The written ranges (out, lse, workspace) must not overlap any other range; inputs may share memory.
  for (int i = 0; i < n_ranges; ++i) {
    if (!ranges[i].written) continue;
    for (int j = 0; j < n_ranges; ++j) {
      if (j != i && ranges[i].range.overlaps(ranges[j].range)) {
        return fail(ZYFA_STATUS_ALIASED_OUTPUT,
                    "desc->%s overlaps desc->%s: bytes [%#llx, %#llx) and [%#llx, %#llx), each from its first "
                    "element to one past its last; outputs must not alias any tensor",
                    ranges[i].name, ranges[j].name, (unsigned long long)ranges[i].range.begin,
                    (unsigned long long)ranges[i].range.end, (unsigned long long)ranges[j].range.begin,
                    (unsigned long long)ranges[j].range.end);
      }
    }
  }

  *problem = p;
  return ZYFA_STATUS_SUCCESS;
}

}  // namespace zyfa
