#include "host/fp8_asm_attention.hpp"

#include <array>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "host/code_objects.hpp"
#include "host/cuda_api.hpp"
#include "kernels/fp8_vt_layout.h"
#include "kernels/hopper/tensor_map.cuh"
#include "kernels/numerics.h"

namespace zyfa::kernels {
namespace {

// Returned as a cudaError_t value.
constexpr int kInvalidValue = cudaErrorInvalidValue;

uint64_t address(const void *p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); }

// printf into a string, for fp8_wgmma_refusal's messages (short: one field and its limit), which the
// caller's status message then quotes.
constexpr size_t kRefusalCapacity = 320;
__attribute__((format(printf, 1, 2))) std::string formatted(const char *format, ...) {
  char m[kRefusalCapacity];
  va_list args;
  va_start(args, format);
  std::vsnprintf(m, sizeof m, format, args);
  va_end(args);
  return m;
}

void copy_strides(const TensorRef &t, int64_t *batch, int64_t *seq, int64_t *head) {
  *batch = t.batch_stride;
  *seq = t.seq_stride;
  *head = t.head_stride;
}

asmgen::Fp8DescaleParam descale(const Descale &d) {
  asmgen::Fp8DescaleParam p{};
  p.ptr = address(d.ptr);
  p.batch_stride = d.batch_stride;
  p.head_stride = d.head_stride;
  p.value = d.value;
  return p;
}

static_assert(sizeof(CUtensorMap) == sizeof(asmgen::Fp8TensorMap) &&
                  alignof(CUtensorMap) <= alignof(asmgen::Fp8TensorMap),
              "the parameter block holds CUtensorMaps as bytes");

// The fields of the parameter block that both schedules read, within the kernels' limits: row indices
// are int32 in the kernel, and rows up to the end of the last tile are formed.
constexpr int64_t kMaxSeqlen = std::numeric_limits<int32_t>::max() - 2 * kFp8MaxQueryTileRows;
constexpr int64_t kMaxHeads = std::numeric_limits<int32_t>::max();
// The epilogue (src/asmgen/fp8_store_tile.cpp) writes whole 16-byte chunks of each output row.
bool within_kernel_limits(const Problem &p) {
  return p.fp8() && p.seqlen <= kMaxSeqlen && p.nheads <= kMaxHeads && p.out_rows_in_chunks();
}

// Where a call writes V^T into a workspace: the pre-pass reads and writes V once, while the kernel's
// transposition costs a fixed share of the attention's work (3-5% at long sequences), which grows with
// group * seqlen per element of V. Measured on the H200 (bench/NOTES.md, session 16): 0.99x at gqa-d128 2K
// and mha-d192 8K (group * seqlen = 8K), 1.02-1.03x at gqa-d128 4K and mha-d192 16K (16K), 1.05x at
// gqa-d128 8K-16K. Those were two-consumer kernels. The V^T kernels have three consumers now (d = 128 since
// session 31, d_qk = 192 since session 32), 1.04-1.10x the two-consumer ones that transpose in the kernel,
// and the pre-pass pays from 8K at either head dim (sessions 32-33: mha-d128 8K 1.040x, gqa-d128 2K 1.000x;
// mha-d192 8K 1.06-1.09x, gqa-d192 2K 0.99-1.03x), but then not from 4K (mha-d128 4K 0.958x, mha-d192 4K
// 1.009x). Since the tile shift (fp8_query_tile_shift) gave the three-consumer kernels 1.065-1.068x at 4K, it
// pays from 4K too (session 41, an H100 A/B of 3 rounds: mha-d128 4K 1.008x, mha-d192 4K 1.025x).
constexpr int64_t kVtPrepassMinGroupKeys = 4096;

int prepare(const Problem &problem, bool wgmma) {
  void *function = nullptr;
  return code_object_function(*fp8_code_object(problem, wgmma), &function);
}

int loaded(const Problem &problem, bool wgmma, bool *is_loaded) {
  return code_object_loaded(*fp8_code_object(problem, wgmma), is_loaded);
}

// The kernel of `object` for a launch over `schedule`: everything that can fail before a launch, so that a
// call failing here has launched nothing (not the V^T pre-pass either). Only the launch itself can fail
// after the pre-pass: then V^T sits in the workspace, the caller's scratch, and out is untouched.
int kernel_function(const CodeObject &object, const Schedule &schedule, void **function) {
  if (schedule.jobs == nullptr || schedule.n_jobs < 1 || schedule.grid < 1) return kInvalidValue;
  return code_object_function(object, function);
}

// A kernel whose producer waits for the pre-pass before each V^T copy (overlaps_prepass; fp8_wgmma_producer.cpp)
// is launched to overlap it: its setup, Q's copy and its first K copies run during the pre-pass's tail.
int launch(const CodeObject &object, void *function, const asmgen::Fp8AttentionParams &params,
           const Schedule &schedule, void *stream) {
  asmgen::Fp8AttentionParams copy = params;
  const cuda::StreamOrder order =
      object.overlaps_prepass ? cuda::StreamOrder::kOverlapPrevious : cuda::StreamOrder::kAfterCompletion;
  return cuda::launch_function(function, schedule.grid, object.threads, object.dynamic_smem_bytes, stream, &copy,
                               order);
}

// q, k and v as the wgmma schedule maps them (one tensor map each, elements of one byte): the one list
// that fp8_wgmma_attention_supports tests and fp8_wgmma_refusal explains.
struct WgmmaOperand {
  const char *name;
  const TensorRef &t;
  int64_t batch, seqlen;
  const char *heads_field;
  int64_t heads;
  const char *dim_field;
  int64_t dim;
  hopper::TmaRefusal refusal() const {
    constexpr int64_t kByte = 1;
    return hopper::tma_refusal(t, batch, seqlen, heads, dim, kByte);
  }
};
std::array<WgmmaOperand, 3> wgmma_operands(const Problem &p) {
  return {{{"q", p.q, p.batch, p.seqlen, "nheads", p.nheads, "d_qk", p.d_qk},
           {"k", p.k, p.batch, p.seqlen, "nheads_k", p.nheads_k, "d_qk", p.d_qk},
           {"v", p.v, p.batch, p.seqlen, "nheads_k", p.nheads_k, "d_v", p.d_v}}};
}

// K in boxes of fp8_qk_block_bytes(d_qk) x 128 rows, swizzled as wide, and Q in boxes of as many rows as
// the kernel's query tile; V in 128 x 128 (128-byte swizzle): the wgmma schedule's shared layout
// (src/asmgen/fp8_wgmma_emitter.hpp).
constexpr uint32_t kVBoxBytes = 128, kBoxRows = 128;

}  // namespace

const CodeObject *fp8_code_object(const Problem &p, bool wgmma) {
  return find_fp8_code_object(int(p.d_qk), int(p.d_v), p.lean_p, p.split_p, wgmma, wgmma && p.vt_prepass);
}

bool fp8_asm_attention_supports(const Problem &p) {
  return within_kernel_limits(p) && fp8_code_object(p, /*wgmma=*/false) != nullptr;
}

bool fp8_wgmma_attention_supports(const Problem &p) {
  if (!within_kernel_limits(p) || fp8_code_object(p, /*wgmma=*/true) == nullptr) return false;
  for (const WgmmaOperand &o : wgmma_operands(p)) {
    if (o.refusal() != hopper::TmaRefusal::kMappable) return false;
  }
  return true;
}

std::string fp8_wgmma_refusal(const Problem &p) {
  if (!p.fp8()) return "desc->dtype is not ZYFA_DTYPE_FP8_E4M3";
  if (p.seqlen > kMaxSeqlen) {
    return formatted("desc->seqlen = %lld: above the FP8 kernels' limit of %lld (int32 rows)", (long long)p.seqlen,
                     (long long)kMaxSeqlen);
  }
  if (p.nheads > kMaxHeads) {
    return formatted("desc->nheads = %lld: above the FP8 kernels' limit of %lld", (long long)p.nheads,
                     (long long)kMaxHeads);
  }
  if (!p.out_rows_in_chunks()) {
    return formatted("desc->out = %p and its strides: every output row must start on %lld bytes", p.out.ptr,
                     (long long)kOutChunkBytes);
  }
  if (fp8_code_object(p, /*wgmma=*/true) == nullptr) {
    return formatted("desc->d_qk = %lld, desc->d_v = %lld: no wgmma kernel%s", (long long)p.d_qk, (long long)p.d_v,
                     p.split_p ? " with split P" : "");
  }
  using R = hopper::TmaRefusal;
  for (const WgmmaOperand &o : wgmma_operands(p)) {
    const char *field = nullptr;  // an extent TMA cannot index
    int64_t value = 0;
    const char *stride_dim = nullptr;  // a stride TMA cannot step
    int64_t stride = 0;
    switch (o.refusal()) {
      case R::kMappable: continue;
      case R::kAddress:
        return formatted("desc->%s = %p: TMA needs a %lld-byte aligned base", o.name, o.t.ptr,
                         (long long)hopper::kTmaStrideAlignBytes);
      case R::kBatch: field = "batch", value = o.batch; break;
      case R::kSeqlen: field = "seqlen", value = o.seqlen; break;
      case R::kHeads: field = o.heads_field, value = o.heads; break;
      case R::kDim: field = o.dim_field, value = o.dim; break;
      case R::kSeqStride: stride_dim = "seq", stride = o.t.seq_stride; break;
      case R::kHeadStride: stride_dim = "head", stride = o.t.head_stride; break;
      case R::kBatchStride: stride_dim = "batch", stride = o.t.batch_stride; break;
    }
    if (field != nullptr) {
      return formatted("desc->%s = %lld: above the %lld coordinates a TMA dimension holds", field, (long long)value,
                       (long long)hopper::kTmaMaxCoordinate);
    }
    return formatted("desc->%s_strides.%s = %lld elements: TMA needs a stride above 0 and below 2^40 bytes, a "
                     "multiple of %lld, wherever the extent is above 1",
                     o.name, stride_dim, (long long)stride, (long long)hopper::kTmaStrideAlignBytes);
  }
  return "";
}

int fp8_attention_ctas_per_sm() { return 1; }

int fp8_wgmma_query_tile_rows(const Problem &p) {
  const CodeObject *object = fp8_code_object(p, /*wgmma=*/true);
  return object != nullptr ? object->query_tile_rows : numerics::kQueryTile;
}

int64_t fp8_vt_workspace_bytes(const Problem &p) {
  if (p.group() * p.seqlen < kVtPrepassMinGroupKeys) return 0;
  Problem with_vt = p;  // whether the kernel that reads V^T exists for the problem and takes it
  with_vt.vt_prepass = true;
  return fp8_wgmma_attention_supports(with_vt) ? fp8_vt::workspace_bytes(p.batch, p.nheads_k, p.seqlen) : 0;
}

asmgen::Fp8AttentionParams fp8_attention_params(const Problem &p, const Schedule &s, int query_tile_rows) {
  asmgen::Fp8AttentionParams k{};
  k.q = address(p.q.ptr);
  k.k = address(p.k.ptr);
  k.v = address(p.v.ptr);
  k.out = address(p.out.ptr);
  k.lse = address(p.lse);
  k.jobs = address(s.jobs);
  copy_strides(p.q, &k.q_batch_stride, &k.q_seq_stride, &k.q_head_stride);
  copy_strides(p.k, &k.k_batch_stride, &k.k_seq_stride, &k.k_head_stride);
  copy_strides(p.v, &k.v_batch_stride, &k.v_seq_stride, &k.v_head_stride);
  copy_strides(p.out, &k.out_batch_stride, &k.out_seq_stride, &k.out_head_stride);
  k.q_descale = descale(p.q_descale);
  k.k_descale = descale(p.k_descale);
  k.v_descale = descale(p.v_descale);
  k.score_scale = p.softmax_scale * numerics::kLog2e;  // the first product of numerics.h's c
  k.seqlen = int32_t(p.seqlen);
  k.nheads = int32_t(p.nheads);
  k.group = int32_t(p.group());
  k.n_jobs = s.n_jobs;
  k.tile_row_shift = asmgen::fp8_query_tile_shift(p.seqlen, query_tile_rows);
  return k;
}

int prepare_fp8_asm_attention(const Problem &problem) {
  if (!fp8_asm_attention_supports(problem)) return kInvalidValue;
  return prepare(problem, /*wgmma=*/false);
}

int fp8_asm_attention_loaded(const Problem &problem, bool *is_loaded) {
  if (!fp8_asm_attention_supports(problem)) return kInvalidValue;
  return loaded(problem, /*wgmma=*/false, is_loaded);
}

int launch_fp8_asm_attention(const Problem &problem, const Schedule &schedule, void *stream) {
  if (!fp8_asm_attention_supports(problem)) return kInvalidValue;
  const CodeObject &object = *fp8_code_object(problem, false);
  void *function = nullptr;
  if (const int e = kernel_function(object, schedule, &function)) return e;
  return launch(object, function, fp8_attention_params(problem, schedule, object.query_tile_rows), schedule, stream);
}

int prepare_fp8_wgmma_attention(const Problem &problem) {
  if (!fp8_wgmma_attention_supports(problem)) return kInvalidValue;
  // The driver's tensor-map encoder is looked up once; here rather than in a first launch under capture.
  if (hopper::tensor_map_encoder() == nullptr) return cudaErrorNotSupported;
  // The V^T pre-pass is a runtime kernel, loaded lazily: here, not in a captured call that needs it.
  if (const int e = prepare_fp8_vt_prepass()) return e;
  return prepare(problem, /*wgmma=*/true);
}

int fp8_wgmma_attention_loaded(const Problem &problem, bool *is_loaded) {
  if (!fp8_wgmma_attention_supports(problem)) return kInvalidValue;
  return loaded(problem, /*wgmma=*/true, is_loaded);
}

int launch_fp8_wgmma_attention(const Problem &problem, const Schedule &schedule, void *stream) {
  if (!fp8_wgmma_attention_supports(problem)) return kInvalidValue;
  const CodeObject &object = *fp8_code_object(problem, true);
  void *function = nullptr;
  if (const int e = kernel_function(object, schedule, &function)) return e;
  asmgen::Fp8AttentionParams params = fp8_attention_params(problem, schedule, object.query_tile_rows);
  const Problem &p = problem;
  auto map = [](asmgen::Fp8TensorMap &m) { return reinterpret_cast<CUtensorMap *>(&m); };
  constexpr int64_t kByte = 1;
  const uint32_t qk_box = uint32_t(asmgen::fp8_qk_block_bytes(int(p.d_qk)));
  constexpr uint32_t kSwizzle128Bytes = 128;  // a box row this wide takes the 128-byte swizzle
  const CUtensorMapSwizzle qk_swizzle =
      qk_box == kSwizzle128Bytes ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
  if (const int e = hopper::encode_head_map(map(params.q_map), p.q, p.batch, p.seqlen, p.nheads, p.d_qk, kByte,
                                            qk_box, uint32_t(object.query_tile_rows), qk_swizzle))
    return e;
  if (const int e = hopper::encode_head_map(map(params.k_map), p.k, p.batch, p.seqlen, p.nheads_k, p.d_qk, kByte,
                                            qk_box, kBoxRows, qk_swizzle))
    return e;
  if (p.vt_prepass) {
    // V^T per (batch, kv head): rows of padded keys, one per dimension; boxes of 128 keys x 128 dimensions.
    if (p.workspace == nullptr) return kInvalidValue;
    const int64_t keys = fp8_vt::padded_keys(p.seqlen);
    const TensorRef vt{p.workspace, p.nheads_k * fp8_vt::kVtDims * keys, keys, fp8_vt::kVtDims * keys};
    if (const int e = hopper::encode_head_map(map(params.v_map), vt, p.batch, fp8_vt::kVtDims, p.nheads_k, keys,
                                              kByte, kVBoxBytes, kBoxRows, CU_TENSOR_MAP_SWIZZLE_128B))
      return e;
    if (const int e = launch_fp8_vt_prepass(p, p.workspace, stream)) return e;
  } else if (const int e = hopper::encode_head_map(map(params.v_map), p.v, p.batch, p.seqlen, p.nheads_k, p.d_v,
                                                   kByte, kVBoxBytes, kBoxRows, CU_TENSOR_MAP_SWIZZLE_128B)) {
    return e;
  }
  return launch(object, function, params, schedule, stream);
}

}  // namespace zyfa::kernels
