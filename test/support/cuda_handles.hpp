// CUDA streams and graphs owned by a test's scope, so that a failed ASSERT does not leak them. The rest of
// the GPU support (gpu.hpp) keeps CUDA's types out of its header; this one is for the tests that capture.
#ifndef ZYFA_TEST_SUPPORT_CUDA_HANDLES_HPP_
#define ZYFA_TEST_SUPPORT_CUDA_HANDLES_HPP_

#include <cuda_runtime.h>

#include "support/gpu.hpp"

namespace zyfa::test {

// A stream, destroyed with its owner: non-blocking by default; cudaStreamDefault where a test orders the
// stream's work after legacy-stream copies or memsets.
class Stream {
 public:
  explicit Stream(unsigned flags = cudaStreamNonBlocking) { error_ = cudaStreamCreateWithFlags(&stream_, flags); }
  ~Stream() {
    if (error_ == cudaSuccess) {
      ZYFA_EXPECT_CUDA(cudaStreamDestroy(stream_));
    }
  }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  cudaError_t error() const { return error_; }
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
  cudaError_t error_;
};

// A captured graph and its executable, destroyed with their owner.
class Graph {
 public:
  Graph() = default;
  ~Graph() {
    if (exec) {
      ZYFA_EXPECT_CUDA(cudaGraphExecDestroy(exec));
    }
    if (graph) {
      ZYFA_EXPECT_CUDA(cudaGraphDestroy(graph));
    }
  }
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_CUDA_HANDLES_HPP_
