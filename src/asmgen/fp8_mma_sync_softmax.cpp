// The softmax recurrence of src/kernels/numerics.h for the thread's two rows, step by step in its order:
// diagonal mask, block max, lazy rescale (reference max rounded up to 1/8), per-block scale, P codes
// (lean: one FFMA per score, then per pair a PRMT, a max.s16x2 and a PRMT; exact: FFMA, EX2 and F2FP), and the
// fold of the block's accumulator, O = O * alpha + unscale acc.
#include <cmath>

#include "asmgen/fp8_mma_sync_emitter.hpp"
#include "asmgen/fp8_recurrence.hpp"

namespace zyfa::asmgen::fp8ms {
namespace {

// Row r of the thread owns accumulator elements 2r and 2r + 1 of every n8 tile.
constexpr size_t element_of(int row, int col) { return size_t(2 * row + col); }

}  // namespace

void MmaSyncEmitter::init_row_state() {
  for (auto &o_tile : o)
    for (Reg r : o_tile) b.mov(r, f32(0.0f));
  for (int r = 0; r < 2; ++r) {
    b.mov(m[size_t(r)], f32(-INFINITY));
    b.mov(l[size_t(r)], f32(0.0f));
  }
}

void MmaSyncEmitter::mask_diagonal() {
  emit_causal_mask(b, diag_limit, kScoreTiles, [&](int j, int h, int e) { return s[size_t(j)][size_t(2 * h + e)]; });
}

void MmaSyncEmitter::block_max_and_rescale() {
  std::array<Reg, 2> need, alpha, bmax;
  for (int r = 0; r < 2; ++r) {
    std::vector<Reg> row;
    for (int j = 0; j < kScoreTiles; ++j)
      for (int e = 0; e < 2; ++e) row.push_back(s[size_t(j)][size_t(2 * r + e)]);
    bmax[size_t(r)] = emit_block_max(b, row, c);
    need[size_t(r)] = emit_lazy_rescale(b, m[size_t(r)], bmax[size_t(r)], &alpha[size_t(r)]);
  }
  emit_rescale_o(b, need, alpha, kOutTiles, o_element(), l, "SKIP_RESCALE");

  // Per-block scaling (numerics.h): the lean code offset (the block max becomes code 118) or the exact
  // exponent bias (the block max becomes exactly 2^H), and the unscale that folds the block back.
  for (int r = 0; r < 2; ++r) {
    emit_unscale(b, m[size_t(r)], bmax[size_t(r)], unscale[size_t(r)], variant.lean_p);
    (variant.lean_p ? code_offset : exp_bias)[size_t(r)] = emit_code_offset(b, bmax[size_t(r)], variant.lean_p);
  }
}

void MmaSyncEmitter::p_codes() {
  const Reg code_zero = variant.lean_p ? emit_lean_code_zero(b) : Reg{};
  // The e4m3 codes of elements 2r (low byte) and 2r + 1 of score tile j, as a b16.
  auto code_pair = [&](int j, int r) {
    const Reg pair = b.temp(Type::kB16, "code_pair");
    std::array<Reg, 2> x;
    for (int h = 0; h < 2; ++h) {
      x[size_t(h)] = b.temp(Type::kF32, variant.lean_p ? "code" : "p_exact");
      const Reg score = s[size_t(j)][size_t(2 * r + h)];
      if (variant.lean_p)
        emit_lean_code(b, x[size_t(h)], score, lean_scale, code_offset[size_t(r)]);
      else
        emit_exact_p(b, x[size_t(h)], score, c, exp_bias[size_t(r)]);
    }
    if (variant.lean_p) {
      const Reg halves = b.temp(Type::kB32, "codes_in_halves");
      emit_lean_code_pairs(b, halves, x[0], x[1], code_zero);
      const Reg both = b.temp(Type::kB32, "codes");
      // The two lean codes of emit_lean_code_pairs (the low byte of each half) side by side in the low half.
      b.prmt(both, halves, halves, imm(prmt_selector(0, 2, 0, 0)));
      const Reg unused = b.temp(Type::kB16, "codes_high");
      b.unpack16x2(pair, unused, both);
    } else {
      b.cvt_e4m3x2(pair, x[1], x[0]);
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

// O's tiles of this half of the columns; the row sums of P come with the first half's P V.
void MmaSyncEmitter::fold(int half) {
  const int first_tile = half * kAccTiles;
  const auto acc_element = [&](int j, int row, int col) { return acc[size_t(j - first_tile)][element_of(row, col)]; };
  const auto rowsum_of = [&](int row) { return rowsum[size_t(2 * row)]; };
  emit_fold(b, unscale, first_tile, kAccTiles, o_element(), acc_element, l,
            half == 0 ? std::function<Reg(int)>(rowsum_of) : std::function<Reg(int)>());
}

std::function<Reg(int, int, int)> MmaSyncEmitter::o_element() {
  return [this](int j, int row, int col) { return o[size_t(j)][element_of(row, col)]; };
}

}  // namespace zyfa::asmgen::fp8ms
