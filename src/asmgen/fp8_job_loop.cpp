// The persistent job loop of both FP8 schedules, with the parameter-block loads and tile arithmetic around it.
#include "asmgen/fp8_job_loop.hpp"

#include "asmgen/fp8_kernel_params.h"
#include "kernels/job.h"

namespace zyfa::asmgen {

Reg load_param(Builder &b, Type type, size_t offset, const char *name) {
  const Reg r = b.temp(type, name);
  b.ld_param(r, int(offset));
  return r;
}

namespace {

constexpr bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }
constexpr int log2_of_power_of_two(int n) { return n == 1 ? 0 : 1 + log2_of_power_of_two(n / 2); }

}  // namespace

void emit_tile_row0(Builder &b, Reg row0, Reg tile, int tile_rows, bool shifted) {
  if (is_power_of_two(tile_rows)) b.shl(row0, tile, imm(log2_of_power_of_two(tile_rows)));
  else b.mul_lo(row0, tile, imm(tile_rows));
  if (shifted)
    b.sub(row0, row0, load_param(b, Type::kS32, offsetof(Fp8AttentionParams, tile_row_shift), "tile_row_shift"));
}

void emit_job_loop(Builder &b, const JobLoopRegs &r, const std::function<void()> &tile_body) {
  using P = Fp8AttentionParams;
  const Reg ctaid = b.temp(Type::kU32, "ctaid");
  b.read_special(ctaid, Special::kCtaidX);
  b.mov(r.job_index, ctaid);
  const int job_loop = b.new_label("JOB_LOOP");
  const int tile_start = b.new_label("TILE");
  const int next_job = b.new_label("NEXT_JOB");
  const int done = b.new_label("JOBS_DONE");
  b.place(job_loop);
  b.bra_if(Cmp::kGe, Type::kS32, r.job_index, load_param(b, Type::kS32, offsetof(P, n_jobs), "n_jobs"), done,
           "no_more_jobs");
  const Reg job_addr = b.temp(Type::kU64, "job_addr");
  const Reg job_index64 = b.temp(Type::kS64, "job_index64");
  b.cvt(job_index64, r.job_index, Type::kS32, Round::kNone);
  b.mad_lo(job_addr, job_index64, imm(int64_t(sizeof(Job))), load_param(b, Type::kU64, offsetof(P, jobs), "jobs"));
  static_assert(offsetof(Job, batch) == 0 && offsetof(Job, head) == 4 && offsetof(Job, tile_first) == 8 &&
                    offsetof(Job, tile_second) == 12,
                "one v4 load reads a Job");
  b.ld_global({r.batch, r.head, r.tile, r.tile_next}, job_addr, 0, /*non_coherent=*/true);

  b.place(tile_start);
  b.div(r.kv_head, r.head, load_param(b, Type::kS32, offsetof(P, group), "group"));
  tile_body();
  b.bra_if(Cmp::kEq, Type::kS32, r.tile_next, imm(kNoTile), next_job, "no_second_tile");
  b.mov(r.tile, r.tile_next);
  b.mov(r.tile_next, imm(kNoTile));
  b.bra(tile_start);
  b.place(next_job);
  const Reg nctaid = b.temp(Type::kU32, "nctaid");
  b.read_special(nctaid, Special::kNctaidX);
  b.add(r.job_index, r.job_index, nctaid);
  b.bra(job_loop);
  b.place(done);
}

}  // namespace zyfa::asmgen
