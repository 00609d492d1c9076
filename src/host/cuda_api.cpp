#include "host/cuda_api.hpp"

#include <cuda.h>  // driver types only: the functions come from cudaGetDriverEntryPointByVersion
#include <cuda_runtime.h>

#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

#include "host/error.hpp"

namespace zyfa::cuda {
namespace {

// Hopper is compute capability 9.x; the build embeds sm_90a code only.
constexpr int kHopperMajor = 9;

// Allocation, frees, copies and event queries made while some thread captures a graph in global mode would
// invalidate that capture; relaxed mode for the calling thread keeps them legal, and the previous mode is
// restored.
class RelaxedCaptureScope {
 public:
  RelaxedCaptureScope() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureScope() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureScope(const RelaxedCaptureScope &) = delete;
  RelaxedCaptureScope &operator=(const RelaxedCaptureScope &) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

// The thread's current driver context (nullptr: none, or the driver's entry points are missing), and making
// one current again; defined with the entry points below.
CUcontext current_driver_context();
void make_driver_context_current(CUcontext context);
// The process-unique ID of `context`; false where it has none any more (destroyed, or a primary context reset).
bool driver_context_id(CUcontext context, unsigned long long *id);

// Makes `device` current for one scope: the plan cache may free a table of another device. Where `device` is
// current already, nothing is switched, so the caller's context stays current whatever it is (cudaSetDevice
// would replace a context the caller made current through the driver, a green context say, by the device's
// primary one); where it switches, the caller's context is made current again after.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) {
      cudaGetLastError();  // our own failed query: not the caller's to see (ok() says it failed)
      return;
    }
    if (current == device) {
      ok_ = true;
      return;
    }
    previous_device_ = current;
    previous_ = current_driver_context();
    switched_ = cudaSetDevice(device) == cudaSuccess;
    if (!switched_) cudaGetLastError();
    ok_ = switched_;
  }
  ~DeviceScope() {
    if (!switched_) return;
    // A thread with no context had only the runtime's device: that is what it gets back.
    if (previous_ != nullptr) make_driver_context_current(previous_);
    else cudaSetDevice(previous_device_);
  }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_device_ = 0;
  CUcontext previous_ = nullptr;
  bool switched_ = false;
  bool ok_ = false;
};

// Makes `context` current for one scope, and the caller's context (or none, where it had none) again after.
class ContextScope {
 public:
  explicit ContextScope(CUcontext context) : previous_(current_driver_context()) {
    if (previous_ == context) return;
    make_driver_context_current(context);
    switched_ = true;
  }
  ~ContextScope() {
    if (switched_) make_driver_context_current(previous_);
  }
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

 private:
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

// The context handle each job table and event was made in, by (handle, context ID): a call from another
// context of the device, or another thread, may free it, and must do so in its own context; and once that
// context has ended (destroyed, or a reset device's primary one) its memory and events went with it, while
// their addresses may come back for a later context's allocations, which only the ID tells apart.
class OwnerContexts {
 public:
  enum class Found { kNotRecorded, kAlive, kEnded };
  // Records the current context as `handle`'s, where its ID is `context_id` (the plan's key). False where the
  // record's map could not grow: the caller then hands nothing out.
  bool record(const void *handle, uint64_t context_id) {
    const CUcontext current = current_driver_context();
    unsigned long long id = 0;
    if (current == nullptr || !driver_context_id(current, &id) || id != context_id) return true;
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      owners_[Key{handle, context_id}] = current;
    } catch (const std::bad_alloc &) {
      return false;
    }
    return true;
  }
  // `handle`'s context, and whether it is still the one of ID `context_id`; `forget` drops the record.
  Found find(const void *handle, uint64_t context_id, bool forget, CUcontext *owner) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = owners_.find(Key{handle, context_id});
      if (it == owners_.end()) return Found::kNotRecorded;
      *owner = it->second;
      if (forget) owners_.erase(it);
    }
    // A destroyed context's handle is answered with an error (CUDA_ERROR_INVALID_CONTEXT or
    // CONTEXT_IS_DESTROYED, as the driver does for every call on one); a handle reused by a later
    // context has another ID.
    unsigned long long id = 0;
    return driver_context_id(*owner, &id) && id == context_id ? Found::kAlive : Found::kEnded;
  }

 private:
  struct Key {
    const void *handle;
    uint64_t context_id;
    bool operator==(const Key &o) const { return handle == o.handle && context_id == o.context_id; }
  };
  struct KeyHash {
    size_t operator()(const Key &k) const {
      return std::hash<const void *>{}(k.handle) ^ std::hash<uint64_t>{}(k.context_id);
    }
  };
  std::mutex mutex_;
  std::unordered_map<Key, CUcontext, KeyHash> owners_;
};

class CudaDeviceMemory final : public DeviceMemory {
 public:
  zyfa_status upload(const Place &place, const void *host, size_t bytes, void **table) override {
    DeviceScope on_device(place.device);
    if (!on_device.ok()) return fail(ZYFA_STATUS_CUDA_ERROR, "could not make device %d current", place.device);
    RelaxedCaptureScope relaxed;
    void *ptr = nullptr;
    // from_cuda_error clears our own failures, so that none stays pending for the caller.
    if (const cudaError_t e = cudaMalloc(&ptr, bytes); e != cudaSuccess) return from_cuda_error(e, "cudaMalloc");
    // A stream of our own that does not synchronize with the legacy default stream: a plain cudaMemcpy
    // would, and would break another thread's capture of a blocking stream.
    cudaStream_t copy_stream = nullptr;
    const char *step = "cudaStreamCreateWithFlags";
    cudaError_t e = cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) {
      step = "cudaMemcpyAsync";
      e = cudaMemcpyAsync(ptr, host, bytes, cudaMemcpyHostToDevice, copy_stream);
      const cudaError_t synced = cudaStreamSynchronize(copy_stream);
      if (e == cudaSuccess && synced != cudaSuccess) {
        step = "cudaStreamSynchronize";
        e = synced;
      }
      if (cudaStreamDestroy(copy_stream) != cudaSuccess) cudaGetLastError();  // ours: not left for the caller
    }
    if (e != cudaSuccess) {
      cudaFree(ptr);
      return from_cuda_error(e, step);
    }
    if (!owners_.record(ptr, place.context_id)) {
      cudaFree(ptr);
      cudaGetLastError();
      return fail(ZYFA_STATUS_OUT_OF_MEMORY, "no host memory to record the table's context");
    }
    *table = ptr;
    return ZYFA_STATUS_SUCCESS;
  }
  void release(const Place &place, void *ptr) override {
    in_owner(place, ptr, /*forget=*/true, [&] {
      RelaxedCaptureScope relaxed;
      // A failed free must not stay pending for the caller's next CUDA call.
      if (cudaFree(ptr) != cudaSuccess) cudaGetLastError();
    });
  }
  bool record_event(const Place &place, void *stream, void **event) override {
    DeviceScope on_device(place.device);
    if (!on_device.ok()) return false;
    if (*event == nullptr) {
      RelaxedCaptureScope relaxed;  // another thread may be capturing in global mode
      cudaEvent_t created = nullptr;
      if (cudaEventCreateWithFlags(&created, cudaEventDisableTiming) != cudaSuccess) {
        cudaGetLastError();  // our own failure: not the caller's to see
        return false;
      }
      if (!owners_.record(created, place.context_id)) {
        cudaEventDestroy(created);
        cudaGetLastError();
        return false;
      }
      *event = created;
    }
    if (cudaEventRecord(static_cast<cudaEvent_t>(*event), static_cast<cudaStream_t>(stream)) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return true;
  }
  bool event_finished(const Place &place, void *event) override {
    bool finished = true;  // where the event's context has ended, every launch of it ended with it
    in_owner(place, event, /*forget=*/false, [&] {
      // An event query is one of the calls a global-mode capture in another thread forbids (it would
      // invalidate that capture), even for an event recorded outside any capture.
      RelaxedCaptureScope relaxed;
      const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
      // cudaErrorNotReady is a state, not an error: the runtime records nothing for cudaGetLastError.
      if (e == cudaErrorNotReady) finished = false;
      else if (e != cudaSuccess) cudaGetLastError();  // the context is broken: nothing of it still runs
    });
    return finished;
  }
  void destroy_event(const Place &place, void *event) override {
    in_owner(place, event, /*forget=*/true, [&] {
      RelaxedCaptureScope relaxed;
      if (cudaEventDestroy(static_cast<cudaEvent_t>(event)) != cudaSuccess) cudaGetLastError();
    });
  }
  int multiprocessor_count(int device) override {
    int count = 0;
    if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      cudaGetLastError();  // ours: the plan cache reports the 0 as a CUDA error of its own
      return 0;
    }
    return count;
  }

 private:
  // Runs `f` in the context `handle` was made in, or, where none was recorded for it, on its device; not at
  // all where that context has ended.
  template <typename F>
  void in_owner(const Place &place, const void *handle, bool forget, F f) {
    CUcontext owner = nullptr;
    switch (owners_.find(handle, place.context_id, forget, &owner)) {
      case OwnerContexts::Found::kEnded:
        return;
      case OwnerContexts::Found::kAlive: {
        ContextScope in_context(owner);
        return f();
      }
      case OwnerContexts::Found::kNotRecorded: {
        DeviceScope on_device(place.device);
        return f();
      }
    }
  }

  OwnerContexts owners_;
};

}  // namespace

zyfa_status from_cuda_error(int error, const char *what) {
  if (error == cudaSuccess) return ZYFA_STATUS_SUCCESS;
  // Every error given here is a call of zyfa's own (a caller's pending error is reported by
  // current_hopper_device and left in place): the status reports it, so the runtime's record of it must not
  // stay pending for the caller's next CUDA check, nor fail zyfa's next call as "pending from earlier work".
  // A sticky error stays, as it must.
  cudaGetLastError();
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
  // A failed query is a CUDA error (cleared by from_cuda_error), not a device of compute capability 0.0.
  for (auto [value, attribute] : {std::pair{&major, cudaDevAttrComputeCapabilityMajor},
                                  std::pair{&minor, cudaDevAttrComputeCapabilityMinor}}) {
    if (const cudaError_t e = cudaDeviceGetAttribute(value, attribute, *device); e != cudaSuccess)
      return from_cuda_error(e, "cudaDeviceGetAttribute(compute capability)");
  }
  return require_hopper(*device, major, minor);
}

zyfa_status require_hopper(int device, int major, int minor) {
  if (major != kHopperMajor) {
    return fail(ZYFA_STATUS_UNSUPPORTED_DEVICE,
                "device %d has compute capability %d.%d: zyfa's kernels are built for sm_90a (Hopper)", device,
                major, minor);
  }
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status stream_is_capturing(void *stream, bool *capturing) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status);
  if (e != cudaSuccess) return from_cuda_error(e, "cudaStreamIsCapturing(stream)");
  *capturing = status != cudaStreamCaptureStatusNone;
  return ZYFA_STATUS_SUCCESS;
}

std::unique_ptr<DeviceMemory> make_device_memory() { return std::make_unique<CudaDeviceMemory>(); }

// ---------------------------------------------------------------- driver API (added by asmgen)
namespace {

// The driver's error numbers that these calls can return, as the runtime numbers them.
static_assert(int(CUDA_ERROR_INVALID_VALUE) == int(cudaErrorInvalidValue), "driver and runtime numbering");
static_assert(int(CUDA_ERROR_OUT_OF_MEMORY) == int(cudaErrorMemoryAllocation), "driver and runtime numbering");
static_assert(int(CUDA_ERROR_NOT_INITIALIZED) == int(cudaErrorInitializationError), "driver and runtime numbering");
static_assert(int(CUDA_ERROR_INVALID_IMAGE) == int(cudaErrorInvalidKernelImage), "driver and runtime numbering");
static_assert(int(CUDA_ERROR_INVALID_CONTEXT) == int(cudaErrorDeviceUninitialized), "driver and runtime numbering");
static_assert(int(CUDA_ERROR_NO_BINARY_FOR_GPU) == int(cudaErrorNoKernelImageForDevice),
              "driver and runtime numbering");
static_assert(int(CUDA_ERROR_INVALID_HANDLE) == int(cudaErrorInvalidResourceHandle), "driver and runtime numbering");
static_assert(int(CUDA_ERROR_NOT_FOUND) == int(cudaErrorSymbolNotFound), "driver and runtime numbering");
static_assert(int(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) == int(cudaErrorLaunchOutOfResources),
              "driver and runtime numbering");
static_assert(int(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED) == int(cudaErrorSharedObjectInitFailed),
              "driver and runtime numbering");
static_assert(int(CUDA_ERROR_CONTEXT_IS_DESTROYED) == int(cudaErrorContextIsDestroyed), "driver and runtime numbering");
static_assert(int(CUDA_ERROR_DEINITIALIZED) == int(cudaErrorCudartUnloading), "driver and runtime numbering");

// The ABI version of the driver functions below (their signatures are unchanged since CUDA 12.0).
constexpr unsigned kDriverAbiVersion = 12000;

using ModuleLoadData = CUresult (*)(CUmodule *, const void *);
using ModuleGetFunction = CUresult (*)(CUfunction *, CUmodule, const char *);
using ModuleUnload = CUresult (*)(CUmodule);
using FuncSetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
using LaunchKernelEx = CUresult (*)(const CUlaunchConfig *, CUfunction, void **, void **);
using CtxGetCurrent = CUresult (*)(CUcontext *);
using CtxSetCurrent = CUresult (*)(CUcontext);
using CtxGetId = CUresult (*)(CUcontext, unsigned long long *);

struct DriverApi {
  ModuleLoadData module_load_data = nullptr;
  ModuleGetFunction module_get_function = nullptr;
  ModuleUnload module_unload = nullptr;
  FuncSetAttribute func_set_attribute = nullptr;
  LaunchKernelEx launch_kernel_ex = nullptr;
  CtxGetCurrent ctx_get_current = nullptr;
  CtxSetCurrent ctx_set_current = nullptr;
  CtxGetId ctx_get_id = nullptr;
  int error = cudaSuccess;  // what resolving them returned
};

template <typename Fn>
int resolve(const char *symbol, Fn *fn) {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, kDriverAbiVersion, cudaEnableDefault, &found);
  if (e != cudaSuccess) return e;
  if (found != cudaDriverEntryPointSuccess || p == nullptr) return cudaErrorSymbolNotFound;
  *fn = reinterpret_cast<Fn>(p);
  return cudaSuccess;
}

// Resolved once per process; thread-safe by the rules of function-local statics.
const DriverApi &driver() {
  static const DriverApi api = [] {
    DriverApi d;
    if (d.error == cudaSuccess) d.error = resolve("cuModuleLoadData", &d.module_load_data);
    if (d.error == cudaSuccess) d.error = resolve("cuModuleGetFunction", &d.module_get_function);
    if (d.error == cudaSuccess) d.error = resolve("cuModuleUnload", &d.module_unload);
    if (d.error == cudaSuccess) d.error = resolve("cuFuncSetAttribute", &d.func_set_attribute);
    if (d.error == cudaSuccess) d.error = resolve("cuLaunchKernelEx", &d.launch_kernel_ex);
    if (d.error == cudaSuccess) d.error = resolve("cuCtxGetCurrent", &d.ctx_get_current);
    if (d.error == cudaSuccess) d.error = resolve("cuCtxSetCurrent", &d.ctx_set_current);
    if (d.error == cudaSuccess) d.error = resolve("cuCtxGetId", &d.ctx_get_id);
    return d;
  }();
  return api;
}

CUcontext current_driver_context() {
  const DriverApi &d = driver();
  CUcontext context = nullptr;
  if (d.error != cudaSuccess || d.ctx_get_current(&context) != CUDA_SUCCESS) return nullptr;
  return context;
}

void make_driver_context_current(CUcontext context) {
  const DriverApi &d = driver();
  if (d.error == cudaSuccess) d.ctx_set_current(context);
}

bool driver_context_id(CUcontext context, unsigned long long *id) {
  const DriverApi &d = driver();
  return d.error == cudaSuccess && context != nullptr && d.ctx_get_id(context, id) == CUDA_SUCCESS;
}

// The thread's current context, where the runtime launches: the one the caller made current, or where there
// is none yet, the current device's primary context (made current here, as the runtime's first call would).
int context_for_launches(CUcontext *context) {
  const DriverApi &d = driver();
  if (d.error != cudaSuccess) return d.error;
  if (const CUresult r = d.ctx_get_current(context); r != CUDA_SUCCESS) return int(r);
  if (*context != nullptr) return cudaSuccess;
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return e;
  if (const CUresult r = d.ctx_get_current(context); r != CUDA_SUCCESS) return int(r);
  return *context != nullptr ? cudaSuccess : cudaErrorDeviceUninitialized;  // the runtime made none current
}

}  // namespace

int current_device(int *device) { return cudaGetDevice(device); }

int current_context_id(unsigned long long *id) {
  CUcontext context = nullptr;
  if (const int e = context_for_launches(&context)) return e;
  return int(driver().ctx_get_id(context, id));
}

int load_module(const void *image, void **module) {
  const DriverApi &d = driver();
  // Into the context the runtime launches into, which current_context_id named for the caller's cache.
  CUcontext context = nullptr;
  if (const int e = context_for_launches(&context)) return e;
  RelaxedCaptureScope relaxed;  // a first call may come while a graph is being captured
  CUmodule m = nullptr;
  const CUresult r = d.module_load_data(&m, image);
  *module = m;
  return int(r);
}

void unload_module(void *module) {
  const DriverApi &d = driver();
  if (d.error == cudaSuccess && module != nullptr) d.module_unload(static_cast<CUmodule>(module));
}

int module_function(void *module, const char *entry, void **function) {
  const DriverApi &d = driver();
  if (d.error != cudaSuccess) return d.error;
  CUfunction f = nullptr;
  const CUresult r = d.module_get_function(&f, static_cast<CUmodule>(module), entry);
  *function = f;
  return int(r);
}

int set_max_dynamic_shared_memory(void *function, int bytes) {
  const DriverApi &d = driver();
  if (d.error != cudaSuccess) return d.error;
  return int(d.func_set_attribute(static_cast<CUfunction>(function), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  bytes));
}

int launch_function(void *function, int grid, int block, int dynamic_smem_bytes, void *stream, void *params,
                    StreamOrder order) {
  const DriverApi &d = driver();
  if (d.error != cudaSuccess) return d.error;
  CUlaunchAttribute overlap{};
  overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  overlap.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = unsigned(grid);
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = unsigned(block);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = unsigned(dynamic_smem_bytes);
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = &overlap;
  config.numAttrs = order == StreamOrder::kOverlapPrevious ? 1 : 0;
  void *args[] = {params};
  return int(d.launch_kernel_ex(&config, static_cast<CUfunction>(function), args, nullptr));
}

}  // namespace zyfa::cuda
