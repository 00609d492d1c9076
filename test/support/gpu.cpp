#include "support/gpu.hpp"

#include <cuda_runtime.h>

#include <utility>

namespace zyfa::test {
namespace {

static_assert(kPoisonBf16 == 0xffff && kPoisonF32 == 0xffffffffu,
              "poison_device_outputs writes the poison with cudaMemset: every byte of it must be 0xff");

// The first non-empty message of a sequence of steps.
void keep_first(std::string &status, std::string message) {
  if (status.empty()) status = std::move(message);
}

}  // namespace

std::string cuda_message(const char *step, int error) {
  if (error == cudaSuccess) return "";
  const auto e = static_cast<cudaError_t>(error);
  return std::string(step) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

std::string gpu_unavailable_reason() {
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return "no usable CUDA device: " + cuda_message("cudaGetDeviceCount", e);
  if (count == 0) return "no CUDA device present";
  cudaDeviceProp prop;
  if (cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess)
    return cuda_message("cudaGetDeviceProperties", e);
  if (prop.major != 9)
    return std::string("device 0 (") + prop.name + ") is sm_" + std::to_string(prop.major * 10 + prop.minor) +
           ": zyfa's kernels need Hopper (sm_90)";
  return "";
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

std::string DeviceBuffer::allocate(size_t bytes) {
  if (ptr_) {
    const cudaError_t e = cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
    if (e != cudaSuccess) return cuda_message("cudaFree (the buffer's previous allocation)", e);
  }
  if (cudaError_t e = cudaMalloc(&ptr_, bytes); e != cudaSuccess) {
    ptr_ = nullptr;
    cudaGetLastError();  // not sticky: cleared, or every later call in this binary would report it
    return cuda_message("cudaMalloc", e);
  }
  bytes_ = bytes;
  return "";
}

std::string DeviceBuffer::upload(const void *host, size_t bytes) {
  std::string s = allocate(bytes);
  if (!s.empty()) return s;
  return cuda_message("cudaMemcpy to device", cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
}

std::string DeviceBuffer::download(void *host, size_t bytes) const {
  if (bytes > bytes_) return "download of " + std::to_string(bytes) + " bytes from a buffer of " + std::to_string(bytes_);
  return cuda_message("cudaMemcpy to host", cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost));
}

DeviceAttention::DeviceAttention(HostAttention &host) : host_(host) {
  keep_first(status_, q_.upload(host.q.data(), host.q.size_bytes()));
  keep_first(status_, k_.upload(host.k.data(), host.k.size_bytes()));
  keep_first(status_, v_.upload(host.v.data(), host.v.size_bytes()));
  keep_first(status_, out_.upload(host.out.data(), host.out.size_bytes()));
  if (!host.lse.empty()) keep_first(status_, lse_.upload(host.lse.data(), host.lse.size() * sizeof(float)));
  if (host.shape().fp8() && host.shape().per_head_descale) {
    keep_first(status_, q_descale_.upload(host.q_descale.data(), host.q_descale.size() * sizeof(float)));
    keep_first(status_, k_descale_.upload(host.k_descale.data(), host.k_descale.size() * sizeof(float)));
    keep_first(status_, v_descale_.upload(host.v_descale.data(), host.v_descale.size() * sizeof(float)));
  }
  // A copy from pageable memory may return before its DMA lands, and a non-blocking stream does not wait
  // for the legacy stream: the copies must be complete before a call on any stream reads them.
  keep_first(status_, cuda_message("cudaDeviceSynchronize after the uploads", cudaDeviceSynchronize()));
}

zyfa_attn_desc DeviceAttention::desc() const {
  zyfa_attn_desc d = host_.desc();
  d.q = q_.get();
  d.k = k_.get();
  d.v = v_.get();
  d.out = out_.get();
  d.lse = host_.lse.empty() ? nullptr : static_cast<float *>(lse_.get());
  if (d.q_descale.kind == ZYFA_DESCALE_DEVICE) {
    d.q_descale.ptr = static_cast<const float *>(q_descale_.get());
    d.k_descale.ptr = static_cast<const float *>(k_descale_.get());
    d.v_descale.ptr = static_cast<const float *>(v_descale_.get());
  }
  return d;
}

int poison_device_outputs(const DeviceBuffer &out, const DeviceBuffer &lse, void *stream_handle) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  cudaError_t e = cudaMemsetAsync(out.get(), 0xff, out.size(), stream);
  if (e == cudaSuccess && lse.get()) e = cudaMemsetAsync(lse.get(), 0xff, lse.size(), stream);
  return e;
}

std::string DeviceAttention::download_outputs() {
  std::string s = out_.download(host_.out.data(), host_.out.size_bytes());
  if (s.empty() && !host_.lse.empty()) s = lse_.download(host_.lse.data(), host_.lse.size() * sizeof(float));
  return s;
}

}  // namespace zyfa::test
