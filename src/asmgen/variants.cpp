#include "asmgen/variants.hpp"

#include <stdexcept>

#include "kernels/numerics.h"

namespace zyfa::asmgen {

const std::vector<Variant> &variants() {
  static const std::vector<Variant> table = {
      {"fp8_d128", 128, 128, numerics::uses_lean_p(128), Schedule::kMmaSync},
      {"fp8_d192", 192, 128, numerics::uses_lean_p(192), Schedule::kMmaSync},
      {"fp8_wgmma_d128", 128, 128, numerics::uses_lean_p(128), Schedule::kWgmma},
      {"fp8_wgmma_d192", 192, 128, numerics::uses_lean_p(192), Schedule::kWgmma},
      // The other P rounding at each head dim, for callers who ask for it (zyfa_attn_desc.p_rounding): exact P
      // at d = 128, lean P at d_qk = 192 (with its V^T workspace kernel: lean P is asked for speed).
      {"fp8_d128_exact", 128, 128, false, Schedule::kMmaSync},
      {"fp8_wgmma_d128_exact", 128, 128, false, Schedule::kWgmma},
      {"fp8_d192_lean", 192, 128, true, Schedule::kMmaSync},
      {"fp8_wgmma_d192_lean", 192, 128, true, Schedule::kWgmma},
      // Its tiles are not shifted (Variant::shifts_tiles): reading the shift tips ptxas 13.0 into serializing
      // every wgmma of this one kernel (C7511), like the instructions of sessions 34-35 below. Three rewrites of
      // the row arithmetic did too (session 40).
      {"fp8_wgmma_d192_lean_vt", 192, 128, true, Schedule::kWgmma, false, /*vt_prepass=*/true,
       /*consumers=*/3, /*overlaps_prepass=*/false, /*shifts_tiles=*/false},
      // Split P at either head dim (p_rounding = ZYFA_P_ROUNDING_SPLIT).
      {"fp8_wgmma_d128_split", 128, 128, false, Schedule::kWgmma, /*split_p=*/true},
      {"fp8_wgmma_d192_split", 192, 128, false, Schedule::kWgmma, /*split_p=*/true},
      // The default P roundings, reading V^T from the call's workspace (zyfa_attn_desc.workspace), with three
      // consumer warpgroups over 192-row tiles (each serialized: fp8_wgmma_emitter.hpp). Only d = 128 overlaps
      // the pre-pass: at d_qk = 192 one added instruction (griddepcontrol.wait, membar.cta or nanosleep,
      // wherever placed) tips ptxas 13.0 into serializing every wgmma (C7511), and two consecutive waits, which
      // stay clean, measured 0.979-1.008x of no overlap (bench/NOTES.md, sessions 34 and 35).
      {"fp8_wgmma_d128_vt", 128, 128, numerics::uses_lean_p(128), Schedule::kWgmma, false, /*vt_prepass=*/true,
       /*consumers=*/3, /*overlaps_prepass=*/true},
      {"fp8_wgmma_d192_vt", 192, 128, numerics::uses_lean_p(192), Schedule::kWgmma, false, /*vt_prepass=*/true,
       /*consumers=*/3},
  };
  return table;
}

void check_variant(const Variant &v) {
  const auto fail = [&](const char *why) { throw std::logic_error(v.name + ": " + why); };
  const bool wgmma = v.schedule == Schedule::kWgmma;
  if (v.d_v != kDv) fail("d_v must be 128");
  if (v.split_p && v.lean_p) fail("split P splits exact P: lean_p must be false");
  if (v.overlaps_prepass && !v.vt_prepass) fail("overlaps_prepass needs vt_prepass");
  if (!wgmma && (v.split_p || v.vt_prepass || v.consumers != 2))
    fail("split_p, vt_prepass and consumers are wgmma-only");
  if (!wgmma && v.d_qk % 32 != 0) fail("mma.sync stages whole 16-byte chunks, 256 threads at a time: d_qk % 32 == 0");
}

int query_tile_rows(const Variant &v) {
  return v.schedule == Schedule::kWgmma ? kRowsPerConsumer * v.consumers : numerics::kQueryTile;
}

bool reads_tile_shift(const Variant &v) { return v.shifts_tiles && fp8_tiles_may_shift(query_tile_rows(v)); }

const char *schedule_name(Schedule s) { return s == Schedule::kWgmma ? "wgmma" : "mma_sync"; }

const Variant *find_variant(const std::string &name) {
  for (const Variant &v : variants())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace zyfa::asmgen
