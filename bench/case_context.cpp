#include "case_context.hpp"

#include <exception>

namespace zyfa::bench {

const test::Activations &ActivationCache::get(const Shape &shape, Inputs inputs, const test::ActivationSpec &spec) {
  const std::string key = shape.family + "/" + std::to_string(shape.seqlen) + "/" + inputs_name(inputs) + "/" +
                          std::to_string(spec.std);
  if (key != key_) {
    key_.clear();
    activations_ = test::Activations{};  // free the old tensors before the new ones exist
    activations_ = make_activations(shape, inputs, spec);
    key_ = key;
  }
  return activations_;
}

CaseContext::CaseContext(const Case &c, const test::Activations &a, const std::vector<std::string> &impls,
                         cudaStream_t stream)
    : c_(c), host_(make_host_inputs(c, a)), device_(std::make_unique<DeviceInputs>(c, *host_)) {
  for (const std::string &impl : impls) {
    std::string why;
    try {
      kernels_[impl] = make_kernel(impl, *device_, stream, &why);
    } catch (const std::exception &e) {
      why = e.what();
    }
    if (!kernels_[impl]) why_not_[impl] = why.empty() ? "unavailable" : why;
  }
}

Kernel *CaseContext::kernel(const std::string &impl) const {
  auto it = kernels_.find(impl);
  return it == kernels_.end() ? nullptr : it->second.get();
}

std::string CaseContext::why_not(const std::string &impl) const {
  auto it = why_not_.find(impl);
  return it == why_not_.end() ? "" : it->second;
}

}  // namespace zyfa::bench
