// The two matrix products of a key block, on mma.sync m16n8k16 (f16 x f16 -> fp32; every e4m3 value is
// an f16 value, so these are the e4m3 products):
//   S   = Q K^T                 raw scores of the warp's 16 rows and the block's 128 keys
//   acc = P V, rowsum = P 1     a fresh accumulator per block (and half of the output columns); the ones
//                               operand gives the row sums of exactly the P codes that multiplied V: the
//                               denominator of the rounded P
#include "asmgen/fp8_mma_sync_emitter.hpp"

namespace zyfa::asmgen::fp8ms {
namespace {

template <size_t kTiles>
void zero(Builder &b, std::array<std::array<Reg, 4>, kTiles> &tiles) {
  for (auto &t : tiles)
    for (Reg r : t) b.mov(r, f32(0.0f));
}

}  // namespace

void MmaSyncEmitter::scores() {
  zero(b, s);
  for (int kk = 0; kk < layout.qk_steps; ++kk) {
    std::array<Reg, 4> qf;  // A: the warp's 16 rows, k 16 kk .. 16 kk + 15
    for (Reg &r : qf) r = b.temp(Type::kB32, "q_frag");
    b.ldmatrix_x4(qf, q_frag_addr, kk * kMmaK * kF16Bytes, /*transpose=*/false);
    for (int pair = 0; pair < kScoreTiles / 2; ++pair) {
      // B of score tiles 2 pair and 2 pair + 1: keys 16 pair .. 16 pair + 15.
      std::array<Reg, 4> kf;
      for (Reg &r : kf) r = b.temp(Type::kB32, "k_frag");
      b.ldmatrix_x4(kf, k_frag_addr, pair * 2 * kMmaN * layout.qk_pitch + kk * kMmaK * kF16Bytes, false);
      auto &s0 = s[size_t(2 * pair)];
      auto &s1 = s[size_t(2 * pair + 1)];
      b.mma_f16(s0, qf, {kf[0], kf[1]}, s0);
      b.mma_f16(s1, qf, {kf[2], kf[3]}, s1);
    }
  }
}

void MmaSyncEmitter::pv(int half) {
  zero(b, acc);
  const bool with_rowsum = half == 0;
  Reg ones;
  if (with_rowsum) {
    for (Reg r : rowsum) b.mov(r, f32(0.0f));
    ones = b.temp(Type::kB32, "ones_f16x2");
    b.mov(ones, imm(kOnesF16x2));
  }
  for (int kk = 0; kk < kPvSteps; ++kk) {
    for (int pair = 0; pair < kAccTiles / 2; ++pair) {
      // B of output columns 16 col_pair .. + 15 (counted over all of O), keys 16 kk .. 16 kk + 15.
      const int col_pair = half * kAccTiles / 2 + pair;
      std::array<Reg, 4> vf;
      for (Reg &r : vf) r = b.temp(Type::kB32, "v_frag");
      b.ldmatrix_x4(vf, v_frag_addr, kk * kMmaK * kVPitch + col_pair * 2 * kMmaN * kF16Bytes, /*transpose=*/true);
      auto &a0 = acc[size_t(2 * pair)];
      auto &a1 = acc[size_t(2 * pair + 1)];
      b.mma_f16(a0, p[size_t(kk)], {vf[0], vf[1]}, a0);
      b.mma_f16(a1, p[size_t(kk)], {vf[2], vf[3]}, a1);
    }
    if (with_rowsum) b.mma_f16(rowsum, p[size_t(kk)], {ones, ones}, rowsum);
  }
}

}  // namespace zyfa::asmgen::fp8ms
