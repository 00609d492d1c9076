// The FP8 causal attention kernel, written as a Program for one variant (d_qk, lean or exact P).
#ifndef ZYFA_ASMGEN_FP8_ATTENTION_HPP_
#define ZYFA_ASMGEN_FP8_ATTENTION_HPP_

#include <string>

#include "asmgen/program.hpp"
#include "asmgen/variants.hpp"

namespace zyfa::asmgen {

// "zyfa_<variant name>_attention": the kernel's entry in its cubin.
std::string fp8_attention_entry(const Variant &v);

// An empty program for variant v's kernel: its entry, block size, parameter block (Fp8AttentionParams) and
// dynamic shared memory; each schedule's builder writes the code.
Program fp8_attention_program(const Variant &v, int threads, int dynamic_smem_bytes);

// Variant v's whole kernel on its schedule (v.schedule); throws std::logic_error for a variant the emitter does
// not build (check_variant). What the build and the tests call.
Program build_fp8_kernel(const Variant &v);

// build_fp8_kernel's two schedules, for a variant it has checked.
// The mma.sync schedule: persistent job loop, query tiles, key blocks, cp.async staging, no warp
// specialization (fp8_mma_sync_schedule.cpp).
Program build_fp8_mma_sync_attention(const Variant &v);
// The same kernel on the Hopper schedule: a TMA producer warpgroup, consumer warpgroups of 64 query rows on
// wgmma (two in ping-pong where the producer transposes V, three where V^T comes from the workspace), per
// the variant (fp8_wgmma_schedule.cpp).
Program build_fp8_wgmma_attention(const Variant &v);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_FP8_ATTENTION_HPP_
