// One attention implementation bound to one case's device inputs: zyfa through its C ABI, or a peer.
// The harness only ever runs, poisons and reads back through this interface, so every implementation
// is timed and checked by the same code.
#ifndef ZYFA_BENCH_KERNEL_HPP_
#define ZYFA_BENCH_KERNEL_HPP_

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "inputs.hpp"

namespace zyfa::bench {

struct KernelOutputs {
  std::vector<float> out;  // (batch, seqlen, nheads, d_v), as the kernel stored it, widened to float
  std::vector<float> lse;  // (batch, nheads, seqlen), natural log
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const char *impl() const = 0;  // the `impl` field of the results: "zyfa", "cudnn"
  // Which plan or engine runs, and the output dtype when it is not BF16 (recorded with the results).
  virtual std::string plan() const { return ""; }
  virtual std::string out_dtype() const { return "bf16"; }
  virtual std::string notes() const { return ""; }  // e.g. how the plan was chosen
  // One call on `stream`, asynchronous. Throws on any failure.
  virtual void run(cudaStream_t stream) = 0;
  virtual void poison_outputs() = 0;
  virtual KernelOutputs read_outputs() const = 0;
};

// zyfa_attn_fwd with the plan prepared first (zyfa_attn_prepare), descales in device memory, and FP8's P
// rounding as given (ZYFA_P_ROUNDING_DEFAULT: the library's choice for the head dim).
std::unique_ptr<Kernel> make_zyfa_kernel(const DeviceInputs &in, cudaStream_t stream,
                                         zyfa_p_rounding p_rounding = ZYFA_P_ROUNDING_DEFAULT);

// cuDNN SDPA through cudnn-frontend: every plan of heuristics modes A and FALLBACK is built and timed on
// these inputs, and the fastest is kept. Returns nullptr, with `why_not` set, when the bench was built
// without the cuDNN peer or cuDNN does not support the case.
std::unique_ptr<Kernel> make_cudnn_kernel(const DeviceInputs &in, cudaStream_t stream, std::string *why_not);

// Every implementation name this binary knows, in the order the protocol rotates from.
std::vector<std::string> kernel_impls();
// `run` is an implementation name or a run name ("zyfa@exact", shapes.hpp).
std::unique_ptr<Kernel> make_kernel(const std::string &run, const DeviceInputs &in, cudaStream_t stream,
                                    std::string *why_not);

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_KERNEL_HPP_
