// Lean P's clamp after packing on the emitter's interpreter: max.s16x2 takes each half as a signed 16-bit
// integer (an unsigned max would let a negative y's field through as a code), and emit_lean_code_pairs gives
// numerics::lean_p_code for both scores of a pair, clamped ones included.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "asmgen/builder.hpp"
#include "asmgen/fp8_recurrence.hpp"
#include "asmgen/interpreter.hpp"
#include "kernels/numerics.h"

namespace zyfa::asmgen {
namespace {

// One thread: for each (a, b) pair, word i of the output is emit(a, b).
template <class Emit>
std::vector<uint32_t> run_pairs(const std::vector<std::array<uint32_t, 2>> &pairs, Emit emit) {
  Program p;
  p.entry = "lean_clamp_test";
  p.threads = 32;
  p.param_bytes = 8;
  Builder b(p);
  const Reg out = b.temp(Type::kU64, "out");
  b.ld_param(out, 0);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Reg x = b.temp(Type::kB32, "x"), y = b.temp(Type::kB32, "y"), d = b.temp(Type::kB32, "d");
    b.mov(x, imm(int64_t(pairs[i][0])));
    b.mov(y, imm(int64_t(pairs[i][1])));
    emit(b, d, x, y);
    b.st_global(Type::kB32, out, int64_t(4 * i), {d});
  }
  b.exit();
  std::vector<uint32_t> result(pairs.size(), 0xDEADBEEFu);
  Interpreter interp(p);
  interp.add_region(result.data(), result.size() * 4, true);
  const uint64_t param = uint64_t(uintptr_t(result.data()));
  EXPECT_EQ(interp.run(1, &param), "");
  return result;
}

uint32_t bits(float f) { return numerics::float_bits(f); }

TEST(LeanClamp, MaxS16x2IsSignedPerHalf) {
  const std::vector<std::array<uint32_t, 2>> pairs = {
      {0x80004000u, 0x40004000u}, {0x3fff7fffu, 0x40004000u}, {0xffff0001u, 0x00020000u}, {0x12345678u, 0x12345678u}};
  const std::vector<uint32_t> got =
      run_pairs(pairs, [](Builder &b, Reg d, Reg x, Reg y) { b.max_s16x2(d, x, y); });
  EXPECT_EQ(got[0], 0x40004000u);  // 0x8000 is negative
  EXPECT_EQ(got[1], 0x40007fffu);
  EXPECT_EQ(got[2], 0x00020001u);  // -1 against 2, 1 against 0
  EXPECT_EQ(got[3], 0x12345678u);
}

TEST(LeanClamp, PairsGiveTheHostCodes) {
  // y values across the codes, below 2 (clamped), negative, -inf, the midpoint of two codes (truncated, not
  // rounded) and a NaN as the GPU's FFMA makes it (the canonical 0x7fffffff: a NaN code, like the host's).
  const std::vector<float> ys = {2.0f, 2.5f, 3.84375f, 3.9990234375f, 1.999f, 0.0f, -0.0f, -3.0f, -INFINITY,
                                 1e-30f, 2.0f + 118.5f / 64.0f, numerics::bits_float(0x7fffffffu)};
  ASSERT_EQ(ys.size() % 2, 0u) << "the values are read in pairs: an odd one out would go untested";
  std::vector<std::array<uint32_t, 2>> pairs;
  for (size_t i = 0; i + 1 < ys.size(); i += 2) pairs.push_back({bits(ys[i]), bits(ys[i + 1])});
  const std::vector<uint32_t> got = run_pairs(pairs, [](Builder &b, Reg d, Reg x, Reg y) {
    emit_lean_code_pairs(b, d, x, y, emit_lean_code_zero(b));
  });
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(int(got[i] & 0xffu), numerics::lean_p_code(ys[2 * i], 1.0f, 0.0f)) << ys[2 * i];
    EXPECT_EQ(int((got[i] >> 16) & 0xffu), numerics::lean_p_code(ys[2 * i + 1], 1.0f, 0.0f)) << ys[2 * i + 1];
  }
}

}  // namespace
}  // namespace zyfa::asmgen
