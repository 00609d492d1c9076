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
// The compute-capability half of that check, on its own so that a host test can reach it: SUCCESS for a
// Hopper part (9.x), else UNSUPPORTED_DEVICE with a message naming the device and its capability.
zyfa_status require_hopper(int device, int major, int minor);

// Whether `stream` is being captured into a graph.
zyfa_status stream_is_capturing(void *stream, bool *capturing);

// Maps a cudaError_t value (0 = success) to a status, recording "<what>: <CUDA's name and text>".
zyfa_status from_cuda_error(int error, const char *what);

// Device memory for the plan cache's job tables.
std::unique_ptr<DeviceMemory> make_device_memory();

// ---------------------------------------------------------------- driver API (added by asmgen)
// For the code objects src/asmgen builds (loaded by src/host/code_objects.cpp). The driver is reached
// through cudaGetDriverEntryPointByVersion, so libzyfa links no libcuda. Each call returns a cudaError_t
// value (0 = success): for every error these calls can return, the runtime uses the driver's number
// (checked at compile time in cuda_api.cpp). Handles are CUmodule / CUfunction, passed as void *.

// The current device's ordinal.
int current_device(int *device);
// The process-unique ID (cuCtxGetId) of the context current on this thread, the runtime's primary context
// of the current device made current first if none is. A cudaDeviceReset ends a context; the next one has
// another ID, so a cache keyed by it never hands out a handle of the old one.
int current_context_id(unsigned long long *id);
// Loads a cubin into the context current on this thread (the current device's primary context, made current
// first where none is).
int load_module(const void *image, void **module);
int module_function(void *module, const char *entry, void **function);
// Unloads a module whose kernel could not be prepared (loaded kernels otherwise stay for the process).
void unload_module(void *module);
// Raises the kernel's dynamic shared memory limit to `bytes` (needed above 48 KiB).
int set_max_dynamic_shared_memory(void *function, int bytes);
// How a launch follows the work before it in its stream.
enum class StreamOrder {
  kAfterCompletion,  // starts once the stream's earlier work has completed
  // may start once every block of the kernel just before it has called griddepcontrol.launch_dependents or
  // exited; the kernel itself waits (griddepcontrol.wait) before reading what that kernel writes
  kOverlapPrevious,
};
// Launches `function` with one parameter, the block at `params` (the kernel's parameter struct).
int launch_function(void *function, int grid, int block, int dynamic_smem_bytes, void *stream, void *params,
                    StreamOrder order = StreamOrder::kAfterCompletion);

}  // namespace zyfa::cuda

#endif  // ZYFA_HOST_CUDA_API_HPP_
