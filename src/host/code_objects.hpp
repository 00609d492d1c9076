// The code objects embedded in libzyfa: cubins that src/asmgen writes at build time (as PTX, assembled by
// ptxas), with the metadata their launches need, and their kernels loaded once per device and context.
#ifndef ZYFA_HOST_CODE_OBJECTS_HPP_
#define ZYFA_HOST_CODE_OBJECTS_HPP_

#include <cstddef>

namespace zyfa {

struct CodeObject {
  const char *variant;     // e.g. "fp8_d128"
  const char *entry;       // the kernel's name in the cubin
  int threads;             // block size the kernel is written for
  int dynamic_smem_bytes;  // what each launch asks for
  int d_qk, d_v;
  bool lean_p;             // P codes from one FFMA (true) or exact exp2 + conversion
  bool split_p;            // exact P plus its e4m3 residual in a second P V product (ZYFA_P_ROUNDING_SPLIT)
  bool wgmma;              // the TMA + wgmma schedule (true) or the mma.sync one
  bool vt_prepass;         // wgmma: reads V^T from the call's workspace (src/kernels/fp8_vt_layout.h)
  int query_tile_rows;     // rows per query tile of the job table the kernel walks
  bool overlaps_prepass;   // vt_prepass: may be launched to overlap the pre-pass (it waits before reading V^T)
  const unsigned char *image;
  size_t image_bytes;
};

// The table that the build generates (src/asmgen/cmake/build_code_objects.cmake), one entry per variant.
extern const CodeObject kCodeObjects[];
extern const int kCodeObjectCount;

// The FP8 attention kernel for (d_qk, d_v), P rounding, schedule and V's source, or nullptr if none was
// built.
const CodeObject *find_fp8_code_object(int d_qk, int d_v, bool lean_p, bool split_p, bool wgmma, bool vt_prepass);

// The kernel of `object` in the current context, loaded on first use (once per device, context and
// object; thread-safe), its dynamic shared memory limit set. Returns a cudaError_t value; *function is a CUfunction.
int code_object_function(const CodeObject &object, void **function);
// Whether `object` is loaded in the current context, without loading it (a captured launch must not: a
// module load allocates device memory). Returns a cudaError_t value.
int code_object_loaded(const CodeObject &object, bool *loaded);

}  // namespace zyfa

#endif  // ZYFA_HOST_CODE_OBJECTS_HPP_
