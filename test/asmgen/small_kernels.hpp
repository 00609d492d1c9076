// Pieces of the small hand-built kernels that the interpreter's hazard tests share.
#ifndef ZYFA_TEST_ASMGEN_SMALL_KERNELS_HPP_
#define ZYFA_TEST_ASMGEN_SMALL_KERNELS_HPP_

#include <array>
#include <cstdint>
#include <vector>

#include "asmgen/builder.hpp"
#include "asmgen/interpreter.hpp"

namespace zyfa::asmgen::test_kernels {

// A 128-byte-swizzled B operand at shared offset 0, 8-row groups 1024 bytes apart.
inline constexpr uint64_t kBAtZero = (uint64_t(1) << 62) | (uint64_t(1024 / 16) << 32);

// The warpgroup issues D (m64n8, 4 registers a thread) = A (registers, e4m3 ones) B (kBAtZero) and commits the
// group; `a` receives A's registers. Returns D's.
inline std::vector<Reg> issue_ones_product(Builder &b, std::array<Reg, 4> *a) {
  for (Reg &r : *a) {
    r = b.temp(Type::kB32, "a");
    b.mov(r, imm(0x38383838));
  }
  std::vector<Reg> d;
  for (int i = 0; i < 4; ++i) d.push_back(b.temp(Type::kF32, "d"));
  const Reg desc = b.temp(Type::kU64, "b_desc");
  b.mov(desc, imm(int64_t(kBAtZero)));
  const Reg zero = b.temp(Type::kS32, "zero");
  b.mov(zero, imm(0));
  const Reg accumulate = b.temp(Type::kPred, "accumulate");  // false: D = A B
  b.setp(accumulate, Cmp::kNe, Type::kS32, zero, imm(0));
  b.wgmma_fence();
  b.wgmma_e4m3(d, *a, desc, accumulate);
  b.wgmma_commit();
  return d;
}

// A tensor map whose one box is the first `bytes` bytes of `source`, one unswizzled row.
inline InterpretedTensorMap one_row_map(const void *source, uint32_t bytes) {
  InterpretedTensorMap m{};
  m.base = uint64_t(reinterpret_cast<uintptr_t>(source));
  for (uint64_t &d : m.dims) d = 1;
  m.dims[0] = bytes;
  for (uint64_t &s : m.strides) s = bytes;
  m.box[0] = bytes;
  m.box[1] = 1;
  return m;
}

}  // namespace zyfa::asmgen::test_kernels

#endif  // ZYFA_TEST_ASMGEN_SMALL_KERNELS_HPP_
