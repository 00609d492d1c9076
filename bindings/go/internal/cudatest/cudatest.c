/* The CUDA driver, opened with dlopen so that nothing here links against CUDA. The signatures are those
 * of cuda.h (CUdeviceptr is a 64-bit integer, CUcontext a pointer, CUdevice an int, CUresult an int). */
#include "cudatest.h"

#include <dlfcn.h>
#include <stdio.h>

static struct {
  int opened; /* 0 untried, 1 usable, -1 failed (the reason stays in error) */
  void *context;
  int (*init)(unsigned);
  int (*device_count)(int *);
  int (*device_get)(int *, int);
  int (*primary_retain)(void **, int);
  int (*set_current)(void *);
  int (*alloc)(uint64_t *, size_t);
  int (*free)(uint64_t);
  int (*upload)(uint64_t, const void *, size_t);
  int (*download)(void *, uint64_t, size_t);
  int (*synchronize)(void);
  int (*error_string)(int, const char **);
} cu;
static char error[512];

static int failed(const char *call, int status) {
  const char *why = "unknown error";
  if (cu.error_string != NULL) cu.error_string(status, &why);
  snprintf(error, sizeof error, "%s: CUDA error %d (%s)", call, status, why ? why : "unknown error");
  return status;
}

static int open_failed(const char *call, int status) {
  cu.opened = -1;
  return failed(call, status);
}

const char *zyfa_cudatest_error(void) { return error; }

#define LOOK_UP(field, symbol)                                                          \
  if ((*(void **)&cu.field = dlsym(driver, symbol)) == NULL) {                          \
    snprintf(error, sizeof error, "libcuda.so.1 has no %s", symbol);                     \
    return cu.opened = -1;                                                               \
  }

int zyfa_cudatest_open(void) {
  if (cu.opened != 0) return cu.opened == 1 ? 0 : -1;
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == NULL) {
    snprintf(error, sizeof error, "no CUDA driver: %s", dlerror());
    return cu.opened = -1;
  }
  LOOK_UP(error_string, "cuGetErrorString")
  LOOK_UP(init, "cuInit")
  LOOK_UP(device_count, "cuDeviceGetCount")
  LOOK_UP(device_get, "cuDeviceGet")
  LOOK_UP(primary_retain, "cuDevicePrimaryCtxRetain")
  LOOK_UP(set_current, "cuCtxSetCurrent")
  LOOK_UP(alloc, "cuMemAlloc_v2")
  LOOK_UP(free, "cuMemFree_v2")
  LOOK_UP(upload, "cuMemcpyHtoD_v2")
  LOOK_UP(download, "cuMemcpyDtoH_v2")
  LOOK_UP(synchronize, "cuCtxSynchronize")
  int status, count = 0, device = 0;
  if ((status = cu.init(0)) != 0) return open_failed("cuInit", status);
  if ((status = cu.device_count(&count)) != 0) return open_failed("cuDeviceGetCount", status);
  if (count == 0) {
    snprintf(error, sizeof error, "the CUDA driver sees no device");
    return cu.opened = -1;
  }
  if ((status = cu.device_get(&device, 0)) != 0) return open_failed("cuDeviceGet", status);
  if ((status = cu.primary_retain(&cu.context, device)) != 0) {
    return open_failed("cuDevicePrimaryCtxRetain", status);
  }
  cu.opened = 1;
  return 0;
}

/* Every operation runs with the primary context current on this thread. */
#define WITH_CONTEXT(call, expression)                                          \
  int status;                                                                   \
  if (cu.opened != 1) return failed("zyfa_cudatest_open was not called", -1);   \
  if ((status = cu.set_current(cu.context)) != 0) return failed("cuCtxSetCurrent", status); \
  if ((status = (expression)) != 0) return failed(call, status);                \
  return 0;

int zyfa_cudatest_alloc(uint64_t *ptr, size_t bytes) { WITH_CONTEXT("cuMemAlloc", cu.alloc(ptr, bytes)) }
int zyfa_cudatest_free(uint64_t ptr) { WITH_CONTEXT("cuMemFree", cu.free(ptr)) }
int zyfa_cudatest_upload(uint64_t dst, const void *src, size_t bytes) {
  WITH_CONTEXT("cuMemcpyHtoD", cu.upload(dst, src, bytes))
}
int zyfa_cudatest_download(void *dst, uint64_t src, size_t bytes) {
  WITH_CONTEXT("cuMemcpyDtoH", cu.download(dst, src, bytes))
}
int zyfa_cudatest_synchronize(void) { WITH_CONTEXT("cuCtxSynchronize", cu.synchronize()) }
