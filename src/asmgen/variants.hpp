// The table of FP8 kernels the emitter writes: one PTX file, one cubin and one entry per variant.
#ifndef ZYFA_ASMGEN_VARIANTS_HPP_
#define ZYFA_ASMGEN_VARIANTS_HPP_

#include <string>
#include <vector>

#include "asmgen/fp8_kernel_params.h"  // kRowsPerConsumer

namespace zyfa::asmgen {

// How a variant runs its key loop: kMmaSync, 8 warps on mma.sync with cp.async staging (any strides);
// kWgmma, a TMA producer warpgroup and two consumer warpgroups on wgmma (TMA-mappable tensors).
enum class Schedule { kMmaSync, kWgmma };

// The one d_v the emitter builds (check_variant holds every variant to it).
constexpr int kDv = 128;
const char *schedule_name(Schedule s);

struct Variant {
  std::string name;  // file stem and suffix of the entry name
  int d_qk = 128;
  int d_v = 128;
  bool lean_p = true;  // P codes from one FFMA (lean P) or exact exp2 + cvt (exact P)
  Schedule schedule = Schedule::kMmaSync;
  // Split P (exact P, lean_p false): the residual's e4m3 codes too, and a second P V chain into the same
  // accumulator (numerics.h). wgmma only.
  bool split_p = false;
  // wgmma only: the producer copies V^T that the call wrote into its workspace before the kernel
  // (src/kernels/fp8_vt_layout.h) by TMA, instead of transposing each V block.
  bool vt_prepass = false;
  // wgmma only: consumer warpgroups of 64 rows each, so a query tile of 64 * consumers rows. Three fit the
  // register file only serialized (S on the P V accumulator's registers, 160 each), so only where that schedule
  // leaves ptxas nothing to spill (fp8_wgmma_emitter.hpp).
  int consumers = 2;
  // vt_prepass only: the producer waits for the pre-pass's grid (griddepcontrol.wait) before each V^T copy,
  // so the host may launch the kernel to start while the pre-pass finishes (programmatic stream
  // serialization). A variant without it is launched after the pre-pass has completed.
  bool overlaps_prepass = false;
  // wgmma with tiles of 192 rows (three consumers): tile t starts tile_row_shift rows before t * 192
  // (fp8_query_tile_shift), so that tile 0, not the longest tile, overhangs the sequence. A variant without it
  // starts tile t at t * 192 and its last tile overhangs, which is as correct and only slower: the host passes
  // the shift either way.
  bool shifts_tiles = true;
};

// Whether the variant's kernel reads tile_row_shift: shifts_tiles, over tiles that may shift
// (fp8_tiles_may_shift: not whole key blocks).
bool reads_tile_shift(const Variant &v);

// Query rows per tile of the variant's job table: 64 per consumer warpgroup (wgmma), numerics::kQueryTile
// (mma.sync).
int query_tile_rows(const Variant &v);

// Throws std::logic_error naming the first flag combination the emitter does not build.
void check_variant(const Variant &v);

const std::vector<Variant> &variants();
// nullptr when there is no variant of that name.
const Variant *find_variant(const std::string &name);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_VARIANTS_HPP_
