#include "host/fp8_asm_attention.hpp"

#include <cstdint>
#include <limits>

#include "host/code_objects.hpp"
#include "host/cuda_api.hpp"
#include "kernels/numerics.h"

namespace zyfa::kernels {
namespace {

// Returned as a cudaError_t value: cudaErrorInvalidValue.
constexpr int kInvalidValue = 1;

uint64_t address(const void *p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); }

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

}  // namespace

bool fp8_asm_attention_supports(const Problem &p) {
  // Row indices are int32 in the kernel, and rows up to the end of the last tile are formed.
  constexpr int64_t kMaxSeqlen = std::numeric_limits<int32_t>::max() - 2 * numerics::kQueryTile;
  return p.fp8() && p.seqlen <= kMaxSeqlen && p.nheads <= std::numeric_limits<int32_t>::max() &&
         find_fp8_code_object(int(p.d_qk), int(p.d_v)) != nullptr;
}

int fp8_asm_attention_ctas_per_sm() { return 1; }

asmgen::Fp8AttentionParams fp8_attention_params(const Problem &p, const Schedule &s) {
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
  return k;
}

int prepare_fp8_asm_attention(const Problem &problem) {
  if (!fp8_asm_attention_supports(problem)) return kInvalidValue;
  void *function = nullptr;
  return code_object_function(*find_fp8_code_object(int(problem.d_qk), int(problem.d_v)), &function);
}

int launch_fp8_asm_attention(const Problem &problem, const Schedule &schedule, void *stream) {
  if (schedule.jobs == nullptr || schedule.n_jobs < 1 || schedule.grid < 1) return kInvalidValue;
  if (!fp8_asm_attention_supports(problem)) return kInvalidValue;
  const CodeObject &object = *find_fp8_code_object(int(problem.d_qk), int(problem.d_v));
  void *function = nullptr;
  if (const int e = code_object_function(object, &function)) return e;
  asmgen::Fp8AttentionParams params = fp8_attention_params(problem, schedule);
  return cuda::launch_function(function, schedule.grid, object.threads, object.dynamic_smem_bytes, stream, &params);
}

}  // namespace zyfa::kernels
