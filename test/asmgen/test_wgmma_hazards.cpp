// The interpreter computes a wgmma product when it is issued, but on the GPU it runs until a wgmma.wait_group
// retires its group, and its registers (A's fragments, the accumulator) and the shared bytes it reads are its
// own until then; and it reads shared memory through the async proxy, so bytes threads stored there need the
// writer's fence.proxy.async before the barrier that hands them over. The interpreter enforces both: these
// kernels break the rule and must fail, or keep it and must not.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "asmgen/builder.hpp"
#include "asmgen/interpreter.hpp"
#include "small_kernels.hpp"

namespace zyfa::asmgen {
namespace {

constexpr int kWarpgroup = 128;
constexpr int kSharedBytes = 16384;

using Steps = std::function<void(Builder &)>;

// One warpgroup runs `before`, issues D (m64n8, 4 registers a thread) = A (registers) B, commits, then runs
// `after` with A's and D's registers; returns the interpreter's verdict.
std::string run(const std::function<void(Builder &, const std::array<Reg, 4> &, const std::vector<Reg> &)> &after,
                const Steps &before = [](Builder &) {}) {
  Program p;
  p.entry = "wgmma_hazard_test";
  p.threads = kWarpgroup;
  p.dynamic_smem_bytes = kSharedBytes;
  Builder b(p);
  before(b);
  std::array<Reg, 4> a;
  const std::vector<Reg> d = test_kernels::issue_ones_product(b, &a);
  after(b, a, d);
  b.exit();
  Interpreter interp(p);
  return interp.run(1, nullptr);
}

TEST(WgmmaHazards, WritingAsFragmentsBeforeTheWaitFails) {
  const std::string e = run([](Builder &b, const std::array<Reg, 4> &a, const std::vector<Reg> &) {
    b.mov(a[0], imm(0));
    b.wgmma_wait(0);
  });
  EXPECT_NE(e.find("while a wgmma product that uses it is in flight"), std::string::npos) << e;
}

TEST(WgmmaHazards, ReadingTheAccumulatorBeforeTheWaitFails) {
  const std::string e = run([](Builder &b, const std::array<Reg, 4> &, const std::vector<Reg> &d) {
    const Reg x = b.temp(Type::kF32, "x");
    b.add(x, d[0], f32(1.0f));
    b.wgmma_wait(0);
  });
  EXPECT_NE(e.find("reads %"), std::string::npos) << e;
}

TEST(WgmmaHazards, AWaitThatLeavesTheGroupPendingIsNotEnough) {
  const std::string e = run([](Builder &b, const std::array<Reg, 4> &, const std::vector<Reg> &d) {
    b.wgmma_wait(1);  // one group may stay pending: the product's
    const Reg x = b.temp(Type::kF32, "x");
    b.add(x, d[0], f32(1.0f));
    b.wgmma_wait(0);
  });
  EXPECT_NE(e.find("in flight"), std::string::npos) << e;
}

TEST(WgmmaHazards, AWaitRetiresTheOlderGroupsOnly) {
  // Groups [the product], [empty]: waiting down to one pending retires the product's.
  EXPECT_EQ(run([](Builder &b, const std::array<Reg, 4> &, const std::vector<Reg> &d) {
              b.wgmma_commit();
              b.wgmma_wait(1);
              const Reg x = b.temp(Type::kF32, "x");
              b.add(x, d[0], f32(1.0f));
              b.wgmma_wait(0);
            }),
            "");
}

TEST(WgmmaHazards, AfterTheWaitTheRegistersAreFree) {
  EXPECT_EQ(run([](Builder &b, const std::array<Reg, 4> &a, const std::vector<Reg> &d) {
              b.wgmma_wait(0);
              b.mov(a[0], imm(0));
              const Reg x = b.temp(Type::kF32, "x");
              b.add(x, d[0], f32(1.0f));
            }),
            "");
}

// Its shared operands too: B's bytes (at offset 0) are read while the product runs, so a store there (or a
// TMA copy into a stage released before the wait) before the wait fails, and after it is fine. Thread 0
// stores: every thread storing to the same bytes would be a race between the warps (SharedRaces).
void store_to_b(Builder &b) {
  const Reg tid = b.temp(Type::kU32, "tid");
  b.read_special(tid, Special::kTidX);
  const Reg first = b.temp(Type::kPred, "first");
  b.setp(first, Cmp::kEq, Type::kU32, tid, imm(0));
  const Reg addr = b.temp(Type::kU32, "b_addr");
  b.mov(addr, imm(0));
  Builder::Guard g = b.when(first);
  b.st_shared(Type::kB32, addr, 0, {imm(0)});
}

TEST(WgmmaHazards, StoringOverBBeforeTheWaitFails) {
  const std::string e = run([](Builder &b, const std::array<Reg, 4> &, const std::vector<Reg> &) {
    store_to_b(b);
    b.wgmma_wait(0);
  });
  EXPECT_NE(e.find("st.shared writes shared byte 0 while a wgmma product that reads it is in flight"),
            std::string::npos) << e;
}

TEST(WgmmaHazards, StoringOverBAfterTheWaitIsFine) {
  EXPECT_EQ(run([](Builder &b, const std::array<Reg, 4> &, const std::vector<Reg> &) {
              b.wgmma_wait(0);
              b.bar_sync(0);  // every warp's product issued (the interpreter computes a warp's rows at issue)
              store_to_b(b);
            }),
            "");
}

// B's bytes stored by the threads before the product: the stores, then `order` (fence, barrier) before it.
std::string store_then_multiply(const Steps &order) {
  return run([](Builder &b, const std::array<Reg, 4> &, const std::vector<Reg> &) { b.wgmma_wait(0); },
             [&](Builder &b) {
               store_to_b(b);
               order(b);
             });
}

TEST(WgmmaHazards, StoresFencedBeforeTheBarrierAreFine) {
  EXPECT_EQ(store_then_multiply([](Builder &b) {
              b.fence_proxy_async();
              b.bar_sync(0);
            }),
            "");
}

TEST(WgmmaHazards, StoresHandedOverWithoutAFenceFail) {
  const std::string e = store_then_multiply([](Builder &b) { b.bar_sync(0); });
  EXPECT_NE(e.find("wgmma reads shared byte 0, written by a thread that reached its barrier or arrive before its "
                   "fence.proxy.async"),
            std::string::npos) << e;
}

TEST(WgmmaHazards, AFenceAfterTheBarrierIsTooLate) {
  const std::string e = store_then_multiply([](Builder &b) {
    b.bar_sync(0);
    b.fence_proxy_async();
  });
  EXPECT_NE(e.find("before its fence.proxy.async"), std::string::npos) << e;
}

TEST(WgmmaHazards, AProductNeverWaitedForFails) {
  const std::string e = run([](Builder &, const std::array<Reg, 4> &, const std::vector<Reg> &) {});
  EXPECT_NE(e.find("never waited for"), std::string::npos) << e;
}

}  // namespace
}  // namespace zyfa::asmgen
