// The implementations this binary can time, by the `impl` name the results use.
#include "kernel.hpp"

namespace zyfa::bench {

std::vector<std::string> kernel_impls() { return {"zyfa", "cudnn"}; }

std::unique_ptr<Kernel> make_kernel(const std::string &impl, const DeviceInputs &in, cudaStream_t stream,
                                    std::string *why_not) {
  if (impl == "zyfa") return make_zyfa_kernel(in, stream);
  if (impl == "cudnn") return make_cudnn_kernel(in, stream, why_not);
  *why_not = "unknown implementation '" + impl + "'";
  return nullptr;
}

}  // namespace zyfa::bench
