// wgmma (PTX ISA, "Asynchronous warpgroup level matrix multiply-accumulate"): the matrix descriptors of
// operands in shared memory and the one shape the attention kernels issue, m64n128k16 with bf16 inputs
// and fp32 accumulators, with A from shared memory (S = Q K^T) or from registers (O += P V).
#ifndef ZYFA_KERNELS_HOPPER_WGMMA_CUH_
#define ZYFA_KERNELS_HOPPER_WGMMA_CUH_

#include <cstdint>

namespace zyfa::hopper {

// Bytes of one row of a 128-byte-swizzled tile: TMA with CU_TENSOR_MAP_SWIZZLE_128B writes boxes whose
// inner extent is exactly this, and wgmma reads them with the matching descriptor mode.
constexpr int kSwizzleBytes = 128;
// The swizzle pattern repeats every 8 rows: one group of 8 x 128 bytes, which must start 1024-aligned.
constexpr int kSwizzleAtomBytes = 8 * kSwizzleBytes;
// Descriptor fields count in 16-byte units.
constexpr uint32_t kDescriptorUnit = 16;
constexpr uint64_t kDescriptorSwizzle128B = 1;

// The 64-bit shared-memory matrix descriptor. `leading_bytes` and `stride_bytes` are what the PTX ISA
// calls LBO and SBO: for a K-major operand SBO steps between 8-row groups and LBO is unused; for an
// MN-major operand LBO steps between 64-element column blocks and SBO between 8-row groups of K.
__device__ __forceinline__ uint64_t make_smem_descriptor(uint32_t smem_addr, uint32_t leading_bytes,
                                                         uint32_t stride_bytes) {
  return (kDescriptorSwizzle128B << 62) | (uint64_t(stride_bytes / kDescriptorUnit) << 32) |
         (uint64_t(leading_bytes / kDescriptorUnit) << 16) | uint64_t((smem_addr / kDescriptorUnit) & 0x3FFFu);
}
// The descriptor of the same layout `bytes` further on (a multiple of 16; the start address field cannot
// carry out, since shared addresses stay below 2^18).
__device__ __forceinline__ uint64_t advance_descriptor(uint64_t desc, uint32_t bytes) {
  return desc + uint64_t(bytes / kDescriptorUnit);
}

// Accumulator fragment of m64n128 in fp32: 64 values per thread (PTX ISA, "Matrix fragments for wgmma").
constexpr int kAccumulatorsN128 = 64;
// A fragment of m64k16 in bf16 held in registers: 4 registers of two bf16 each.
constexpr int kRegistersA = 4;
// Accumulator fragment of m64n8 in fp32: rows g (registers 0, 1) and g + 8 (2, 3), columns 2t, 2t + 1.
constexpr int kAccumulatorsN8 = 4;

// Orders this thread's generic-proxy writes to shared memory before the async proxy (wgmma, TMA) reads
// them; a barrier then publishes them to the other threads.
__device__ __forceinline__ void fence_shared_to_async_proxy() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Orders this thread's register writes before the warpgroup's next wgmma reads them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// Closes the wgmmas issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// Waits until at most `kPending` committed groups are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving reads or writes of accumulator registers across the asynchronous
// window between issue and wait (the registers change under it).
template <int kN>
__device__ __forceinline__ void pin_registers(float (&r)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int kN>
__device__ __forceinline__ void pin_registers(uint32_t (&r)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// The 64 fp32 accumulator operands of an m64n128 product (or the first 64 of an n136), d[0] .. d[63], as
// in-out asm operands %0 .. %63.
#define ZYFA_WGMMA_ACCUMULATORS_64(d)                                                                          \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),     \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),     \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),    \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),    \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),    \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),    \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),    \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
// The accumulator registers %0 .. %63 in the asm text.
#define ZYFA_WGMMA_ACCUMULATOR_TEXT_64                                               \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "          \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

// d (+)= A B with A 64 x 16 K-major in shared memory and B 16 x 128 K-major in shared memory.
// kAccumulate false overwrites d (the first k-step of a product).
template <bool kAccumulate>
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[kAccumulatorsN128], uint64_t desc_a,
                                                    uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      ZYFA_WGMMA_ACCUMULATOR_TEXT_64
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : ZYFA_WGMMA_ACCUMULATORS_64(d)
      : "l"(desc_a), "l"(desc_b), "r"(int(kAccumulate)));
}

// d += A B with A 64 x 16 in registers (bf16 pairs in the accumulator layout of a previous product) and
// B 16 x 128 MN-major in shared memory (the transposed read, which wgmma offers for 16-bit types only).
__device__ __forceinline__ void wgmma_m64n128k16_rs_transposed_b(float (&d)[kAccumulatorsN128],
                                                                 const uint32_t (&a)[kRegistersA],
                                                                 uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      ZYFA_WGMMA_ACCUMULATOR_TEXT_64
      "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
      : ZYFA_WGMMA_ACCUMULATORS_64(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

// d += A B with A 64 x 16 in registers, as wgmma_m64n128k16_rs_transposed_b, and B 16 x 8 in shared memory
// (the kernels now take it inside m64n136; tools/device/wgmma_issue_probe.cu times it against that):
// with B all ones, d accumulates the row sums of exactly the bf16 values of A.
__device__ __forceinline__ void wgmma_m64n8k16_rs_transposed_b(float (&d)[kAccumulatorsN8],
                                                               const uint32_t (&a)[kRegistersA], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

// d += A B and e += A B' in one product (N = 136): A as in wgmma_m64n128k16_rs_transposed_b, B 16 x 136
// MN-major in shared memory, whose columns 128..135 (a third 64-column block, 2 LBO past the first) give e.
// The accumulator of n136 is n128's 64 values followed by n8's 4 (chunk 16), so d and e keep their fragment
// layouts. One wgmma instead of an n128 and an n8: on the H200 eight n128 + n8 pairs hold the issuing warp
// 489 cycles and finish in 740, eight n136 154 and 639 (tools/device/wgmma_issue_probe.cu, session 23): the
// queue in front of the tensor pipe is counted in instructions, and each small product costs more than its
// share of the work.
__device__ __forceinline__ void wgmma_m64n136k16_rs_transposed_b(float (&d)[kAccumulatorsN128],
                                                                 float (&e)[kAccumulatorsN8],
                                                                 const uint32_t (&a)[kRegistersA],
                                                                 uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %73, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n136k16.f32.bf16.bf16 {"
      ZYFA_WGMMA_ACCUMULATOR_TEXT_64 ", "
      "%64, %65, %66, %67"
      "}, {%68, %69, %70, %71}, %72, p, 1, 1, 1;\n}\n"
      : ZYFA_WGMMA_ACCUMULATORS_64(d),
        "+f"(e[0]), "+f"(e[1]), "+f"(e[2]), "+f"(e[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

#undef ZYFA_WGMMA_ACCUMULATORS_64
#undef ZYFA_WGMMA_ACCUMULATOR_TEXT_64

}  // namespace zyfa::hopper

#endif  // ZYFA_KERNELS_HOPPER_WGMMA_CUH_
