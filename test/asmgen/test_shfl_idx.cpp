// Builder::shfl_idx on the emitter's interpreter: every lane gets the value of the source lane (the wgmma
// consumers broadcast their warpgroup index this way, so that ptxas proves it warp-uniform).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "asmgen/builder.hpp"
#include "asmgen/interpreter.hpp"

namespace zyfa::asmgen {
namespace {

constexpr int kThreads = 64;  // two warps: each broadcasts within itself only

// Thread t writes shfl_idx(1000 + t, src) to word t of the u64 parameter.
Program broadcast_program(int src) {
  Program p;
  p.entry = "shfl_idx_test";
  p.threads = kThreads;
  p.param_bytes = 8;
  Builder b(p);
  const Reg out = b.temp(Type::kU64, "out");
  b.ld_param(out, 0);
  const Reg tid = b.temp(Type::kU32, "tid");
  b.read_special(tid, Special::kTidX);
  const Reg mine = b.temp(Type::kU32, "mine");
  b.add(mine, tid, imm(1000));
  const Reg got = b.temp(Type::kU32, "got");
  b.shfl_idx(got, mine, src);
  const Reg offset = b.temp(Type::kU64, "offset");
  b.cvt(offset, tid, Type::kU32, Round::kNone);
  b.shl(offset, offset, imm(2));
  b.add(out, out, offset);
  b.st_global(Type::kB32, out, 0, {got});
  b.exit();
  return p;
}

TEST(ShflIdx, EveryLaneGetsTheSourceLanesValue) {
  for (int src : {0, 5, 31}) {
    const Program prog = broadcast_program(src);
    std::vector<uint32_t> out(kThreads, 0xDEADBEEFu);
    Interpreter interp(prog);
    interp.add_region(out.data(), out.size() * 4, true);
    const uint64_t param = uint64_t(uintptr_t(out.data()));
    ASSERT_EQ(interp.run(1, &param), "");
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(out[size_t(t)], uint32_t(1000 + 32 * (t / 32) + src)) << "thread " << t;
  }
}

TEST(ShflIdx, RefusesASourceLaneOutsideTheWarp) {
  Program p;
  p.threads = 32;
  Builder b(p);
  const Reg a = b.temp(Type::kU32, "a");
  const Reg d = b.temp(Type::kU32, "d");
  EXPECT_THROW(b.shfl_idx(d, a, 32), std::logic_error);
  EXPECT_THROW(b.shfl_idx(d, a, -1), std::logic_error);
}

}  // namespace
}  // namespace zyfa::asmgen
