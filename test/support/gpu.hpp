// Device-side test helpers: the skip guard, and device copies of a HostAttention. No CUDA types leak into
// this header; failures come back as messages that name the step and the CUDA error ("" = success).
#ifndef ZYFA_TEST_SUPPORT_GPU_HPP_
#define ZYFA_TEST_SUPPORT_GPU_HPP_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "support/host_attention.hpp"
#include "support/seed.hpp"
#include "zyfa/zyfa.h"

namespace zyfa::test {

// "" for cudaSuccess (0), else "<step>: <CUDA's name> (<CUDA's text>)" for the cudaError_t value `error`.
std::string cuda_message(const char *step, int error);

// "" when device 0 is a Hopper GPU (compute capability 9.x); otherwise why the GPU tests cannot run.
std::string gpu_unavailable_reason();

// In a GPU test, first line: reports the test skipped, with the reason, where there is no Hopper GPU.
#define ZYFA_SKIP_WITHOUT_GPU()                                                  \
  do {                                                                           \
    const std::string zyfa_gpu_reason = ::zyfa::test::gpu_unavailable_reason();  \
    if (!zyfa_gpu_reason.empty()) GTEST_SKIP() << zyfa_gpu_reason;               \
  } while (0)

// In a GPU test: a CUDA runtime call (its cudaError_t) that must succeed; the failure names the call.
#define ZYFA_ASSERT_CUDA(call) ASSERT_EQ(::zyfa::test::cuda_message(#call, int(call)), "")
#define ZYFA_EXPECT_CUDA(call) EXPECT_EQ(::zyfa::test::cuda_message(#call, int(call)), "")

// A parameterized GPU test: skipped without a GPU, and a fresh seed for its inputs that each failure names
// through seed_trace() (ZYFA_TEST_SEED replays it).
template <class Param>
class SeededGpuTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    ZYFA_SKIP_WITHOUT_GPU();
    seed_ = fresh_seed();
  }
  std::string seed_trace() const { return "ZYFA_TEST_SEED=" + std::to_string(seed_); }

  uint64_t seed_ = 0;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;

  std::string allocate(size_t bytes);
  // allocate(bytes) and copy `bytes` bytes from host memory.
  std::string upload(const void *host, size_t bytes);
  // Copies the first `bytes` bytes back (synchronous: waits for the device).
  std::string download(void *host, size_t bytes) const;
  void *get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Writes the poison pattern (every byte 0xff: kPoisonBf16, kPoisonF32) over a device out and, where allocated,
// lse, gaps included, in `stream`'s order (a cudaStream_t; the legacy stream by default), so that a repeated
// call is checked for writing every element again. Returns a cudaError_t value.
int poison_device_outputs(const DeviceBuffer &out, const DeviceBuffer &lse, void *stream = nullptr);

// Device copies of every buffer of a HostAttention (outputs with their poison), and a descriptor over them.
class DeviceAttention {
 public:
  explicit DeviceAttention(HostAttention &host);
  // "" when every allocation and upload succeeded.
  const std::string &status() const { return status_; }
  // host.desc() with device pointers; per-head descales point at device copies.
  zyfa_attn_desc desc() const;
  // Copies out and lse back into the HostAttention, for its checks.
  std::string download_outputs();
  // poison_device_outputs over this copy's out and lse.
  int poison_outputs(void *stream = nullptr) const { return poison_device_outputs(out_, lse_, stream); }

 private:
  HostAttention &host_;
  DeviceBuffer q_, k_, v_, out_, lse_, q_descale_, k_descale_, v_descale_;
  std::string status_;
};

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_GPU_HPP_
