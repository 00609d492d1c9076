#include "inputs.hpp"

#include <functional>
#include <string>

#include "kernels/numerics.h"

namespace zyfa::bench {

test::ActivationSpec activation_spec(Inputs inputs, Purpose purpose, float gaussian_std) {
  test::ActivationSpec spec;  // outlier_std 10, rate 0.001, structured defaults: FA3's and the generator's
  switch (inputs) {
    case Inputs::kGaussian:
      spec.kind = test::ActivationKind::kGaussian;
      spec.std = gaussian_std > 0 ? gaussian_std : purpose == Purpose::kTiming ? kTimingGaussianStd : kAccuracyGaussianStd;
      break;
    case Inputs::kOutlier:
      spec.kind = test::ActivationKind::kOutlier;
      spec.std = 1.0f;
      break;
    case Inputs::kStructured:
      spec.kind = test::ActivationKind::kStructured;
      spec.std = 1.0f;
      break;
  }
  return spec;
}

uint64_t case_seed(const Shape &shape, Inputs inputs) {
  // FNV-1a over the words that name the tensors: stable across runs, machines and compilers.
  const std::string key = shape.family + "/" + std::to_string(shape.seqlen) + "/" + std::to_string(shape.nheads) +
                          "/" + std::to_string(shape.nheads_k) + "/" + inputs_name(inputs);
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : key) h = (h ^ ch) * 1099511628211ull;
  return h;
}

test::Activations make_activations(const Shape &shape, Inputs inputs, const test::ActivationSpec &spec) {
  const test::QkvShape qkv{shape.batch, shape.seqlen, shape.nheads, shape.nheads_k, shape.d_qk, shape.d_v};
  return test::generate_activations(qkv, spec, case_seed(shape, inputs));
}

std::unique_ptr<test::HostAttention> make_host_inputs(const Case &c, const test::Activations &a) {
  test::AttentionShape s;
  s.dtype = c.dtype;
  s.layout = test::Layout::kBSHD;
  s.batch = c.shape.batch;
  s.seqlen = c.shape.seqlen;
  s.nheads = c.shape.nheads;
  s.nheads_k = c.shape.nheads_k;
  s.d_qk = c.shape.d_qk;
  s.d_v = c.shape.d_v;
  s.with_lse = true;
  auto host = std::make_unique<test::HostAttention>(s);
  host->set_inputs(a);
  return host;
}

void make_v_ones(test::HostAttention &host) {
  const bool fp8 = host.shape().fp8();
  const uint16_t one_bf16 = numerics::bf16_bits(1.0f);
  const uint8_t one_fp8 = numerics::e4m3_code(1.0f);
  for (int64_t i = 0; i < host.v.storage_elements(); ++i) {
    if (fp8) host.v.set_fp8(i, one_fp8);
    else host.v.set_bf16(i, one_bf16);
  }
  for (float &d : host.v_descale) d = 1.0f;
}

DeviceInputs::DeviceInputs(const Case &c_, const test::HostAttention &host)
    : c(c_), q(host.q.size_bytes()), k(host.k.size_bytes()), v(host.v.size_bytes()), scales(4 * sizeof(float)) {
  q.upload(host.q.data(), host.q.size_bytes());
  k.upload(host.k.data(), host.k.size_bytes());
  v.upload(host.v.data(), host.v.size_bytes());
  load_scales(host);
}

void DeviceInputs::reload_v(const test::HostAttention &host) {
  v.upload(host.v.data(), host.v.size_bytes());
  load_scales(host);
}

void DeviceInputs::load_scales(const test::HostAttention &host) {
  host_scales[0] = host.q_descale.at(0);
  host_scales[1] = host.k_descale.at(0);
  host_scales[2] = host.v_descale.at(0);
  host_scales[3] = 1.0f / host_scales[2];  // a power of two: exact
  scales.upload(host_scales, sizeof(host_scales));
}

}  // namespace zyfa::bench
