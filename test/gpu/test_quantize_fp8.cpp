// zyfa_quantize_fp8 on the GPU against its host twin, which test/host/test_quantize.cpp checks against
// fp64: codes and descale bit for bit, on fresh random BF16 rows (strided, with and without rotation,
// both dims, many rows per warp), on every BF16 value, and on infinities and NaNs. Outputs are poisoned
// first, the gaps between source rows hold NaNs that must never be read, and guard bytes after dst must
// stay untouched.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/numerics.h"
#include "support/cuda_handles.hpp"
#include "support/gpu.hpp"
#include "support/quantize_case.hpp"
#include "zyfa/zyfa.h"

namespace {

using zyfa::test::DeviceBuffer;
using zyfa::test::fresh_seed;
using zyfa::test::Graph;
using zyfa::test::kCodePoison;
using zyfa::test::kDescalePoison;
using zyfa::test::QuantizeCase;
using zyfa::test::Stream;

namespace num = zyfa::numerics;

// Bytes after dst that the kernel must leave alone.
constexpr size_t kGuardBytes = 64;
constexpr uint8_t kGuardPoison = 0xa5;

#define ASSERT_NO_MESSAGE(expr) \
  do {                          \
    const std::string message_ = (expr); \
    ASSERT_EQ(message_, "") << #expr;    \
  } while (0)

enum class Launch { kStream, kGraph };

// What the GPU wrote for one case.
struct GpuResult {
  std::vector<uint8_t> codes;
  std::vector<uint8_t> guard;
  float descale = kDescalePoison;
};

// Runs zyfa_quantize_fp8 on device copies of `c` (codes poisoned with `poison`, a code the call must not
// produce) on a fresh stream, directly or as a captured CUDA graph (which also proves that the call never
// waits for the host), and copies back.
void run_on_gpu(QuantizeCase &c, Launch how, GpuResult *result, uint8_t poison = kCodePoison) {
  DeviceBuffer src, dst, descale;
  ASSERT_NO_MESSAGE(src.upload(c.src.data(), c.src.size() * sizeof(uint16_t)));
  std::vector<uint8_t> poisoned(c.dst.size() + kGuardBytes, poison);
  std::fill(poisoned.begin() + std::ptrdiff_t(c.dst.size()), poisoned.end(), kGuardPoison);
  ASSERT_NO_MESSAGE(dst.upload(poisoned.data(), poisoned.size()));
  ASSERT_NO_MESSAGE(descale.upload(&kDescalePoison, sizeof(float)));

  zyfa_quantize_desc d = c.desc();  // the host twin's descriptor, pointed at the device copies
  d.src = src.get();
  d.dst = dst.get();
  d.descale = static_cast<float *>(descale.get());

  Stream stream;
  ZYFA_ASSERT_CUDA(stream.error());
  if (how == Launch::kStream) {
    ASSERT_EQ(zyfa_quantize_fp8(&d, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  } else {
    Graph graph;
    ZYFA_ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const zyfa_status s = zyfa_quantize_fp8(&d, stream);
    ZYFA_ASSERT_CUDA(cudaStreamEndCapture(stream, &graph.graph));
    ASSERT_EQ(s, ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    ZYFA_ASSERT_CUDA(cudaGraphInstantiate(&graph.exec, graph.graph, 0));
    // Twice: the memset in the graph resets the amax, so a replay gives the same answer.
    ZYFA_ASSERT_CUDA(cudaGraphLaunch(graph.exec, stream));
    ZYFA_ASSERT_CUDA(cudaGraphLaunch(graph.exec, stream));
    ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  }
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  ZYFA_ASSERT_CUDA(cudaGetLastError());
  std::vector<uint8_t> back(poisoned.size());
  ASSERT_NO_MESSAGE(dst.download(back.data(), back.size()));
  result->codes.assign(back.begin(), back.begin() + std::ptrdiff_t(c.dst.size()));
  result->guard.assign(back.begin() + std::ptrdiff_t(c.dst.size()), back.end());
  ASSERT_NO_MESSAGE(descale.download(&result->descale, sizeof(float)));
}

// The host twin's answer for `c` (it writes into c.dst and c.descale).
void run_host_twin(QuantizeCase &c) {
  const zyfa_quantize_desc d = c.desc();
  ASSERT_EQ(zyfa_quantize_fp8_host(&d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
}

void expect_same_as_host_twin(const QuantizeCase &c, const GpuResult &gpu) {
  EXPECT_EQ(num::float_bits(gpu.descale), num::float_bits(c.descale))
      << "descale: GPU " << gpu.descale << ", host twin " << c.descale;
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < c.dst.size(); ++i) {
    if (gpu.codes[i] != c.dst[i] && mismatches++ == 0) first = i;
  }
  EXPECT_EQ(mismatches, 0u) << "first at row " << first / size_t(c.dim) << " column " << first % size_t(c.dim)
                            << ": GPU code " << int(gpu.codes[first]) << ", host twin " << int(c.dst[first]);
  for (uint8_t g : gpu.guard) ASSERT_EQ(g, kGuardPoison) << "the kernel wrote past dst";
}

// ---------------------------------------------------------------- random rows

struct GpuCase {
  int64_t n_rows, dim, row_stride;
  zyfa_rotation rotation;
  float scale;
};

void PrintTo(const GpuCase &c, std::ostream *os) {
  *os << c.n_rows << " x " << c.dim << " row_stride " << c.row_stride << (c.rotation ? " rotated" : " plain")
      << " std " << c.scale;
}

class QuantizeGpu : public ::testing::TestWithParam<GpuCase> {};

TEST_P(QuantizeGpu, BitwiseEqualToHostTwin) {
  ZYFA_SKIP_WITHOUT_GPU();
  const GpuCase p = GetParam();
  for (const Launch how : {Launch::kStream, Launch::kGraph}) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + (how == Launch::kGraph ? ", graph" : ", stream"));
    QuantizeCase c(p.n_rows, p.dim, p.row_stride, p.rotation, p.scale, seed);
    GpuResult gpu;
    ASSERT_NO_FATAL_FAILURE(run_on_gpu(c, how, &gpu));
    ASSERT_NO_FATAL_FAILURE(run_host_twin(c));
    expect_same_as_host_twin(c, gpu);
  }
}

// Row counts well above the grid's warps (132 SMs x 64 warps) make every warp loop; odd counts leave
// partial steps; dims that are not powers of two exercise the plain kernel's (row, chunk) walk.
INSTANTIATE_TEST_SUITE_P(
    Shapes, QuantizeGpu,
    ::testing::Values(GpuCase{1, 128, 128, ZYFA_ROTATION_HADAMARD, 1.0f}, GpuCase{1, 192, 192, ZYFA_ROTATION_HADAMARD, 1.0f},
                      GpuCase{3001, 128, 136, ZYFA_ROTATION_HADAMARD, 1.0f},
                      GpuCase{777, 192, 264, ZYFA_ROTATION_HADAMARD, 1e-3f},
                      GpuCase{262147, 128, 128, ZYFA_ROTATION_HADAMARD, 1.0f},
                      GpuCase{100003, 192, 192, ZYFA_ROTATION_HADAMARD, 40.0f},
                      GpuCase{1, 8, 8, ZYFA_ROTATION_NONE, 1.0f}, GpuCase{5000, 128, 128, ZYFA_ROTATION_NONE, 1.0f},
                      GpuCase{4999, 192, 200, ZYFA_ROTATION_NONE, 1.0f}, GpuCase{33, 1000, 1024, ZYFA_ROTATION_NONE, 2e4f},
                      GpuCase{300001, 64, 72, ZYFA_ROTATION_NONE, 1.0f}),
    [](const ::testing::TestParamInfo<GpuCase> &param_info) {  // e.g. rows3001_dim128_stride136_rotated
      const GpuCase &c = param_info.param;
      return "rows" + std::to_string(c.n_rows) + "_dim" + std::to_string(c.dim) + "_stride" +
             std::to_string(c.row_stride) + (c.rotation ? "_rotated" : "_plain");
    });

// ---------------------------------------------------------------- every BF16 value

// One row holding every finite BF16 value with |x| <= limit (and +-limit itself, which pins the amax):
// without a rotation the GPU converts exactly these values, scaled by 1/descale, so its conversion is
// checked against numerics::e4m3_code on all of them, ties, subnormals, saturation and signed zeros.
QuantizeCase every_bf16_value(float limit) {
  std::vector<uint16_t> values = {num::bf16_bits(limit), num::bf16_bits(-limit)};
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float x = num::bf16_value(uint16_t(b));
    if (std::isfinite(x) && std::fabs(x) <= limit) values.push_back(uint16_t(b));
  }
  while (values.size() % 8 != 0) values.push_back(0);
  const auto n = int64_t(values.size());
  QuantizeCase c(1, n, n, ZYFA_ROTATION_NONE, 0.0f, 0);
  c.src = values;
  return c;
}

TEST(QuantizeGpuEveryBf16, ConversionMatchesE4m3Code) {
  ZYFA_SKIP_WITHOUT_GPU();
  // 448: descale 1, the values themselves. FLT_MAX-sized: descale 2^120, most values scale into fp32
  // subnormals or e4m3 underflow. 2^-100: descale 2^-108, tiny values scaled up into e4m3's range.
  for (const float limit : {448.0f, num::bf16_value(0x7f7f), 0x1p-100f}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    QuantizeCase c = every_bf16_value(limit);
    GpuResult gpu;
    ASSERT_NO_FATAL_FAILURE(run_on_gpu(c, Launch::kStream, &gpu));
    ASSERT_NO_FATAL_FAILURE(run_host_twin(c));
    expect_same_as_host_twin(c, gpu);
  }
}

// ---------------------------------------------------------------- non-finite inputs

TEST(QuantizeGpuNonFinite, NanDescaleAndNanCodesLikeTheHostTwin) {
  ZYFA_SKIP_WITHOUT_GPU();
  for (const float bad : {INFINITY, -INFINITY, NAN}) {
    for (const zyfa_rotation r : {ZYFA_ROTATION_NONE, ZYFA_ROTATION_HADAMARD}) {
      SCOPED_TRACE(std::to_string(bad) + (r ? " rotated" : " plain"));
      ZYFA_TRACED_SEED(seed);
      QuantizeCase c(50, 128, 128, r, 1.0f, seed);
      c.src[4321] = num::bf16_bits(bad);
      GpuResult gpu;
      // Every code is expected to be NaN (0x7f), so the poison is another one.
      ASSERT_NO_FATAL_FAILURE(run_on_gpu(c, Launch::kStream, &gpu, /*poison=*/0x00));
      ASSERT_NO_FATAL_FAILURE(run_host_twin(c));
      EXPECT_TRUE(std::isnan(gpu.descale));
      expect_same_as_host_twin(c, gpu);
    }
  }
}

}  // namespace
