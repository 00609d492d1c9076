// The one place in src/host that calls the CUDA runtime: device checks, capture state, error mapping,
// device memory. Everything else in src/host stays plain C++ and testable without a GPU.
#ifndef ZYFA_HOST_CUDA_API_HPP_
#define ZYFA_HOST_CUDA_API_HPP_

#include <memory>

#include "host/plan_cache.hpp"
#include "zyfa/zyfa.h"

namespace zyfa::cuda {

// The current device, if it is a Hopper GPU (compute capability 9.x); else NO_DEVICE or UNSUPPORTED_DEVICE.
// Also reports a sticky error left by earlier work in the process (ZYFA_STATUS_CUDA_ERROR) rather than
// launching into a broken context.
zyfa_status current_hopper_device(int *device);

// Whether `stream` is being captured into a graph.
zyfa_status stream_is_capturing(void *stream, bool *capturing);

// Maps a cudaError_t value (0 = success) to a status, recording "<what>: <CUDA's name and text>".
zyfa_status from_cuda_error(int error, const char *what);

// Device memory for the plan cache's job tables.
std::unique_ptr<DeviceMemory> make_device_memory();

}  // namespace zyfa::cuda

#endif  // ZYFA_HOST_CUDA_API_HPP_
