/*
 * zyfa: FP8 and BF16 causal prefill attention for NVIDIA Hopper (sm_90a).
 *
 * The C ABI. C99, no CUDA types: a stream is passed as `void *` (a cudaStream_t,
 * NULL meaning the default stream), tensors as raw device pointers.
 *
 * ABI promise: every struct that starts with `size_t struct_size` only ever grows
 * at its end. A caller sets struct_size = sizeof(the struct it was compiled with)
 * (the ZYFA_*_INIT macros do). The library accepts every layout it knows, from the
 * first released one up to its own, and treats fields past a caller's struct_size as
 * their defaults; a larger struct_size (a newer header than the library) is refused
 * with ZYFA_STATUS_BAD_STRUCT_SIZE, since fields it cannot read would be ignored
 * silently. Status values are explicit and never renumbered. Before 1.0 the shared
 * library's soname names the minor version (libzyfa.so.0.2): a program linked against
 * one minor release loads only that one, and the older layouts matter to callers that
 * load the library by path (the Python binding does, through ctypes).
 *
 * Threading: every function may be called from any thread. zyfa_last_error() is
 * per thread.
 */
#ifndef ZYFA_ZYFA_H_
#define ZYFA_ZYFA_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(ZYFA_BUILDING)  /* the library's own build defines it */
#  define ZYFA_API __declspec(dllexport)
#elif defined(_WIN32)
#  define ZYFA_API __declspec(dllimport)
#elif defined(__GNUC__)
#  define ZYFA_API __attribute__((visibility("default")))
#else
#  define ZYFA_API
#endif

#define ZYFA_VERSION_MAJOR 0
#define ZYFA_VERSION_MINOR 2
#define ZYFA_VERSION_PATCH 0
/* One integer that grows with every release: major * 10000 + minor * 100 + patch. */
#define ZYFA_VERSION (ZYFA_VERSION_MAJOR * 10000 + ZYFA_VERSION_MINOR * 100 + ZYFA_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- statuses */
typedef enum zyfa_status {
  ZYFA_STATUS_SUCCESS = 0,
  ZYFA_STATUS_NULL_ARGUMENT = 1,          /* a required pointer argument (the descriptor itself, an out-parameter) is NULL */
  ZYFA_STATUS_BAD_STRUCT_SIZE = 2,        /* struct_size is not a layout this library knows */
  ZYFA_STATUS_BAD_DTYPE = 3,
  ZYFA_STATUS_BAD_LAYOUT = 4,
  ZYFA_STATUS_UNSUPPORTED_HEAD_DIM = 5,   /* (d_qk, d_v) is neither (128, 128) nor (192, 128); a rotated quantize
                                           * of dim other than 128 or 192 */
  ZYFA_STATUS_BAD_SHAPE = 6,              /* batch, seqlen, nheads or nheads_k below 1 */
  ZYFA_STATUS_BAD_HEAD_RATIO = 7,         /* nheads is not a multiple of nheads_k */
  ZYFA_STATUS_BAD_STRIDE = 8,             /* a stride is negative, zero where it must not be, or not 16-byte
                                           * granular; output strides that are not nested: ordered by size, each
                                           * must step past all that the smaller ones span (which excludes every
                                           * overlap, and a few interleavings that would not overlap) */
  ZYFA_STATUS_MISALIGNED = 9,             /* q, k, v or out not on 16 bytes, lse on 4, a used workspace on 256;
                                           * quantize: src or dst not on 16 bytes, descale on 4 */
  ZYFA_STATUS_NULL_TENSOR = 10,           /* q, k, v or out is NULL, or a used workspace (workspace_bytes > 0 where
                                           * zyfa_attn_workspace_size is above 0); quantize: src or dst is NULL */
  ZYFA_STATUS_ALIASED_OUTPUT = 11,        /* out, lse or a used workspace overlaps an input (a tensor or a device
                                           * descale) or another of the three; quantize: dst or descale overlaps.
                                           * By address ranges (first to last byte): tensors interleaved in one
                                           * buffer overlap even where no element is shared */
  ZYFA_STATUS_BAD_DESCALE = 12,           /* an FP8 descale is missing, of an unknown kind, not a positive normal
                                           * float, a device descale not on 4 bytes or with a negative stride, or
                                           * host descales under which the largest e4m3 inputs (448) would
                                           * overflow the float scores or the BF16 output */
  ZYFA_STATUS_FP8_FIELD_WITH_BF16 = 13,   /* an FP8-only field (a descale, p_rounding) set with BF16 inputs */
  ZYFA_STATUS_NOT_CAUSAL = 14,            /* causal must be 1: only causal attention is implemented */
  ZYFA_STATUS_SIZE_OVERFLOW = 15,         /* a count or byte offset overflows 64 bits, an extent passes 2^31 - 1,
                                           * or the job count (about batch * nheads * seqlen / 256, by the kernel
                                           * that the strides select) passes 2^31 - 2^16 (the kernels index
                                           * them with 32 bits, and a persistent grid steps past the last job) */
  ZYFA_STATUS_BAD_SOFTMAX_SCALE = 16,     /* negative, NaN or infinite, or infinite times log2(e) */
  ZYFA_STATUS_NO_DEVICE = 17,             /* no CUDA device or driver is present */
  ZYFA_STATUS_UNSUPPORTED_DEVICE = 18,    /* the current device is not a Hopper GPU with sm_90 code in this build */
  ZYFA_STATUS_CUDA_ERROR = 19,            /* the CUDA runtime reported an error, also the context's sticky one (an
                                           * earlier kernel's fault, whoever launched it) and one still pending on
                                           * this thread from the caller's own earlier runtime calls, which zyfa
                                           * leaves in place (cudaGetLastError clears it) */
  ZYFA_STATUS_OUT_OF_MEMORY = 20,
  ZYFA_STATUS_NOT_PREPARED = 21,          /* a call under stream capture needs a plan or a loaded kernel that
                                           * zyfa_attn_prepare readies first (a new shape, P rounding, or strides
                                           * that select another kernel) */
  ZYFA_STATUS_BAD_ARGUMENT = 22,          /* any other argument out of range (quantize sizes, cache capacity,
                                             p_rounding, a workspace_bytes below zyfa_attn_workspace_size) */
  ZYFA_STATUS_INTERNAL = 23,              /* a bug in zyfa: please report it with zyfa_last_error() */
  /* Never returned. It keeps every status a later version may add a valid value of this type (in C++ too)
   * and the enum int-sized; treat a status you do not know as an error (zyfa_status_string names it). */
  ZYFA_STATUS_MAX_ENUM = 0x7fffffff
} zyfa_status;

/* A static string naming the status, e.g. "ZYFA_STATUS_BAD_DTYPE: unknown input dtype". Never NULL. */
ZYFA_API const char *zyfa_status_string(zyfa_status status);

/* The message of the last failed call on this thread, naming the field and its value; "" after a call that
 * succeeded (zyfa_status_string, zyfa_last_error and zyfa_version leave it as it is). The pointer stays valid
 * until the next zyfa call on this thread. */
ZYFA_API const char *zyfa_last_error(void);

/* ZYFA_VERSION of the loaded library; compare with the header's macro to catch a mismatched .so. */
ZYFA_API int zyfa_version(void);

/* ---------------------------------------------------------------- descriptor */
/* Inputs must be finite in either dtype. A NaN or infinity in v reaches rows whose causal mask excludes its
 * key: a masked probability is a zero in the tensor cores' product, and 0 * NaN is NaN. (Masked scores are
 * replaced, so a NaN in k reaches only the rows that attend to its key, as one in q reaches its own row.) */
typedef enum zyfa_dtype {
  ZYFA_DTYPE_BF16 = 0,      /* q, k, v in bfloat16 */
  ZYFA_DTYPE_FP8_E4M3 = 1,  /* q, k, v in float8 e4m3 (OCP, finite, max 448), one descale per tensor */
  ZYFA_DTYPE_MAX_ENUM = 0x7fffffff  /* never valid: keeps the field int-sized */
} zyfa_dtype;

typedef enum zyfa_layout {
  ZYFA_LAYOUT_BSHD = 0,     /* (batch, seqlen, heads, dim), contiguous */
  ZYFA_LAYOUT_BHSD = 1,     /* (batch, heads, seqlen, dim), contiguous */
  ZYFA_LAYOUT_STRIDED = 2,  /* the strides fields below, in elements; the dim is always contiguous */
  ZYFA_LAYOUT_MAX_ENUM = 0x7fffffff  /* never valid: keeps the field int-sized */
} zyfa_layout;

/* Strides in elements of one tensor of shape (batch, seqlen, heads, dim). Read only with ZYFA_LAYOUT_STRIDED. */
typedef struct zyfa_strides {
  int64_t batch;
  int64_t seq;
  int64_t head;
} zyfa_strides;

typedef enum zyfa_descale_kind {
  ZYFA_DESCALE_NONE = 0,    /* BF16 only */
  ZYFA_DESCALE_HOST = 1,    /* `value`, a host float */
  ZYFA_DESCALE_DEVICE = 2,  /* `ptr`, float32 in device memory (host memory for zyfa_attn_fwd_host), read by the kernel */
  ZYFA_DESCALE_MAX_ENUM = 0x7fffffff  /* never valid: keeps the field int-sized */
} zyfa_descale_kind;

/* How FP8 attention rounds the softmax probabilities P to e4m3 (numerics: src/kernels/numerics.h).
 * Lean P takes the e4m3 code of 2^x from one multiply-add (Mitchell's approximation, up to 6.1% above
 * 2^x; each key block's largest P exactly on one code): fewer instructions per score, and on std-1
 * Gaussian inputs about 1.9-2.35e-2 relative RMS error against fp64 at either head dim (CPU backend). Exact
 * P computes exp2 and rounds it correctly to e4m3: 1.6-2.0e-2 there (about 1.15-1.2x lower), for more work
 * per score. Both exist at both head dims; the default is the one ZYFA chose for each. */
typedef enum zyfa_p_rounding {
  ZYFA_P_ROUNDING_DEFAULT = 0,  /* lean P at d_qk = 128, exact P at d_qk = 192 */
  ZYFA_P_ROUNDING_LEAN = 1,     /* lean P at either head dim */
  ZYFA_P_ROUNDING_EXACT = 2,    /* exact P at either head dim */
  ZYFA_P_ROUNDING_SPLIT = 3,    /* split P at either head dim: P = P_hi + P_lo, P_hi exact P and P_lo the
                                   e4m3 of its residual, two P V products into one accumulator; much less
                                   P rounding error than exact P, at the cost of a second P V product.
                                   Output error 0.09-0.11x exact P's (1.6-1.7e-3 on std-1 Gaussians, S =
                                   128-4096) on the CPU backend, 0.09-0.095x on the H200 on Gaussian
                                   inputs (0.27-0.70x on outlier and structured ones) at 0.82-0.93x
                                   exact P's speed. On the GPU only the TMA/wgmma kernels implement it:
                                   q, k and v need 16-byte aligned bases and strides above 0, 16-byte
                                   multiples below 2^40 bytes, wherever an extent is above 1, and seqlen
                                   <= 2^31 - 513; a problem outside that (which the other kernels would
                                   take) is ZYFA_STATUS_BAD_ARGUMENT naming p_rounding and the field.
                                   zyfa_attn_fwd_host takes any layout. */
  ZYFA_P_ROUNDING_MAX_ENUM = 0x7fffffff  /* never valid: keeps the field int-sized */
} zyfa_p_rounding;

/* The factor that maps an FP8 tensor back to its original range. A device descale is one element
 * (batch_stride = head_stride = 0) or expanded to (batch, nheads_k) with these strides in elements.
 * Device values are not checked (the call never waits for the host): each must be a positive normal float. */
typedef struct zyfa_descale {
  zyfa_descale_kind kind;
  float value;
  const float *ptr;
  int64_t batch_stride;
  int64_t head_stride;
} zyfa_descale;

typedef struct zyfa_attn_desc {
  size_t struct_size;           /* sizeof(zyfa_attn_desc) of the caller: set by ZYFA_ATTN_DESC_INIT */
  zyfa_dtype dtype;             /* of q, k and v; out is always bfloat16 */
  zyfa_layout layout;           /* of q, k, v and out alike */
  int64_t batch;                /* batch, seqlen, nheads, nheads_k: from 1 to 2^31 - 1 */
  int64_t seqlen;               /* seqlen_q = seqlen_k; any value from 1 to 2^31 - 1 */
  int64_t nheads;               /* query heads */
  int64_t nheads_k;             /* key/value heads; nheads % nheads_k == 0 (MHA, GQA, MQA) */
  int64_t d_qk;                 /* 128, or 192 with d_v = 128 */
  int64_t d_v;                  /* must be 128 */
  const void *q;                /* device memory (host memory for zyfa_attn_fwd_host), 16-byte aligned:
                                   (batch, seqlen, nheads, d_qk) in the layout's order */
  const void *k;                /* the same, (batch, seqlen, nheads_k, d_qk) */
  const void *v;                /* the same, (batch, seqlen, nheads_k, d_v) */
  void *out;                    /* bfloat16, shape (batch, seqlen, nheads, d_v) in the layout's order */
  float *lse;                   /* optional: float32 (batch, nheads, seqlen), contiguous, natural log */
  float softmax_scale;          /* 0 means 1 / sqrt(d_qk) */
  int32_t causal;               /* must be 1 */
  zyfa_strides q_strides;       /* ZYFA_LAYOUT_STRIDED only */
  zyfa_strides k_strides;
  zyfa_strides v_strides;
  zyfa_strides out_strides;
  zyfa_descale q_descale;       /* FP8 only */
  zyfa_descale k_descale;
  zyfa_descale v_descale;
  zyfa_p_rounding p_rounding;   /* FP8 only: BF16 must leave it DEFAULT. A struct_size that ends before this
                                   field (the first layout, up to v_descale) reads as DEFAULT */
  int32_t reserved0;            /* the padding after p_rounding, named so that ZYFA_ATTN_DESC_INIT zeroes it;
                                   never read */
  /* Optional scratch in device memory that makes a call faster (appended after p_rounding).
   * zyfa_attn_workspace_size gives the bytes a problem can use; where that is above 0 and workspace_bytes
   * is at least that, the call first writes V into the workspace in the layout its kernel reads (FP8: the
   * kernel then copies V^T instead of transposing every V block), with the same output bits as without.
   * workspace_bytes = 0 (the default, and what a struct_size ending before it reads as) runs without; a
   * workspace smaller than the problem uses is an error, not a slower call. zyfa_attn_prepare picks the kernel
   * from workspace_bytes: the pointer may be NULL there (one given is checked as zyfa_attn_fwd checks it).
   * Calls that may run at the same time need workspaces of their own. */
  void *workspace;              /* 256-byte aligned; must not overlap any tensor (checked only where the problem's
                                   GPU kernel uses a workspace, elsewhere both fields are ignored; read only by
                                   that kernel: zyfa_attn_fwd_host checks them as zyfa_attn_fwd does, so that one
                                   descriptor gets one answer, and its CPU backend never reads the workspace) */
  size_t workspace_bytes;
  /* New fields go here, and only here, 8 bytes at a time (a 4-byte field with a named reserved one), so that
   * every layout has a size of its own: the library tells them apart by struct_size. */
} zyfa_attn_desc;

/* Defaults: BF16, BSHD, d = 128, causal, no LSE, softmax_scale = 1/sqrt(d_qk), default P rounding.
 * Shapes and pointers must be filled in. */
#define ZYFA_ATTN_DESC_INIT                                                                     \
  {                                                                                             \
    sizeof(zyfa_attn_desc), ZYFA_DTYPE_BF16, ZYFA_LAYOUT_BSHD, 0, 0, 0, 0, 128, 128, NULL, NULL, \
        NULL, NULL, NULL, 0.0f, 1, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},                   \
        {ZYFA_DESCALE_NONE, 0.0f, NULL, 0, 0}, {ZYFA_DESCALE_NONE, 0.0f, NULL, 0, 0},            \
        {ZYFA_DESCALE_NONE, 0.0f, NULL, 0, 0}, ZYFA_P_ROUNDING_DEFAULT, 0, NULL, 0               \
  }

/* ---------------------------------------------------------------- attention */
/* One causal forward attention on the current CUDA device, asynchronous on `stream` (a cudaStream_t).
 * On an error of the arguments (every status but ZYFA_STATUS_CUDA_ERROR and ZYFA_STATUS_OUT_OF_MEMORY) nothing
 * is launched and nothing is written. After ZYFA_STATUS_CUDA_ERROR with a workspace, the workspace's pre-pass
 * may have run (out and lse are not written). */
ZYFA_API zyfa_status zyfa_attn_fwd(const zyfa_attn_desc *desc, void *stream);

/* Validates `desc` and builds (or finds) the plan for its shape in the current context, and loads the
 * kernel it will run; where desc's strides are ones TMA can map, also (where it can: their failure is not
 * the prepare's) the plans and kernels that strides TMA cannot map (such as 0 on a dimension above 1) fall
 * to. After it, a zyfa_attn_fwd of the same shape, dtype, P rounding and workspace_bytes can be captured in
 * a CUDA graph in the prepared strides, and, after a prepare in strides TMA can map (BSHD, BHSD), in any
 * layout (split P excepted: strides TMA cannot map refuse it). Pointers (device descales too) may be NULL
 * here. One prepare may take up to three of the cache's plans (zyfa_plan_cache_set_capacity bounds them; the
 * prepared strides' own plan is the last to go), so prepare right before capturing when many shapes are in
 * use. */
ZYFA_API zyfa_status zyfa_attn_prepare(const zyfa_attn_desc *desc, void *stream);

/* The workspace bytes a zyfa_attn_fwd of `desc` can use (zyfa_attn_desc.workspace): for FP8 with lean P, or
 * exact P at d_qk = 192 (the default P roundings, and lean P asked for at d_qk = 192), where
 * (nheads / nheads_k) * seqlen >= 4096 and q, k, v are TMA-mappable,
 * one V^T per (batch, kv head) of 128 x seqlen bytes (seqlen rounded up to 128); 0 elsewhere (BF16, shorter
 * FP8 problems, exact P at d_qk = 128, split P), where a workspace would not make the call faster. Depends on
 * the shape, the dtype, the P rounding and the strides only: pointers may be NULL (those given are checked as
 * zyfa_attn_fwd checks them), and the workspace fields are not read. Host only: it launches nothing. */
ZYFA_API zyfa_status zyfa_attn_workspace_size(const zyfa_attn_desc *desc, size_t *bytes);

/* The CPU backend: the same descriptor over host memory, the same algorithm and numerics as the GPU
 * kernels (tiling, P rounding, block scaling), fp32 accumulation, multi-threaded. Synchronous. */
ZYFA_API zyfa_status zyfa_attn_fwd_host(const zyfa_attn_desc *desc);

/* ---------------------------------------------------------------- FP8 quantization */
typedef enum zyfa_rotation {
  ZYFA_ROTATION_NONE = 0,
  ZYFA_ROTATION_HADAMARD = 1,  /* random-sign Hadamard (d = 128), or 3-point DCT x 64-point Hadamard (d = 192) */
  ZYFA_ROTATION_MAX_ENUM = 0x7fffffff  /* never valid: keeps the field int-sized */
} zyfa_rotation;

typedef struct zyfa_quantize_desc {
  size_t struct_size;           /* set by ZYFA_QUANTIZE_DESC_INIT */
  const void *src;              /* bfloat16, n_rows x dim, rows contiguous with row_stride elements apart;
                                   16-byte aligned */
  void *dst;                    /* float8 e4m3, n_rows x dim, contiguous; 16-byte aligned */
  float *descale;               /* one float32, 4-byte aligned: the power of two that maps dst back to src's
                                   range */
  int64_t n_rows;
  int64_t dim;                  /* the row length; must be 128 or 192 with a rotation (else
                                   ZYFA_STATUS_UNSUPPORTED_HEAD_DIM), any multiple of 8 without */
  int64_t row_stride;           /* in elements; 0 means dim, else >= dim and a multiple of 8 */
  zyfa_rotation rotation;
  uint64_t rotation_seed;       /* the random signs of the rotation: use one seed for q and k */
  /* New fields go here, and only here. */
} zyfa_quantize_desc;

#define ZYFA_QUANTIZE_DESC_INIT {sizeof(zyfa_quantize_desc), NULL, NULL, NULL, 0, 0, 0, ZYFA_ROTATION_NONE, 0}

/* BF16 to FP8 e4m3 with one power-of-two scale per tensor: dst = round(rot(src) / descale), with descale =
 * 2^ceil(log2(amax / 448)) written to device memory, so an attention call can read it without a host wait. */
ZYFA_API zyfa_status zyfa_quantize_fp8(const zyfa_quantize_desc *desc, void *stream);

/* The host twin of zyfa_quantize_fp8 over host memory, bit-identical in its output. */
ZYFA_API zyfa_status zyfa_quantize_fp8_host(const zyfa_quantize_desc *desc);

/* ---------------------------------------------------------------- plan cache */
typedef struct zyfa_plan_cache_stats {
  size_t struct_size;           /* set by the caller before zyfa_plan_cache_get_stats */
  uint64_t hits;
  uint64_t misses;
  uint64_t evictions;
  uint64_t entries;             /* plans held now */
  uint64_t capacity;            /* the most plans held at once */
  uint64_t device_bytes;        /* device memory held by the job tables */
  /* New fields go here, and only here. */
} zyfa_plan_cache_stats;

#define ZYFA_PLAN_CACHE_STATS_INIT {sizeof(zyfa_plan_cache_stats), 0, 0, 0, 0, 0, 0}

ZYFA_API zyfa_status zyfa_plan_cache_get_stats(zyfa_plan_cache_stats *stats);
/* Bounds the cache's unpinned plans (least recently used go first); capacity >= 1. Default 64. A plan that a
 * call under CUDA-graph capture used is pinned: a graph may launch it at any time, so it is never evicted, and
 * it is held beside the capacity (counted in entries, which may so pass it) until zyfa_plan_cache_clear. The
 * first call of a new shape builds its plan (an allocation, an upload and a stream synchronization) while other
 * threads' calls of other shapes go on; calls of the same shape wait for that build. Prepare the shapes a
 * service expects at start-up. */
ZYFA_API zyfa_status zyfa_plan_cache_set_capacity(uint64_t capacity);
/* Frees every plan and its device memory, also those that captured CUDA graphs hold: destroy such graphs
 * first. Plans and loaded kernels belong to the context current at the call that built them, and each
 * context of a device gets its own; those of a context that has ended since (a destroyed context, or a
 * device reset's primary one) are never used again nor freed twice, and count in the stats until they are
 * evicted or a clear drops them. Not while a call that uses a plan may still be running on a stream. */
ZYFA_API zyfa_status zyfa_plan_cache_clear(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZYFA_ZYFA_H_ */
