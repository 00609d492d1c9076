// Determinism through the public API, for every kernel the dispatcher routes to (BF16 and FP8, d_qk 128
// and 192): 100 calls on the same inputs, outputs poisoned before each, all bitwise equal to the first
// (which matches fp64). Then the same with a cuBLAS BF16 GEMM between the calls on the same stream, and
// with GEMMs running on a second stream at the same time: foreign kernels that change the SM occupancy,
// L2 contents and shared-memory carveout must not change a bit.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "reliability.hpp"

namespace zyfa::test::reliability {
namespace {

constexpr int kCalls = 100;
// The GEMM: n x n x n in BF16 with fp32 accumulation, large enough to fill every SM and the L2.
constexpr int kGemmN = 4096;

// cuBLAS, loaded at run time so that the test binary does not need it to start: ZYFA_CUBLAS_LIBRARY names
// the library (tools/device/run_reliability.sh finds PyTorch's), else the loader's path and the toolkit.
class Cublas {
 public:
  Cublas() {
    const char *named = std::getenv("ZYFA_CUBLAS_LIBRARY");
    for (const char *path : {named, "libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13"}) {
      if (path != nullptr && (library_ = dlopen(path, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    if (library_ == nullptr) {
      status_ = "cuBLAS not found: set ZYFA_CUBLAS_LIBRARY to libcublas.so.13";
      return;
    }
    create_ = reinterpret_cast<decltype(create_)>(dlsym(library_, "cublasCreate_v2"));
    destroy_ = reinterpret_cast<decltype(destroy_)>(dlsym(library_, "cublasDestroy_v2"));
    set_stream_ = reinterpret_cast<decltype(set_stream_)>(dlsym(library_, "cublasSetStream_v2"));
    gemm_ = reinterpret_cast<decltype(gemm_)>(dlsym(library_, "cublasGemmEx"));
    if (!create_ || !destroy_ || !set_stream_ || !gemm_) {
      status_ = "cuBLAS lacks an entry point this test uses";
    } else if (create_(&handle_) != CUBLAS_STATUS_SUCCESS) {
      handle_ = nullptr;
      status_ = "cublasCreate failed";
    }
  }
  ~Cublas() {
    if (handle_) destroy_(handle_);
    // The library stays loaded: its CUDA state may outlive the handle until process exit.
  }
  const std::string &status() const { return status_; }

  // C = A B, n x n BF16 matrices in device memory, queued on `stream`.
  std::string gemm(const void *a, const void *b, void *c, cudaStream_t stream) {
    if (set_stream_(handle_, stream) != CUBLAS_STATUS_SUCCESS) return "cublasSetStream failed";
    const float one = 1.0f, zero = 0.0f;
    const cublasStatus_t s = gemm_(handle_, CUBLAS_OP_N, CUBLAS_OP_N, kGemmN, kGemmN, kGemmN, &one, a, CUDA_R_16BF,
                                   kGemmN, b, CUDA_R_16BF, kGemmN, &zero, c, CUDA_R_16BF, kGemmN, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS ? "" : "cublasGemmEx failed with status " + std::to_string(int(s));
  }

 private:
  void *library_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  // The C entry points (cublas_api.h also declares C++ overloads of cublasGemmEx, so spell the types).
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                    const void *, const void *, cudaDataType, int, const void *, cudaDataType, int,
                                    const void *, void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  cublasStatus_t (*create_)(cublasHandle_t *) = nullptr;
  cublasStatus_t (*destroy_)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_stream_)(cublasHandle_t, cudaStream_t) = nullptr;
  GemmEx gemm_ = nullptr;
  std::string status_;
};

enum class Neighbour {
  kNone,          // calls back to back
  kGemmBetween,   // a GEMM on the same stream between consecutive calls
  kGemmAlongside  // a GEMM on another stream, launched just before each call, running while it runs
};

struct DeterminismCase {
  std::string name;
  AttentionShape shape;
  Neighbour neighbour;
};

std::vector<DeterminismCase> determinism_cases() {
  const zyfa_dtype bf16 = ZYFA_DTYPE_BF16, fp8 = ZYFA_DTYPE_FP8_E4M3;
  const AttentionShape kernels[] = {  // one shape per kernel; the case is named by its shape
      attention_shape(bf16, 128, 2, 1025, 8, 2),
      attention_shape(bf16, 192, 2, 1025, 8, 2),
      attention_shape(fp8, 128, 2, 1025, 8, 2, Layout::kBSHD, true),
      attention_shape(fp8, 192, 2, 1025, 8, 2),
  };
  const struct {
    const char *name;
    Neighbour neighbour;
  } neighbours[] = {{"alone", Neighbour::kNone}, {"gemm_between", Neighbour::kGemmBetween},
                    {"gemm_alongside", Neighbour::kGemmAlongside}};
  std::vector<DeterminismCase> cases;
  for (const AttentionShape &shape : kernels) {
    for (const auto &n : neighbours) cases.push_back({shape.name() + "_" + n.name, shape, n.neighbour});
  }
  return cases;
}

// Device buffers of the GEMM, filled with a constant (values do not matter, only the work and traffic).
class GemmBuffers {
 public:
  std::string allocate() {
    const size_t bytes = size_t(kGemmN) * kGemmN * 2;
    for (DeviceBuffer *b : {&a, &b_, &c}) {
      std::string s = b->allocate(bytes);
      if (s.empty()) s = cuda_message("cudaMemset", cudaMemset(b->get(), 0x3c, bytes));
      if (!s.empty()) return s;
    }
    return "";
  }
  DeviceBuffer a, b_, c;
};

class ReliabilityDeterminism : public ::testing::TestWithParam<DeterminismCase> {};

TEST_P(ReliabilityDeterminism, HundredCallsAreBitwiseIdentical) {
  ZYFA_SKIP_WITHOUT_GPU();
  const DeterminismCase &c = GetParam();
  ZYFA_TRACED_SEED(seed);
  Stream stream, side;
  ZYFA_ASSERT_CUDA(stream.error());
  ZYFA_ASSERT_CUDA(side.error());
  DeviceProblem problem(c.shape, seed);
  ASSERT_EQ(problem.status(), "");
  const zyfa_attn_desc desc = problem.desc();

  std::unique_ptr<Cublas> cublas;
  GemmBuffers gemm;
  if (c.neighbour != Neighbour::kNone) {
    cublas = std::make_unique<Cublas>();
    ASSERT_EQ(cublas->status(), "");
    ASSERT_EQ(gemm.allocate(), "");
  }
  cudaEvent_t ready = nullptr;
  ZYFA_ASSERT_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));

  std::vector<uint8_t> first_out, first_lse, out, lse;
  int identical = 0;
  for (int i = 0; i < kCalls; ++i) {
    SCOPED_TRACE("call " + std::to_string(i));
    ZYFA_ASSERT_CUDA(problem.poison(stream));
    if (c.neighbour == Neighbour::kGemmBetween) {
      ASSERT_EQ(cublas->gemm(gemm.a.get(), gemm.b_.get(), gemm.c.get(), stream), "");
    } else if (c.neighbour == Neighbour::kGemmAlongside) {
      // The GEMM starts once the poison is written, so it overlaps the attention call that follows.
      ZYFA_ASSERT_CUDA(cudaEventRecord(ready, stream));
      ZYFA_ASSERT_CUDA(cudaStreamWaitEvent(side, ready, 0));
      ASSERT_EQ(cublas->gemm(gemm.a.get(), gemm.b_.get(), gemm.c.get(), side), "");
    }
    ASSERT_EQ(zyfa_attn_fwd(&desc, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
    if (i == 0) {
      ASSERT_EQ(problem.download_bytes(&first_out, &first_lse), "");
      ASSERT_EQ(problem.download(), "");
      // Against fp64 once per kernel (its `alone` case, to save time); the other cases compare bits.
      if (c.neighbour == Neighbour::kNone) ASSERT_TRUE(matches_fp64(problem.host()));
      else ASSERT_TRUE(outputs_written(problem.host()));
      ++identical;
      continue;
    }
    ASSERT_EQ(problem.download_bytes(&out, &lse), "");
    ASSERT_TRUE(out == first_out) << "output differs from the first call";
    ASSERT_TRUE(lse == first_lse) << "LSE differs from the first call";
    ++identical;
  }
  ZYFA_EXPECT_CUDA(cudaStreamSynchronize(side));
  ZYFA_EXPECT_CUDA(cudaEventDestroy(ready));
  std::printf("[ determinism ] %s: %d calls bitwise identical\n", c.name.c_str(), identical);
}

INSTANTIATE_TEST_SUITE_P(Kernels, ReliabilityDeterminism, ::testing::ValuesIn(determinism_cases()),
                         [](const ::testing::TestParamInfo<DeterminismCase> &param_info) {
                           return param_info.param.name;
                         });

}  // namespace
}  // namespace zyfa::test::reliability
