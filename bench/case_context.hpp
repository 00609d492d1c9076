// Everything one case needs on the host and the GPU, built once and shared by its repeats and
// implementations: the quantized inputs, their device copies, and one Kernel per implementation.
#ifndef ZYFA_BENCH_CASE_CONTEXT_HPP_
#define ZYFA_BENCH_CASE_CONTEXT_HPP_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "inputs.hpp"
#include "kernel.hpp"

namespace zyfa::bench {

// The activations of the last shape asked for: consecutive cases that differ only in dtype share them.
class ActivationCache {
 public:
  const test::Activations &get(const Shape &shape, Inputs inputs, const test::ActivationSpec &spec);

 private:
  std::string key_;
  test::Activations activations_;
};

class CaseContext {
 public:
  // A kernel that cannot be made (not built, unsupported, failing) is recorded with its reason.
  CaseContext(const Case &c, const test::Activations &a, const std::vector<std::string> &impls, cudaStream_t stream);

  const Case &c() const { return c_; }
  Kernel *kernel(const std::string &impl) const;  // nullptr when unavailable
  std::string why_not(const std::string &impl) const;
  test::HostAttention &host() { return *host_; }
  DeviceInputs &device() { return *device_; }

 private:
  Case c_;
  std::unique_ptr<test::HostAttention> host_;
  std::unique_ptr<DeviceInputs> device_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
  std::map<std::string, std::string> why_not_;
};

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_CASE_CONTEXT_HPP_
