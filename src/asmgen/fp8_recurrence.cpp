#include "asmgen/fp8_recurrence.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "asmgen/fp8_kernel_params.h"
#include "kernels/job.h"
#include "kernels/numerics.h"
#include "kernels/out_chunk.h"

namespace zyfa::asmgen {

namespace nx = zyfa::numerics;

Reg load_param(Builder &b, Type type, size_t offset, const char *name) {
  const Reg r = b.temp(type, name);
  b.ld_param(r, int(offset));
  return r;
}

namespace {

constexpr bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }
constexpr int log2_of_power_of_two(int n) { return n == 1 ? 0 : 1 + log2_of_power_of_two(n / 2); }

}  // namespace

void emit_tile_row0(Builder &b, Reg row0, Reg tile, int tile_rows) {
  if (is_power_of_two(tile_rows)) b.shl(row0, tile, imm(log2_of_power_of_two(tile_rows)));
  else b.mul_lo(row0, tile, imm(tile_rows));
}

void emit_block_key0(Builder &b, Reg key0, Reg block) { b.shl(key0, block, imm(kKeyBlockLog2)); }

void emit_key_block(Builder &b, Reg block, Reg key) { b.shr(block, key, imm(kKeyBlockLog2)); }

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
  b.bra_if(Cmp::kGe, Type::kS32, r.job_index, load_param(b, Type::kS32, offsetof(P, n_jobs), "n_jobs"), done, "no_more_jobs");
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

std::vector<Reg> emit_block_maxes(Builder &b, const std::vector<std::vector<Reg>> &rows, Reg c) {
  // Level by level over all rows, and each shuffle round for all rows before the next: the rows' chains are
  // independent, and emitted one row after the other ptxas kept them apart, so that a thread's second row
  // started its two shuffle round trips only after the first row's had returned. Measured (session 14, fp8-maxpair):
  // +0.4-0.6% at d = 128, neutral at d_qk = 192.
  std::vector<std::vector<Reg>> levels = rows;
  for (bool more = true; more;) {
    more = false;
    for (auto &level : levels) {
      if (level.size() <= 1) continue;
      std::vector<Reg> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2) {
        const Reg x = b.temp(Type::kF32, "rmax");
        b.max(x, level[i], level[i + 1]);
        next.push_back(x);
      }
      if (level.size() % 2 != 0) next.push_back(level.back());
      level = next;
      more = more || level.size() > 1;
    }
  }
  std::vector<Reg> mx;
  for (const auto &level : levels) mx.push_back(level[0]);
  for (int lane_mask : {1, 2}) {
    std::vector<Reg> other;
    for (const Reg x : mx) {
      other.push_back(b.temp(Type::kF32, "rmax_other"));
      b.shfl_bfly(other.back(), x, lane_mask);
    }
    for (size_t r = 0; r < mx.size(); ++r) {
      const Reg joined = b.temp(Type::kF32, "rmax");  // a new register: a one-score row's is the caller's score
      b.max(joined, mx[r], other[r]);
      mx[r] = joined;
    }
  }
  std::vector<Reg> bmax;
  for (const Reg x : mx) {
    bmax.push_back(b.temp(Type::kF32, "bmax"));
    b.mul(bmax.back(), c, x);
  }
  return bmax;
}

Reg emit_block_max(Builder &b, const std::vector<Reg> &scores, Reg c) { return emit_block_maxes(b, {scores}, c)[0]; }

Reg emit_lazy_rescale(Builder &b, Reg m, Reg bmax, Reg *alpha) {
  const Reg need = b.temp(Type::kPred, "need_rescale");
  const Reg threshold = b.temp(Type::kF32, "rescale_threshold");
  b.add(threshold, m, f32(nx::kFp8LazyRescaleThreshold));
  b.setp(need, Cmp::kGt, Type::kF32, bmax, threshold);
  const Reg m_new = b.temp(Type::kF32, "m_new");
  b.mul(m_new, bmax, f32(float(nx::kE4m3CodesPerBinade)));
  b.cvt(m_new, m_new, Type::kF32, Round::kRpi);
  b.mul(m_new, m_new, f32(1.0f / float(nx::kE4m3CodesPerBinade)));
  if (alpha != nullptr) {
    const Reg diff = b.temp(Type::kF32, "m_diff");
    b.sub(diff, m, m_new);
    const Reg a = b.temp(Type::kF32, "alpha_exp");
    b.ex2(a, diff);
    *alpha = b.temp(Type::kF32, "alpha");
    b.selp(*alpha, a, f32(1.0f), need);
  }
  b.selp(m, m_new, m, need);
  return need;
}

void emit_causal_mask(Builder &b, const std::array<Reg, 2> &diag_limit, int chunks,
                      const std::function<Reg(int, int, int)> &score) {
  for (int i = 0; i < chunks; ++i)
    for (int h = 0; h < 2; ++h)
      for (int e = 0; e < 2; ++e) {
        const Reg masked = b.temp(Type::kPred, "masked");
        b.setp(masked, Cmp::kLt, Type::kS32, diag_limit[size_t(h)], imm(8 * i + e));
        auto g = b.when(masked);
        b.mov(score(i, h, e), f32(-INFINITY));
      }
}

void emit_rescale_o(Builder &b, const std::array<Reg, 2> &need, const std::array<Reg, 2> &alpha, int chunks,
                    const std::function<Reg(int, int, int)> &o, const std::array<Reg, 2> &l,
                    const char *skip_label) {
  const Reg either = b.temp(Type::kPred, "need_either");
  b.or_(either, need[0], need[1]);
  const Reg any = b.temp(Type::kPred, "need_any");
  b.vote_any(any, either);
  const int skip = b.new_label(skip_label);
  {
    auto g = b.unless(any);
    b.bra(skip);
  }
  for (int i = 0; i < chunks; ++i)
    for (int h = 0; h < 2; ++h)
      for (int e = 0; e < 2; ++e) {
        const Reg r = o(i, h, e);
        b.mul(r, r, alpha[size_t(h)]);
      }
  for (int h = 0; h < 2; ++h) b.mul(l[size_t(h)], l[size_t(h)], alpha[size_t(h)]);
  b.place(skip);
}

void emit_fold(Builder &b, const std::array<Reg, 2> &unscale, int first_chunk, int chunks,
               const std::function<Reg(int, int, int)> &o, const std::function<Reg(int, int, int)> &acc,
               const std::array<Reg, 2> &l, const std::function<Reg(int)> &rowsum) {
  for (int i = first_chunk; i < first_chunk + chunks; ++i)
    for (int h = 0; h < 2; ++h)
      for (int e = 0; e < 2; ++e) {
        const Reg r = o(i, h, e);
        b.fma(r, acc(i, h, e), unscale[size_t(h)], r);
      }
  if (!rowsum) return;
  for (int h = 0; h < 2; ++h) b.fma(l[size_t(h)], rowsum(h), unscale[size_t(h)], l[size_t(h)]);
}

namespace {

// prmt selector {y0.bytes 2-3, y1.bytes 2-3}: the two codes' 16-bit fields (numerics.h) side by side.
constexpr int kLeanFieldsOfTwo = prmt_selector(2, 3, 6, 7);

}  // namespace

void emit_unscale(Builder &b, Reg m, Reg bmax, Reg unscale, bool lean_p) {
  const Reg x = b.temp(Type::kF32, "unscale_log2");
  b.sub(x, bmax, m);
  b.sub(x, x, f32(nx::fp8_top_binade(lean_p)));
  b.max(x, x, f32(-float(nx::kMaxBlockShift + nx::kFp8HeadroomBinades)));
  b.ex2(unscale, x);
}

Reg emit_code_offset(Builder &b, Reg bmax, bool lean_p) {
  if (!lean_p) {
    const Reg bias = b.temp(Type::kF32, "exp_bias");
    b.sub(bias, f32(float(nx::kFp8HeadroomBinades)), bmax);
    return bias;
  }
  const Reg offset = b.temp(Type::kF32, "code_offset");
  b.fma(offset, bmax, f32(nx::kLeanOffsetPerBmax), f32(nx::kLeanOffsetAtZero));  // numerics::fp8_lean_p_offset
  return offset;
}

void emit_lean_code(Builder &b, Reg dst, Reg s, Reg lean_scale, Reg offset) { b.fma(dst, s, lean_scale, offset); }

void emit_lean_code_pairs(Builder &b, Reg dst, Reg y0, Reg y1, Reg code_zero) {
  b.prmt(dst, y0, y1, imm(kLeanFieldsOfTwo));
  b.max_s16x2(dst, dst, code_zero);
}

void emit_exact_exponent(Builder &b, Reg dst, Reg s, Reg c, Reg bias) { b.fma(dst, s, c, bias); }

Reg emit_lean_code_zero(Builder &b) {
  const Reg code_zero = b.temp(Type::kB32, "code_zero");  // ptxas folds it into VIMNMX's immediate
  b.mov(code_zero, imm(int64_t(nx::kLeanFieldOfCodeZero) * 0x10001));
  return code_zero;
}

void emit_exact_p(Builder &b, Reg dst, Reg s, Reg c, Reg bias) {
  emit_exact_exponent(b, dst, s, c, bias);
  b.ex2(dst, dst);
}

namespace {

constexpr int kQuad = 4;  // the lanes that hold one accumulator row

// The quad transpose's exchange rounds, in order: the lane distance of each.
constexpr std::array<int, 2> kQuadTransposeDistances = {2, 1};
// Per round, whether the lane is the upper half of its exchange pair.
using QuadTransposeMasks = std::array<Reg, kQuadTransposeDistances.size()>;

// Whether the lane's quad_col has bit `k`: the upper half of its exchange pairs at lane distance k.
Reg quad_half(Builder &b, Reg quad_col, int k) {
  const Reg bit = b.temp(Type::kS32, "quad_bit");
  b.and_(bit, quad_col, imm(k));
  const Reg upper = b.temp(Type::kPred, "quad_upper");
  b.setp(upper, Cmp::kNe, Type::kS32, bit, imm(0));
  return upper;
}

// emit_quad_transpose's masks, round by round: made once per tile, for every row's transpose.
QuadTransposeMasks quad_transpose_masks(Builder &b, Reg quad_col) {
  QuadTransposeMasks upper;
  for (size_t round = 0; round < kQuadTransposeDistances.size(); ++round)
    upper[round] = quad_half(b, quad_col, kQuadTransposeDistances[round]);
  return upper;
}

// A row's output as words of two bf16, transposed across the quad in groups of four: before, lane q holds
// word q of chunks j .. j + 3 (words[j + c] = chunk j + c); after, words[j + c] holds word c of chunk j + q,
// so each lane writes whole 16-byte chunks. Two exchange rounds (kQuadTransposeDistances; `upper` from
// quad_transpose_masks), each one SHFL and three SELPs per pair. The whole warp must take part.
void emit_quad_transpose(Builder &b, std::vector<Reg> &words, const QuadTransposeMasks &upper) {
  if (words.size() % kQuad != 0) throw std::logic_error("emit_quad_transpose: words come in groups of 4");
  for (size_t round = 0; round < kQuadTransposeDistances.size(); ++round) {
    const int k = kQuadTransposeDistances[round];
    const Reg up = upper[round];
    for (size_t j = 0; j < words.size(); j += kQuad)
      for (int c = 0; c < kQuad; ++c) {
        if (c & k) continue;
        Reg &lo = words[j + size_t(c)];
        Reg &hi = words[j + size_t(c | k)];
        // The upper lane sends its lo and takes the partner's hi into lo; the lower sends hi, takes lo into hi.
        const Reg send = b.temp(Type::kB32, "xpose_send");
        b.selp(send, lo, hi, up);
        const Reg got = b.temp(Type::kB32, "xpose_got");
        b.shfl_bfly(got, send, k);
        const Reg new_lo = b.temp(Type::kB32, "xpose_lo");
        b.selp(new_lo, got, lo, up);
        const Reg new_hi = b.temp(Type::kB32, "xpose_hi");
        b.selp(new_hi, hi, got, up);
        lo = new_lo;
        hi = new_hi;
      }
  }
}

}  // namespace

void emit_store_tile(Builder &b, const TileRows &t) {
  using P = Fp8AttentionParams;
  const Reg seqlen = load_param(b, Type::kS32, offsetof(P, seqlen), "seqlen");
  const Reg out = load_param(b, Type::kU64, offsetof(P, out), "out");
  const Reg lse = load_param(b, Type::kU64, offsetof(P, lse), "lse");
  const Reg b64 = b.temp(Type::kS64, "batch64");
  const Reg h64 = b.temp(Type::kS64, "head64");
  b.cvt(b64, t.batch, Type::kS32, Round::kNone);
  b.cvt(h64, t.head, Type::kS32, Round::kNone);
  // Element offset of (batch, row 0, head) in out, and of (batch, head, row 0) in lse.
  const Reg out_head = b.temp(Type::kS64, "out_head");
  b.mul_lo(out_head, b64, load_param(b, Type::kS64, offsetof(P, out_batch_stride), "out_batch_stride"));
  b.mad_lo(out_head, h64, load_param(b, Type::kS64, offsetof(P, out_head_stride), "out_head_stride"), out_head);
  const Reg nheads64 = b.temp(Type::kS64, "nheads64");
  b.cvt(nheads64, load_param(b, Type::kS32, offsetof(P, nheads), "nheads"), Type::kS32, Round::kNone);
  const Reg seqlen64 = b.temp(Type::kS64, "seqlen64");
  b.cvt(seqlen64, seqlen, Type::kS32, Round::kNone);
  const Reg lse_head = b.temp(Type::kS64, "lse_head");
  b.mad_lo(lse_head, b64, nheads64, h64);
  b.mul_lo(lse_head, lse_head, seqlen64);
  // After the quad transpose, lane q writes chunks q, q + 4, ... of its row: 16 bytes at 16 q + 64 j.
  const Reg chunk_bytes = b.temp(Type::kS64, "out_chunk_bytes");
  b.cvt(chunk_bytes, t.quad_col, Type::kS32, Round::kNone);
  b.shl(chunk_bytes, chunk_bytes, imm(4));
  const QuadTransposeMasks upper = quad_transpose_masks(b, t.quad_col);
  // lse from the first thread of the quad (all four hold the row's m and l).
  const Reg has_lse = b.temp(Type::kPred, "has_lse");
  b.setp(has_lse, Cmp::kNe, Type::kU64, lse, imm(0));
  const Reg first_of_quad = b.temp(Type::kPred, "first_of_quad");
  b.setp(first_of_quad, Cmp::kEq, Type::kS32, t.quad_col, imm(0));
  b.and_(has_lse, has_lse, first_of_quad);
  const Reg row0 = b.temp(Type::kS32, "row0");
  emit_tile_row0(b, row0, t.tile, t.tile_rows);

  for (int h = 0; h < 2; ++h) {
    const Reg lh = t.l[size_t(h)];
    const Reg row = b.temp(Type::kS32, "out_row");
    b.add(row, t.tile_row[size_t(h)], row0);
    const Reg outside = b.temp(Type::kPred, "row_outside");
    b.setp(outside, Cmp::kGe, Type::kS32, row, seqlen);
    const Reg row64 = b.temp(Type::kS64, "out_row64");
    b.cvt(row64, row, Type::kS32, Round::kNone);
    const Reg elem = b.temp(Type::kS64, "out_elem");
    b.mad_lo(elem, row64, load_param(b, Type::kS64, offsetof(P, out_seq_stride), "out_seq_stride"), out_head);
    const Reg addr = b.temp(Type::kU64, "out_addr");
    b.mad_lo(addr, elem, imm(2), out);
    b.add(addr, addr, chunk_bytes);
    const Reg scale = b.temp(Type::kF32, "out_scale");  // numerics::output_scale: (1 / l) * v_descale
    b.div(scale, f32(1.0f), lh);
    b.mul(scale, scale, t.v_descale);
    std::vector<Reg> words(size_t(t.chunks));  // word i: columns 8 i + 2 quad_col, + 1
    for (int i = 0; i < t.chunks; ++i) {
      std::array<Reg, 2> y;
      for (int e = 0; e < 2; ++e) {
        y[size_t(e)] = b.temp(Type::kF32, "y");
        b.mul(y[size_t(e)], t.o(i, h, e), scale);
      }
      words[size_t(i)] = b.temp(Type::kB32, "out_bf16x2");
      b.cvt_bf16x2(words[size_t(i)], y[1], y[0]);
    }
    // Rows outside seqlen take part in the shuffles and only skip their stores.
    emit_quad_transpose(b, words, upper);
    for (int j = 0; j < t.chunks; j += kQuad) {
      auto g = b.unless(outside);
      b.st_global(Type::kB32, addr, int64_t(kOutChunkBytes) * j,
                  {words[size_t(j)], words[size_t(j) + 1], words[size_t(j) + 2], words[size_t(j) + 3]});
    }
    const Reg lse_val = b.temp(Type::kF32, "lse_value");
    b.lg2(lse_val, lh);
    b.add(lse_val, t.m[size_t(h)], lse_val);
    b.mul(lse_val, lse_val, f32(nx::kLn2));
    const Reg lse_elem = b.temp(Type::kS64, "lse_elem");
    b.add(lse_elem, lse_head, row64);
    const Reg lse_addr = b.temp(Type::kU64, "lse_addr");
    b.mad_lo(lse_addr, lse_elem, imm(int64_t(sizeof(float))), lse);
    const Reg store_lse = b.temp(Type::kPred, "store_lse");
    b.setp(store_lse, Cmp::kLt, Type::kS32, row, seqlen);
    b.and_(store_lse, store_lse, has_lse);
    auto g = b.when(store_lse);
    b.st_global(Type::kF32, lse_addr, 0, {lse_val});
  }
}

}  // namespace zyfa::asmgen
