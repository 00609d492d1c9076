#include "host/code_objects.hpp"

#include <map>
#include <mutex>
#include <tuple>

#include "host/cuda_api.hpp"

namespace zyfa {

const CodeObject *find_fp8_code_object(int d_qk, int d_v, bool lean_p, bool split_p, bool wgmma, bool vt_prepass) {
  for (int i = 0; i < kCodeObjectCount; ++i) {
    const CodeObject &o = kCodeObjects[i];
    if (o.d_qk == d_qk && o.d_v == d_v && o.lean_p == lean_p && o.split_p == split_p && o.wgmma == wgmma &&
        o.vt_prepass == vt_prepass)
      return &o;
  }
  return nullptr;
}

namespace {

using LoadedKey = std::tuple<int, unsigned long long, const CodeObject *>;

// Loaded kernels stay for the life of their context (a module lives as long as it). Keyed by the context's
// ID too: after a cudaDeviceReset the device has a new context, and its first call loads the kernel again
// instead of launching a function of the destroyed one (that entry is never used again). Never destroyed,
// like the plan cache: a call racing process exit, or from another static's destructor, still finds them.
std::mutex &loaded_mutex() {
  static std::mutex &mutex = *new std::mutex;
  return mutex;
}
std::map<LoadedKey, void *> &loaded_functions() {
  static auto &loaded = *new std::map<LoadedKey, void *>;
  return loaded;
}

// `object`'s key in the current device and context. Returns a cudaError_t value.
int loaded_key(const CodeObject &object, LoadedKey *key) {
  int device = 0;
  if (const int e = cuda::current_device(&device)) return e;
  unsigned long long context = 0;
  if (const int e = cuda::current_context_id(&context)) return e;
  *key = std::make_tuple(device, context, &object);
  return 0;
}

}  // namespace

int code_object_loaded(const CodeObject &object, bool *loaded) {
  LoadedKey key;
  if (const int e = loaded_key(object, &key)) return e;
  std::lock_guard<std::mutex> lock(loaded_mutex());
  *loaded = loaded_functions().count(key) != 0;
  return 0;
}

int code_object_function(const CodeObject &object, void **function) {
  LoadedKey key;
  if (const int e = loaded_key(object, &key)) return e;
  std::lock_guard<std::mutex> lock(loaded_mutex());
  auto &loaded = loaded_functions();
  if (const auto it = loaded.find(key); it != loaded.end()) {
    *function = it->second;
    return 0;
  }
  void *module = nullptr, *fn = nullptr;
  if (const int e = cuda::load_module(object.image, &module)) return e;
  int e = cuda::module_function(module, object.entry, &fn);
  if (e == 0) e = cuda::set_max_dynamic_shared_memory(fn, object.dynamic_smem_bytes);
  if (e != 0) {
    cuda::unload_module(module);  // a retry loads it afresh; nothing half-prepared stays behind
    return e;
  }
  try {
    loaded.emplace(key, fn);
  } catch (...) {  // the map could not grow (std::bad_alloc, which the entry point reports): no orphan module
    cuda::unload_module(module);
    throw;
  }
  *function = fn;
  return 0;
}

}  // namespace zyfa
