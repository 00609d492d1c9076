// The softmax recurrence of src/kernels/numerics.h for the thread's two rows, step by step in its order:
// diagonal mask, block max, lazy rescale (reference max rounded up to 1/8), per-block shift, P codes
// (lean: one FFMA + one FMNMX per score and a PRMT per pair; exact: FFMA, EX2 and F2FP), and the fold of
// the block's accumulator, O = O * alpha + 2^-shift acc.
#include <cmath>

#include "asmgen/fp8_attention_emitter.hpp"

namespace zyfa::asmgen::fp8 {
namespace {

// Row r of the thread owns accumulator elements 2r and 2r + 1 of every n8 tile.
constexpr int row_of(int element) { return element / 2; }
// prmt selector {a.byte0, b.byte0, a.byte0, a.byte0}: two codes side by side in the low half.
constexpr int kLowBytesOfTwo = 0x0040;
// e4m3 code of p = 2^x, x <= 0: 8 x + 56 rounded; kRoundMagic leaves rint in the low mantissa bits.
constexpr float kMagic = nx::kRoundMagic;

}  // namespace

void Emitter::init_row_state() {
  for (auto &o_tile : o)
    for (Reg r : o_tile) b.mov(r, f32(0.0f));
  for (int r = 0; r < 2; ++r) {
    b.mov(m[size_t(r)], f32(-INFINITY));
    b.mov(l[size_t(r)], f32(0.0f));
  }
}

void Emitter::mask_diagonal() {
  // Key 8 j + 2 quad_col + (e % 2) of row (e / 2) survives iff 8 j + e % 2 <= diag_limit[e / 2].
  for (int j = 0; j < kScoreTiles; ++j)
    for (int e = 0; e < 4; ++e) {
      const Reg masked = b.temp(Type::kPred, "masked");
      b.setp(masked, Cmp::kLt, Type::kS32, diag_limit[size_t(row_of(e))], imm(kMmaN * j + e % 2));
      auto g = b.when(masked);
      b.mov(s[size_t(j)][size_t(e)], f32(-INFINITY));
    }
}

void Emitter::block_max_and_rescale() {
  const float tau = nx::lazy_rescale_threshold(/*fp8=*/true, variant.d_qk);
  std::array<Reg, 2> need, alpha;
  for (int r = 0; r < 2; ++r) {
    // Max over the thread's 32 scores of the row (a tree, for independent FMNMX), then over the quad.
    std::vector<Reg> level;
    for (int j = 0; j < kScoreTiles; ++j) {
      const Reg x = b.temp(Type::kF32, "rmax");
      b.max(x, s[size_t(j)][size_t(2 * r)], s[size_t(j)][size_t(2 * r + 1)]);
      level.push_back(x);
    }
    while (level.size() > 1) {
      std::vector<Reg> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2) {
        const Reg x = b.temp(Type::kF32, "rmax");
        b.max(x, level[i], level[i + 1]);
        next.push_back(x);
      }
      level = next;
    }
    const Reg mx = level[0];
    for (int lane_mask : {1, 2}) {
      const Reg other = b.temp(Type::kF32, "rmax_other");
      b.shfl_bfly(other, mx, lane_mask);
      b.max(mx, mx, other);
    }
    b.mul(bmax[size_t(r)], c, mx);

    // Lazy rescale: only when bmax passes m + tau; the new reference max is bmax rounded up to 1/8, so that
    // 8 m stays an integer code offset.
    need[size_t(r)] = b.temp(Type::kPred, "need_rescale");
    const Reg threshold = b.temp(Type::kF32, "rescale_threshold");
    b.add(threshold, m[size_t(r)], f32(tau));
    b.setp(need[size_t(r)], Cmp::kGt, Type::kF32, bmax[size_t(r)], threshold);
    const Reg m_new = b.temp(Type::kF32, "m_new");
    b.mul(m_new, bmax[size_t(r)], f32(float(nx::kE4m3CodesPerBinade)));
    b.cvt(m_new, m_new, Type::kF32, Round::kRpi);
    b.mul(m_new, m_new, f32(1.0f / float(nx::kE4m3CodesPerBinade)));
    const Reg diff = b.temp(Type::kF32, "m_diff");
    b.sub(diff, m[size_t(r)], m_new);
    const Reg a = b.temp(Type::kF32, "alpha_exp");
    b.ex2(a, diff);
    alpha[size_t(r)] = b.temp(Type::kF32, "alpha");
    b.selp(alpha[size_t(r)], a, f32(1.0f), need[size_t(r)]);
    b.selp(m[size_t(r)], m_new, m[size_t(r)], need[size_t(r)]);
  }
  // O and l scale only in warps where some row moved (alpha = 1 elsewhere is exact): a warp-uniform branch.
  const Reg either = b.temp(Type::kPred, "need_either");
  b.or_(either, need[0], need[1]);
  const Reg any = b.temp(Type::kPred, "need_any");
  b.vote_any(any, either);
  const int skip = b.new_label("SKIP_RESCALE");
  {
    auto g = b.unless(any);
    b.bra(skip);
  }
  for (auto &o_tile : o)
    for (int e = 0; e < 4; ++e) b.mul(o_tile[size_t(e)], o_tile[size_t(e)], alpha[size_t(row_of(e))]);
  for (int r = 0; r < 2; ++r) b.mul(l[size_t(r)], l[size_t(r)], alpha[size_t(r)]);
  b.place(skip);

  // Per-block scaling (numerics.h). Lean P: an integer shift (numerics::fp8_block_shift) puts the block's
  // largest code in (112, 120] and 2^-shift folds it back exactly. Exact P: the block max becomes exactly
  // 2^H and ex2 of numerics::fp8_exact_p_unscale_log2 folds it back.
  for (int r = 0; r < 2; ++r) {
    if (!variant.lean_p) {
      const Reg x = b.temp(Type::kF32, "unscale_log2");
      b.sub(x, bmax[size_t(r)], m[size_t(r)]);
      b.sub(x, x, f32(float(nx::kFp8HeadroomBinades)));
      b.max(x, x, f32(-float(nx::kMaxBlockShift + nx::kFp8HeadroomBinades)));
      b.ex2(unscale[size_t(r)], x);
      continue;
    }
    const Reg f = b.temp(Type::kF32, "shift_f");
    b.sub(f, m[size_t(r)], bmax[size_t(r)]);
    b.cvt(f, f, Type::kF32, Round::kRmi);
    b.min(f, f, f32(float(nx::kMaxBlockShift)));
    b.add(f, f, f32(float(nx::kFp8HeadroomBinades)));
    b.cvt(shift[size_t(r)], f, Type::kF32, Round::kRzi);
    const Reg bits = b.temp(Type::kS32, "unscale_bits");
    b.sub(bits, imm(127), shift[size_t(r)]);
    b.shl(bits, bits, imm(23));
    const Reg raw = b.temp(Type::kB32, "unscale_raw");
    b.mov(raw, bits);
    b.mov(unscale[size_t(r)], raw);  // 2^-shift: a normal float, since shift <= kMaxBlockShift + headroom
  }
}

void Emitter::p_codes() {
  std::array<Reg, 2> code_offset, exp_bias;
  for (int r = 0; r < 2; ++r) {
    if (variant.lean_p) {
      // code = max(rint(s * 8c + (56 + 8 shift - 8 m)), 0): the offset is an integer since m is a
      // multiple of 1/8, so one FFMA with the magic constant rounds exactly like lean_p_code_host.
      const Reg base = b.temp(Type::kS32, "code_base");
      b.mad_lo(base, shift[size_t(r)], imm(nx::kE4m3CodesPerBinade), imm(nx::kE4m3CodeOfOne));
      const Reg base_f = b.temp(Type::kF32, "code_base_f");
      b.cvt(base_f, base, Type::kS32, Round::kRn);
      code_offset[size_t(r)] = b.temp(Type::kF32, "code_offset");
      b.fma(code_offset[size_t(r)], m[size_t(r)], f32(-float(nx::kE4m3CodesPerBinade)), base_f);
      b.add(code_offset[size_t(r)], code_offset[size_t(r)], f32(kMagic));
    } else {
      // p = exp2(fma(s, c, H - bmax)) (numerics::fp8_exact_p_bias), rounded to e4m3 by the conversion.
      exp_bias[size_t(r)] = b.temp(Type::kF32, "exp_bias");
      b.sub(exp_bias[size_t(r)], f32(float(nx::kFp8HeadroomBinades)), bmax[size_t(r)]);
    }
  }
  auto lean_code = [&](int j, int e) {
    const Reg x = b.temp(Type::kF32, "code");
    b.fma(x, s[size_t(j)][size_t(e)], c8, code_offset[size_t(row_of(e))]);
    b.max(x, x, f32(kMagic));  // negative codes (and masked -inf scores) become code 0
    return x;
  };
  // The e4m3 codes of elements 2r (low byte) and 2r + 1 of score tile j, as a b16.
  auto code_pair = [&](int j, int r) {
    const Reg pair = b.temp(Type::kB16, "code_pair");
    if (variant.lean_p) {
      const Reg both = b.temp(Type::kB32, "codes");
      b.prmt(both, lean_code(j, 2 * r), lean_code(j, 2 * r + 1), imm(kLowBytesOfTwo));
      const Reg unused = b.temp(Type::kB16, "codes_high");
      b.unpack16x2(pair, unused, both);
    } else {
      std::array<Reg, 2> pe;
      for (int h = 0; h < 2; ++h) {
        pe[size_t(h)] = b.temp(Type::kF32, "p_exact");
        b.fma(pe[size_t(h)], s[size_t(j)][size_t(2 * r + h)], c, exp_bias[size_t(r)]);
        b.ex2(pe[size_t(h)], pe[size_t(h)]);
      }
      b.cvt_e4m3x2(pair, pe[1], pe[0]);
    }
    return pair;
  };
  // A fragment of P V step kk (keys 16 kk ..): registers (row g, row g+8) x (keys +0..7, +8..15), which are
  // the accumulator elements (0,1), (2,3) of score tiles 2 kk and 2 kk + 1; widened to f16 exactly.
  for (int kk = 0; kk < kPvSteps; ++kk)
    for (int half = 0; half < 2; ++half)
      for (int r = 0; r < 2; ++r)
        b.cvt_f16x2_e4m3x2(p[size_t(kk)][size_t(2 * half + r)], code_pair(2 * kk + half, r));
}

void Emitter::fold(int half) {
  for (int j = 0; j < kAccTiles; ++j)
    for (int e = 0; e < 4; ++e) {
      const Reg out = o[size_t(half * kAccTiles + j)][size_t(e)];
      b.fma(out, acc[size_t(j)][size_t(e)], unscale[size_t(row_of(e))], out);
    }
  if (half == 0)
    for (int r = 0; r < 2; ++r) b.fma(l[size_t(r)], rowsum[size_t(2 * r)], unscale[size_t(r)], l[size_t(r)]);
}

}  // namespace zyfa::asmgen::fp8
