// The FP8 attention kernels that src/asmgen writes (embedded cubins, launched through the driver API):
// what the dispatcher needs (supports / CTAs per SM / launch) and the parameter block they take.
#ifndef ZYFA_HOST_FP8_ASM_ATTENTION_HPP_
#define ZYFA_HOST_FP8_ASM_ATTENTION_HPP_

#include <cstdint>
#include <string>

#include "asmgen/fp8_kernel_params.h"
#include "host/problem.hpp"
#include "kernels/launch.hpp"

namespace zyfa {
struct CodeObject;
}

namespace zyfa::kernels {

// The largest query tile of any FP8 code object (rows): the seqlen bound below leaves room for two of them
// past the last row in int32. A host test holds every code object to it.
constexpr int64_t kFp8MaxQueryTileRows = 256;

// FP8 e4m3 inputs, (d_qk, d_v) = (128, 128) or (192, 128) with lean or exact P, any strides (the
// validated 16-byte granular ones), GQA/MQA, LSE optional, seqlen below 2^31 - 2 tiles.
bool fp8_asm_attention_supports(const Problem &problem);
int fp8_attention_ctas_per_sm();
// Query rows per tile of the wgmma kernel that would run `problem` (its code object's; 128 where none).
int fp8_wgmma_query_tile_rows(const Problem &problem);
// Loads the kernel's code object on the current device (once), so that zyfa_attn_prepare does it rather
// than the first, possibly captured, launch. Returns a cudaError_t value (0 = success).
int prepare_fp8_asm_attention(const Problem &problem);
// Whether that code object is loaded in the current context (without loading it): a captured call needs it
// loaded, and one prepared with another p_rounding has a plan for its shape but not this kernel.
int fp8_asm_attention_loaded(const Problem &problem, bool *is_loaded);
// Returns a cudaError_t value (0 = success); never synchronizes.
int launch_fp8_asm_attention(const Problem &problem, const Schedule &schedule, void *stream);

// The Hopper schedule of the same kernels (TMA, wgmma): the same contract where the tensors fit TMA
// (16-byte aligned rows and strides), and the mma.sync one takes the rest.
bool fp8_wgmma_attention_supports(const Problem &problem);
// Why fp8_wgmma_attention_supports refuses `problem`, naming the descriptor field and its value (e.g.
// "desc->k_strides.batch = 0 elements: ..."); "" when it takes it. Host only: no GPU needed.
std::string fp8_wgmma_refusal(const Problem &problem);
int prepare_fp8_wgmma_attention(const Problem &problem);
int fp8_wgmma_attention_loaded(const Problem &problem, bool *is_loaded);
int launch_fp8_wgmma_attention(const Problem &problem, const Schedule &schedule, void *stream);

// The workspace bytes a call of `problem` can use to read V^T prepared once (src/kernels/fp8_vt_layout.h)
// instead of transposing every block in the kernel: above 0 where the wgmma kernel takes the problem, has a
// variant that reads V^T, and each V row is read by enough queries for the pre-pass to pay
// (kVtPrepassMinGroupKeys).
int64_t fp8_vt_workspace_bytes(const Problem &problem);

// The embedded kernel a problem takes on one schedule (wgmma: TMA + wgmma, else mma.sync): its head dims, P
// rounding and V's source; nullptr where none was built. The interpreter's tests run the variant it names.
const CodeObject *fp8_code_object(const Problem &problem, bool wgmma);

// The kernels' parameter block for a problem and a schedule (addresses as the problem holds them: device
// memory for a launch, host memory for the emitter's CPU interpreter in the host tests), for a kernel of
// query tiles of query_tile_rows rows (its code object's).
asmgen::Fp8AttentionParams fp8_attention_params(const Problem &problem, const Schedule &schedule,
                                                int query_tile_rows);

}  // namespace zyfa::kernels

#endif  // ZYFA_HOST_FP8_ASM_ATTENTION_HPP_
