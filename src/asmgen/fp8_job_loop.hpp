// The persistent loop over the plan's job table that both FP8 schedules run, and the parameter-block loads
// and tile arithmetic around it.
#ifndef ZYFA_ASMGEN_FP8_JOB_LOOP_HPP_
#define ZYFA_ASMGEN_FP8_JOB_LOOP_HPP_

#include <cstddef>
#include <functional>

#include "asmgen/builder.hpp"

namespace zyfa::asmgen {

// A field of the kernel's parameter block (Fp8AttentionParams), loaded into a fresh register.
Reg load_param(Builder &b, Type type, size_t offset, const char *name);

// The registers of the persistent loop over the plan's job table: the job this CTA is on, the coordinates
// of the query tile in hand, and the job's second tile (kNoTile when none).
struct JobLoopRegs {
  Reg job_index;  // s32
  Reg batch, head, tile, tile_next, kv_head;  // s32; kv_head = head / group
};
// CTA x takes jobs x, x + grid, ...; `tile_body` runs for each of their one or two tiles.
void emit_job_loop(Builder &b, const JobLoopRegs &r, const std::function<void()> &tile_body);

// row0 (s32) = tile * tile_rows, the tile's first query row (a shl where tile_rows is a power of two), less the
// parameter block's tile_row_shift (fp8_query_tile_shift) where `shifted` (reads_tile_shift): then negative in
// a tile 0 that overhangs the sequence.
void emit_tile_row0(Builder &b, Reg row0, Reg tile, int tile_rows, bool shifted);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_FP8_JOB_LOOP_HPP_
