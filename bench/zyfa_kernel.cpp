// zyfa through its public C ABI only, as an application would call it.
#include <stdexcept>
#include <string>

#include "kernel.hpp"
#include "kernels/numerics.h"

namespace zyfa::bench {
namespace {

void zyfa_check(zyfa_status status, const char *what) {
  if (status != ZYFA_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + zyfa_status_string(status) + " (" + zyfa_last_error() + ")");
}

zyfa_descale device_descale(const DeviceInputs &in, int which) {
  zyfa_descale d{};
  d.kind = ZYFA_DESCALE_DEVICE;
  d.ptr = in.scales.as<const float>() + which;
  return d;  // batch and head strides 0: one value per tensor
}

class ZyfaKernel final : public Kernel {
 public:
  ZyfaKernel(const DeviceInputs &in, cudaStream_t stream, zyfa_p_rounding p_rounding)
      : shape_(in.c.shape),
        out_(size_t(shape_.batch * shape_.seqlen * shape_.nheads * shape_.d_v) * 2),
        lse_(size_t(shape_.batch * shape_.nheads * shape_.seqlen) * sizeof(float)) {
    desc_.dtype = in.c.dtype;
    desc_.layout = ZYFA_LAYOUT_BSHD;
    desc_.batch = shape_.batch;
    desc_.seqlen = shape_.seqlen;
    desc_.nheads = shape_.nheads;
    desc_.nheads_k = shape_.nheads_k;
    desc_.d_qk = shape_.d_qk;
    desc_.d_v = shape_.d_v;
    desc_.q = in.q.get();
    desc_.k = in.k.get();
    desc_.v = in.v.get();
    desc_.out = out_.get();
    desc_.lse = lse_.as<float>();
    if (in.c.dtype == ZYFA_DTYPE_FP8_E4M3) {
      desc_.q_descale = device_descale(in, 0);
      desc_.k_descale = device_descale(in, 1);
      desc_.v_descale = device_descale(in, 2);
    }
    // FP8 only: validation refuses it with BF16 (case_runs never asks for that).
    desc_.p_rounding = p_rounding;
    // The workspace an application would give it (zyfa_attn_workspace_size: 0 where none helps).
    size_t workspace_bytes = 0;
    zyfa_check(zyfa_attn_workspace_size(&desc_, &workspace_bytes), "zyfa_attn_workspace_size");
    if (workspace_bytes > 0) {
      workspace_ = DeviceBuffer(workspace_bytes);
      desc_.workspace = workspace_.get();
      desc_.workspace_bytes = workspace_bytes;
    }
    zyfa_check(zyfa_attn_prepare(&desc_, stream), "zyfa_attn_prepare");
  }

  const char *impl() const override { return "zyfa"; }
  void run(cudaStream_t stream) override { zyfa_check(zyfa_attn_fwd(&desc_, stream), "zyfa_attn_fwd"); }
  void poison_outputs() override {
    out_.poison();
    lse_.poison();
  }
  KernelOutputs read_outputs() const override {
    std::vector<uint16_t> raw(out_.bytes() / 2);
    out_.download(raw.data(), out_.bytes());
    KernelOutputs o;
    o.out.resize(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) o.out[i] = numerics::bf16_value(raw[i]);
    o.lse.resize(lse_.bytes() / sizeof(float));
    lse_.download(o.lse.data(), lse_.bytes());
    return o;
  }

 private:
  Shape shape_;
  DeviceBuffer out_, lse_, workspace_;
  zyfa_attn_desc desc_ = ZYFA_ATTN_DESC_INIT;
};

}  // namespace

std::unique_ptr<Kernel> make_zyfa_kernel(const DeviceInputs &in, cudaStream_t stream, zyfa_p_rounding p_rounding) {
  return std::make_unique<ZyfaKernel>(in, stream, p_rounding);
}

}  // namespace zyfa::bench
