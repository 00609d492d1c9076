// Small RAII wrappers over the CUDA runtime for the bench: every call is checked, and a failure
// becomes an exception that names the call, so one failing kernel or peer is reported and skipped
// instead of ending the whole run.
#ifndef ZYFA_BENCH_CUDA_UTIL_HPP_
#define ZYFA_BENCH_CUDA_UTIL_HPP_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace zyfa::bench {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void cuda_check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorString(err));
}
#define ZYFA_BENCH_CUDA(call) ::zyfa::bench::cuda_check((call), #call)

// True when a CUDA device is present (the dry mode and the host CTest run without one).
bool cuda_device_present();

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { ZYFA_BENCH_CUDA(cudaMalloc(&ptr_, bytes ? bytes : 1)); }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(DeviceBuffer &&o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; o.bytes_ = 0; }
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = o.ptr_; bytes_ = o.bytes_;
      o.ptr_ = nullptr; o.bytes_ = 0;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *get() const { return ptr_; }
  template <typename T> T *as() const { return static_cast<T *>(ptr_); }
  size_t bytes() const { return bytes_; }
  void upload(const void *src, size_t bytes) { ZYFA_BENCH_CUDA(cudaMemcpy(ptr_, src, bytes, cudaMemcpyHostToDevice)); }
  void download(void *dst, size_t bytes) const { ZYFA_BENCH_CUDA(cudaMemcpy(dst, ptr_, bytes, cudaMemcpyDeviceToHost)); }
  // Fills every byte with `value` (0xff makes BF16 and FP8 outputs NaN: unwritten elements show).
  void poison(int value = 0xff) { ZYFA_BENCH_CUDA(cudaMemset(ptr_, value, bytes_)); }

 private:
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
};

class Event {
 public:
  Event() { ZYFA_BENCH_CUDA(cudaEventCreate(&ev_)); }
  ~Event() { cudaEventDestroy(ev_); }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  cudaEvent_t get() const { return ev_; }

 private:
  cudaEvent_t ev_ = nullptr;
};

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_CUDA_UTIL_HPP_
