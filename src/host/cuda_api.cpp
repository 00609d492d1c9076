#include "host/cuda_api.hpp"

#include <cuda_runtime.h>

#include "host/error.hpp"

namespace zyfa::cuda {
namespace {

// Hopper is compute capability 9.x; the build embeds sm_90a code only.
constexpr int kHopperMajor = 9;

// Allocation and copies made while some thread captures a graph in global mode would invalidate that
// capture; relaxed mode for the calling thread keeps them legal, and the previous mode is restored.
class RelaxedCaptureScope {
 public:
  RelaxedCaptureScope() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureScope() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureScope(const RelaxedCaptureScope &) = delete;
  RelaxedCaptureScope &operator=(const RelaxedCaptureScope &) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

// Makes `device` current for one scope: the plan cache may free a table of another device.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    ok_ = cudaGetDevice(&previous_) == cudaSuccess &&
          (previous_ == device || cudaSetDevice(device) == cudaSuccess);
  }
  ~DeviceScope() {
    if (ok_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_ = 0;
  bool ok_ = false;
};

class CudaDeviceMemory final : public DeviceMemory {
 public:
  void *upload(int device, const void *host, size_t bytes) override {
    DeviceScope on_device(device);
    if (!on_device.ok()) return nullptr;
    RelaxedCaptureScope relaxed;
    void *ptr = nullptr;
    if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
      cudaGetLastError();  // our own failed allocation: not sticky, do not leave it for the caller
      return nullptr;
    }
    if (cudaMemcpy(ptr, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
      cudaGetLastError();
      cudaFree(ptr);
      return nullptr;
    }
    return ptr;
  }
  void release(int device, void *ptr) override {
    DeviceScope on_device(device);
    RelaxedCaptureScope relaxed;
    cudaFree(ptr);
  }
  int multiprocessor_count(int device) override {
    int count = 0;
    if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 0;
    return count;
  }
};

}  // namespace

zyfa_status from_cuda_error(int error, const char *what) {
  if (error == cudaSuccess) return ZYFA_STATUS_SUCCESS;
  const auto e = static_cast<cudaError_t>(error);
  const zyfa_status status =
      e == cudaErrorMemoryAllocation ? ZYFA_STATUS_OUT_OF_MEMORY : ZYFA_STATUS_CUDA_ERROR;
  return fail(status, "%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

zyfa_status current_hopper_device(int *device) {
  int count = 0;
  const cudaError_t count_error = cudaGetDeviceCount(&count);
  if (count_error == cudaErrorNoDevice || count_error == cudaErrorInsufficientDriver || count == 0) {
    cudaGetLastError();  // the failed query is ours; clear it
    return fail(ZYFA_STATUS_NO_DEVICE, "no CUDA device: %s (use zyfa_attn_fwd_host for the CPU backend)",
                cudaGetErrorString(count_error));
  }
  if (count_error != cudaSuccess) return from_cuda_error(count_error, "cudaGetDeviceCount");
  // A pending error from earlier work in this process (a sticky one poisons the context): report it and
  // leave it in place, since it is not ours to clear.
  if (const cudaError_t pending = cudaPeekAtLastError(); pending != cudaSuccess) {
    return fail(ZYFA_STATUS_CUDA_ERROR, "a CUDA error is pending from earlier work in this process: %s (%s)",
                cudaGetErrorName(pending), cudaGetErrorString(pending));
  }
  if (const cudaError_t e = cudaGetDevice(device); e != cudaSuccess) return from_cuda_error(e, "cudaGetDevice");
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, *device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, *device);
  if (major != kHopperMajor) {
    return fail(ZYFA_STATUS_UNSUPPORTED_DEVICE,
                "device %d has compute capability %d.%d: zyfa's kernels are built for sm_90a (Hopper)", *device,
                major, minor);
  }
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status stream_is_capturing(void *stream, bool *capturing) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status);
  if (e != cudaSuccess) {
    cudaGetLastError();  // the failed query is ours; clear it before reporting
    return from_cuda_error(e, "cudaStreamIsCapturing(stream)");
  }
  *capturing = status != cudaStreamCaptureStatusNone;
  return ZYFA_STATUS_SUCCESS;
}

std::unique_ptr<DeviceMemory> make_device_memory() { return std::make_unique<CudaDeviceMemory>(); }

}  // namespace zyfa::cuda
