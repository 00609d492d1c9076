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

// row0 (s32) = tile * tile_rows - fp8_query_tile_shift (the parameter block's tile_row_shift), the tile's first
// query row, negative in a tile 0 that overhangs the sequence: a shl where tile_rows is a power of two.
void emit_tile_row0(Builder &b, Reg row0, Reg tile, int tile_rows);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_FP8_JOB_LOOP_HPP_
