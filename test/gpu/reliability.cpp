#include "reliability.hpp"

#include <cmath>
#include <cstdlib>
#include <random>

#include "ref/reference.hpp"
#include "support/error_limits.hpp"

namespace zyfa::test::reliability {

DeviceProblem::DeviceProblem(const AttentionShape &shape, uint64_t seed) : host_(shape) {
  host_.set_inputs(generate_activations(shape.qkv(), ActivationSpec{}, seed));
  host_.poison_outputs();
  device_ = std::make_unique<DeviceAttention>(host_);
}

cudaError_t DeviceProblem::poison(cudaStream_t stream) const {
  return static_cast<cudaError_t>(device_->poison_outputs(stream));
}

std::string DeviceProblem::download_bytes(std::vector<uint8_t> *out, std::vector<uint8_t> *lse) const {
  const zyfa_attn_desc d = desc();
  out->resize(host_.out.size_bytes());
  std::string s = cuda_message("cudaMemcpy out", cudaMemcpy(out->data(), d.out, out->size(), cudaMemcpyDeviceToHost));
  if (s.empty() && lse != nullptr) {
    lse->resize(d.lse ? host_.lse.size() * sizeof(float) : 0);
    if (d.lse) s = cuda_message("cudaMemcpy lse", cudaMemcpy(lse->data(), d.lse, lse->size(), cudaMemcpyDeviceToHost));
  }
  return s;
}

std::string DeviceProblem::refill(uint64_t seed) {
  host_.set_inputs(generate_activations(shape().qkv(), ActivationSpec{}, seed));
  return upload_inputs();
}

std::string DeviceProblem::share_batch0_kv() {
  host_.share_batch0_kv();
  return upload_inputs();
}

zyfa_attn_desc DeviceProblem::broadcast_kv_desc() const {
  const AttentionShape &sh = host_.shape();
  zyfa_attn_desc d = desc();
  // BSHD buffers without gaps, which these strides spell out; other layouts get a descriptor that fails.
  if (sh.layout != Layout::kBSHD) d.seqlen = 0;
  d.layout = ZYFA_LAYOUT_STRIDED;
  d.q_strides = zyfa_strides{sh.seqlen * sh.nheads * sh.d_qk, sh.nheads * sh.d_qk, sh.d_qk};
  d.k_strides = zyfa_strides{0, sh.nheads_k * sh.d_qk, sh.d_qk};
  d.v_strides = zyfa_strides{0, sh.nheads_k * sh.d_v, sh.d_v};
  d.out_strides = zyfa_strides{sh.seqlen * sh.nheads * sh.d_v, sh.nheads * sh.d_v, sh.d_v};
  return d;
}

std::string DeviceProblem::upload_inputs() {
  const zyfa_attn_desc d = desc();
  struct Copy {
    const void *dst;
    const void *src;
    size_t bytes;
  };
  std::vector<Copy> copies = {{d.q, host_.q.data(), host_.q.size_bytes()},
                              {d.k, host_.k.data(), host_.k.size_bytes()},
                              {d.v, host_.v.data(), host_.v.size_bytes()}};
  if (d.q_descale.kind == ZYFA_DESCALE_DEVICE) {
    copies.push_back({d.q_descale.ptr, host_.q_descale.data(), host_.q_descale.size() * sizeof(float)});
    copies.push_back({d.k_descale.ptr, host_.k_descale.data(), host_.k_descale.size() * sizeof(float)});
    copies.push_back({d.v_descale.ptr, host_.v_descale.data(), host_.v_descale.size() * sizeof(float)});
  }
  for (const Copy &c : copies) {
    const std::string s =
        cuda_message("cudaMemcpy refill", cudaMemcpy(const_cast<void *>(c.dst), c.src, c.bytes, cudaMemcpyHostToDevice));
    if (!s.empty()) return s;
  }
  // As after DeviceAttention's uploads: pageable copies may still be in flight, and the calls that follow run
  // on non-blocking streams.
  return cuda_message("cudaDeviceSynchronize after the refill", cudaDeviceSynchronize());
}

zyfa_plan_cache_stats cache_stats() {
  zyfa_plan_cache_stats s = ZYFA_PLAN_CACHE_STATS_INIT;
  EXPECT_EQ(zyfa_plan_cache_get_stats(&s), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  return s;
}

::testing::AssertionResult matches_fp64(const HostAttention &host) {
  const ::testing::AssertionResult written = outputs_written(host);
  if (!written) return written;
  const bool fp8 = host.shape().fp8();
  const ref::ReferenceResult exact = ref::attention_fp64(host.problem());
  const ErrorStats out = compare_to_reference(host.out_values(), exact.out);
  const double out_limit = fp8 ? max_rel_rms_gpu(host.shape()) : kMaxRelRmsBf16;
  const ::testing::AssertionResult out_ok = within_rel_rms(out, out_limit);
  if (!out_ok) return ::testing::AssertionFailure() << host.shape().name() << " out: " << out_ok.message();
  if (host.shape().with_lse) {
    const ErrorStats lse = compare_to_reference(host.lse_values(), exact.lse);
    const double limit = fp8 ? max_lse_err_gpu(host.shape()) : kMaxLseAbsBf16;
    if (lse.count <= 0 || lse.nonfinite != 0 || !(lse.max_abs <= limit)) {
      return ::testing::AssertionFailure() << host.shape().name() << " lse: " << lse.describe() << ", limit max_abs "
                                           << limit;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace zyfa::test::reliability
