// What both schedules of the FP8 kernel share: the entry name, the empty program, and the choice of schedule.
#include "asmgen/fp8_attention.hpp"

#include "asmgen/fp8_kernel_params.h"

namespace zyfa::asmgen {

std::string fp8_attention_entry(const Variant &v) { return "zyfa_" + v.name + "_attention"; }

Program fp8_attention_program(const Variant &v, int threads, int dynamic_smem_bytes) {
  Program prog;
  prog.entry = fp8_attention_entry(v);
  prog.threads = threads;
  prog.param_bytes = int(sizeof(Fp8AttentionParams));
  prog.dynamic_smem_bytes = dynamic_smem_bytes;
  return prog;
}

Program build_fp8_kernel(const Variant &v) {
  check_variant(v);
  return v.schedule == Schedule::kWgmma ? build_fp8_wgmma_attention(v) : build_fp8_mma_sync_attention(v);
}

}  // namespace zyfa::asmgen
