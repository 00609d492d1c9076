#include "asmgen/fp8_vt_transpose.hpp"

namespace zyfa::asmgen::fp8w {
namespace {

// PRMT selectors over (a = keys +0..7 block, b = keys +8..15 block): even and odd dimension of the pair.
constexpr int kEvenDims = prmt_selector(0, 2, 4, 6);
constexpr int kOddDims = prmt_selector(1, 3, 5, 7);
constexpr int kKeysPerWarp = numerics::kKeyBlock / kVtWarps;  // 32: two groups of 16
constexpr int kKeyGroupBytes = 16 * kVtRowBytes;                 // 16 keys of V
constexpr int kPairRows = 32;                                    // V^T rows one stmatrix.x4 covers
static_assert(kPairRows % kVtSwizzleRows == 0, "the column pair's row offset must not change the swizzle");

}  // namespace

VtTransposeLanes emit_vt_transpose_setup(Builder &b, Reg lane, Reg warp) {
  VtTransposeLanes out;
  // ldmatrix.x4: lane l gives row l % 8 of matrix l / 8; matrices (keys +0..7, +8..15) x (16 dims, next 16).
  const Reg r8 = b.temp(Type::kU32, "lane_mod8");
  b.and_(r8, lane, imm(7));
  const Reg key = b.temp(Type::kU32, "ld_key");  // key within the block: 32 warp + 8 ((lane / 8) % 2) + lane % 8
  b.shr(key, lane, imm(3));
  b.and_(key, key, imm(1));
  b.shl(key, key, imm(3));
  b.add(key, key, r8);
  b.mad_lo(key, warp, imm(kKeysPerWarp), key);
  const Reg hi = b.temp(Type::kU32, "ld_chunk_hi");  // lane / 16: the second 16 dimensions
  b.shr(hi, lane, imm(4));
  for (int cp = 0; cp < kVtColumnPairs; ++cp) {
    out.load[size_t(cp)] = b.reg(Type::kU32, indexed("vt_load_offset", cp));
    const Reg chunk = b.temp(Type::kU32, "ld_chunk");  // 16-byte chunk (2 cp + hi), swizzled by key % 8
    b.add(chunk, hi, imm(2 * cp));
    b.xor_(chunk, chunk, r8);
    b.shl(chunk, chunk, imm(4));
    b.mad_lo(out.load[size_t(cp)], key, imm(kVtRowBytes), chunk);
  }

  // stmatrix.x4: lane l gives row r = l % 8 of matrix m = l / 8, m = (half, parity) = (m / 2, m % 2): V^T row
  // 16 half + 2 r + (parity ^ (r / 4)) (plus 32 per column pair, an immediate), in key group 2 warp + g.
  const Reg r = r8;
  const Reg flip = b.temp(Type::kU32, "st_flip");  // r / 4: rows 8..15 of the 16 take the other parity
  b.shr(flip, r, imm(2));
  const Reg parity = b.temp(Type::kU32, "st_parity");
  b.shr(parity, lane, imm(3));
  b.and_(parity, parity, imm(1));
  b.xor_(parity, parity, flip);
  const Reg row = b.temp(Type::kU32, "st_row");
  b.shr(row, lane, imm(4));  // half
  b.shl(row, row, imm(3));   // 8 half, doubled below with r
  b.add(row, row, r);
  b.shl(row, row, imm(1));
  b.add(row, row, parity);
  const Reg sw = b.temp(Type::kU32, "st_swizzle");
  b.and_(sw, row, imm(kVtSwizzleRows - 1));
  for (int g = 0; g < kVtKeyGroupsPerWarp; ++g) {
    out.store[size_t(g)] = b.reg(Type::kU32, indexed("vt_store_offset", g));
    const Reg chunk = b.temp(Type::kU32, "st_chunk");  // key group 2 warp + g, swizzled by row % 8
    b.mad_lo(chunk, warp, imm(kVtKeyGroupsPerWarp), imm(g));
    b.xor_(chunk, chunk, sw);
    b.shl(chunk, chunk, imm(4));
    b.mad_lo(out.store[size_t(g)], row, imm(kVtRowBytes), chunk);
  }

  // Thread (j, t) writes row j of every matrix: dimension 2 j + (parity ^ (j / 4)), so its PRMT picks the odd
  // dimensions for parity 0 when j >= 4.
  const Reg j_flip = b.temp(Type::kU32, "sel_flip");  // (lane / 4) / 4 = lane / 16
  b.shr(j_flip, lane, imm(4));
  const Reg is_odd = b.temp(Type::kPred, "sel_odd_first");
  b.setp(is_odd, Cmp::kNe, Type::kU32, j_flip, imm(0));
  for (int p = 0; p < 2; ++p) {
    out.selector[size_t(p)] = b.reg(Type::kB32, indexed("vt_selector", p));
    b.selp(out.selector[size_t(p)], imm(p ? kEvenDims : kOddDims), imm(p ? kOddDims : kEvenDims), is_odd);
  }
  return out;
}

void emit_vt_transpose_block(Builder &b, const VtTransposeLanes &lanes, Reg v_buf, Reg vt_buf) {
  for (int g = 0; g < kVtKeyGroupsPerWarp; ++g) {
    const Reg st = b.temp(Type::kU32, "vt_st_addr");
    b.add(st, vt_buf, lanes.store[size_t(g)]);
    for (int cp = 0; cp < kVtColumnPairs; ++cp) {
      const Reg ld = b.temp(Type::kU32, "v_ld_addr");
      b.add(ld, v_buf, lanes.load[size_t(cp)]);
      std::array<Reg, 4> mat;
      for (Reg &m : mat) m = b.temp(Type::kB32, "v_pairs");
      b.ldmatrix_x4(mat, ld, g * kKeyGroupBytes, /*transpose=*/true);
      std::array<Reg, 4> words;  // matrix (half, parity): dimensions 32 cp + 16 half + 2 j + (parity ^ j / 4)
      for (int m = 0; m < 4; ++m) {
        const int half = m / 2, parity = m % 2;
        words[size_t(m)] = b.temp(Type::kB32, "vt_word");
        b.prmt(words[size_t(m)], mat[size_t(2 * half)], mat[size_t(2 * half + 1)], lanes.selector[size_t(parity)]);
      }
      b.stmatrix_x4(st, cp * kPairRows * kVtRowBytes, words);
    }
  }
}

}  // namespace zyfa::asmgen::fp8w
