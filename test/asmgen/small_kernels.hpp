// Pieces of the small hand-built kernels that the interpreter's hazard tests share.
#ifndef ZYFA_TEST_ASMGEN_SMALL_KERNELS_HPP_
#define ZYFA_TEST_ASMGEN_SMALL_KERNELS_HPP_

#include <array>
#include <cstdint>
#include <string>
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

// A CTA of `threads` threads whose warps hand shared memory to each other: two mbarriers, `full` (one
// arrival, with a TMA copy's transactions: tma()) and `empty` (`empty_count` arrivals), set up by thread 0
// before a CTA barrier. The race tests build their warps' code on it and run it with run_split().
struct HandoverKernel {
  static constexpr int kSharedBytes = 16384;
  static constexpr int kFullOffset = 8192, kEmptyOffset = 8200;
  static constexpr int kCopyBytes = 64;  // tma(): one row of 64 bytes to shared offset 0 (`dst`)

  Program p;
  Builder b{p};
  Reg tid, warp, lane0, full, empty, map, dst;
  HandoverKernel(int threads, int empty_count) {
    p.entry = "handover_test";
    p.threads = threads;
    p.param_bytes = int(sizeof(InterpretedTensorMap));
    p.dynamic_smem_bytes = kSharedBytes;
    tid = b.temp(Type::kU32, "tid");
    b.read_special(tid, Special::kTidX);
    warp = b.temp(Type::kU32, "warp");
    b.shr(warp, tid, imm(5));
    const Reg lane = b.temp(Type::kU32, "lane");
    b.and_(lane, tid, imm(31));
    lane0 = b.temp(Type::kPred, "lane0");
    b.setp(lane0, Cmp::kEq, Type::kU32, lane, imm(0));
    const Reg t0 = b.temp(Type::kPred, "t0");
    b.setp(t0, Cmp::kEq, Type::kU32, tid, imm(0));
    full = b.temp(Type::kU32, "full");
    b.mov(full, imm(kFullOffset));
    empty = b.temp(Type::kU32, "empty");
    b.mov(empty, imm(kEmptyOffset));
    map = b.temp(Type::kU64, "map");
    b.param_address(map, 0);
    dst = b.temp(Type::kU32, "dst");
    b.mov(dst, imm(0));
    {
      Builder::Guard g = b.when(t0);
      b.mbar_init(full, 1);
      b.mbar_init(empty, empty_count);
      b.fence_mbarrier_init();
    }
    b.bar_sync(0);
  }
  void tma() {  // lane 0 of the calling warp: expect-tx and copy 64 bytes to shared 0, completing `full`
    Builder::Guard g = b.when(lane0);
    b.mbar_arrive_expect_tx(full, kCopyBytes);
    b.tma_load_4d(dst, map, {imm(0), imm(0), imm(0), imm(0)}, full, imm(int64_t(0)));
  }
  std::string run() {
    std::vector<uint8_t> source(kCopyBytes, 0x38);
    InterpretedTensorMap m = test_kernels::one_row_map(source.data(), kCopyBytes);
    Interpreter interp(p);
    interp.add_region(source.data(), source.size(), false);
    interp.add_region(global, sizeof global, false);
    return interp.run(1, &m);
  }
  // Warp 0 runs `first` and the other warps `second`; then every warp exits, and the interpreter gives its verdict.
  template <class First, class Second>
  std::string run_split(First first, Second second) {
    const int other = b.new_label("second"), done = b.new_label("done");
    b.bra_if(Cmp::kNe, Type::kU32, warp, imm(0), other, "is_second");
    first();
    b.bra(done);
    b.place(other);
    second();
    b.place(done);
    b.exit();
    return run();
  }
  alignas(16) uint8_t global[64] = {};  // readable global memory (a cp.async source)
};

}  // namespace zyfa::asmgen::test_kernels

#endif  // ZYFA_TEST_ASMGEN_SMALL_KERNELS_HPP_
