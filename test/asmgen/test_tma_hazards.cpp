// A TMA copy completes asynchronously: its bytes are in shared memory only once the copy's mbarrier phase has
// completed, so a thread that reads them without waiting on that mbarrier reads whatever was there. And a copy
// from memory a preceding grid writes (the V^T pre-pass, overlapped through a programmatic launch dependency)
// must come after the issuing thread's griddepcontrol.wait. The interpreter enforces both: these kernels
// break the rule and must fail, or keep it and must not.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "asmgen/builder.hpp"
#include "asmgen/interpreter.hpp"
#include "small_kernels.hpp"

namespace zyfa::asmgen {
namespace {

constexpr int kWarpgroup = 128;
constexpr int kSharedBytes = 4096;
constexpr int kCopyBytes = 64;        // one 64-byte row, unswizzled, to shared offset 0
constexpr int kMbarrierOffset = 1024;

struct Order {
  bool read_before_wait = false;     // every thread reads the destination before the mbarrier wait too
  bool grid_dependency_wait = true;  // the issuing thread runs griddepcontrol.wait before the copy
};

// Thread 0 copies one row of `source` into shared memory with TMA; every thread then waits on the copy's
// mbarrier and reads the row. `preceding_grid`: the source is a preceding grid's output.
std::string run(const Order &order, bool preceding_grid) {
  Program p;
  p.entry = "tma_hazard_test";
  p.threads = kWarpgroup;
  p.param_bytes = int(sizeof(InterpretedTensorMap));
  p.dynamic_smem_bytes = kSharedBytes;
  Builder b(p);
  const Reg tid = b.temp(Type::kU32, "tid");
  b.read_special(tid, Special::kTidX);
  const Reg issuer = b.temp(Type::kPred, "issuer");
  b.setp(issuer, Cmp::kEq, Type::kU32, tid, imm(0));
  const Reg mbar = b.temp(Type::kU32, "mbar");
  b.mov(mbar, imm(kMbarrierOffset));
  const Reg dst = b.temp(Type::kU32, "dst");
  b.mov(dst, imm(0));
  const Reg map = b.temp(Type::kU64, "map");
  b.param_address(map, 0);
  {
    Builder::Guard g = b.when(issuer);
    b.mbar_init(mbar, 1);
    b.fence_mbarrier_init();
  }
  b.bar_sync(0);
  if (order.grid_dependency_wait) b.grid_dependency_wait();
  {
    Builder::Guard g = b.when(issuer);
    b.mbar_arrive_expect_tx(mbar, kCopyBytes);
    b.tma_load_4d(dst, map, {imm(0), imm(0), imm(0), imm(0)}, mbar, imm(int64_t(0)));
  }
  const Reg x = b.temp(Type::kB32, "x");
  if (order.read_before_wait) b.ld_shared({x}, dst, 0);
  b.mbar_wait(mbar, imm(0));
  b.ld_shared({x}, dst, 0);
  b.exit();

  std::vector<uint8_t> source(kCopyBytes, 0x38);
  InterpretedTensorMap tensor_map = test_kernels::one_row_map(source.data(), kCopyBytes);
  Interpreter interp(p);
  if (preceding_grid) interp.add_preceding_grid_output(source.data(), source.size());
  else interp.add_region(source.data(), source.size(), false);
  return interp.run(1, &tensor_map);
}

TEST(TmaHazards, ReadingAfterTheMbarrierWaitIsFine) { EXPECT_EQ(run(Order{}, false), ""); }

TEST(TmaHazards, ReadingBeforeTheMbarrierWaitFails) {
  Order order;
  order.read_before_wait = true;
  const std::string e = run(order, false);
  EXPECT_NE(e.find("ld.shared reads shared byte 0 before the TMA copy that writes it has landed"), std::string::npos)
      << e;
}

TEST(TmaHazards, CopyingAPrecedingGridsOutputAfterTheDependencyWaitIsFine) { EXPECT_EQ(run(Order{}, true), ""); }

TEST(TmaHazards, CopyingAPrecedingGridsOutputWithoutTheDependencyWaitFails) {
  Order order;
  order.grid_dependency_wait = false;
  const std::string e = run(order, true);
  EXPECT_NE(e.find("TMA touches memory a preceding grid writes before this thread's griddepcontrol.wait"),
            std::string::npos) << e;
}

TEST(TmaHazards, MemoryWrittenBeforeTheLaunchNeedsNoDependencyWait) {
  Order order;
  order.grid_dependency_wait = false;
  EXPECT_EQ(run(order, false), "");
}

}  // namespace
}  // namespace zyfa::asmgen
