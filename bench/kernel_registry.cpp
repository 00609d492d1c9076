// The implementations this binary can time, by the `impl` name the results use, and the runs of zyfa
// with an explicit P rounding (--p-rounding).
#include "kernel.hpp"

namespace zyfa::bench {

std::vector<std::string> kernel_impls() { return {"zyfa", "cudnn"}; }

std::unique_ptr<Kernel> make_kernel(const std::string &run, const DeviceInputs &in, cudaStream_t stream,
                                    std::string *why_not) {
  const RunName r = split_run_name(run);
  zyfa_p_rounding rounding = ZYFA_P_ROUNDING_DEFAULT;
  if (!r.p_rounding.empty() && (r.impl != "zyfa" || !parse_p_rounding(r.p_rounding, &rounding))) {
    *why_not = "no run '" + run + "': only zyfa takes a P rounding (default, lean or exact)";
    return nullptr;
  }
  if (r.impl == "zyfa") return make_zyfa_kernel(in, stream, rounding);
  if (r.impl == "cudnn") return make_cudnn_kernel(in, stream, why_not);
  *why_not = "unknown implementation '" + r.impl + "'";
  return nullptr;
}

}  // namespace zyfa::bench
