// Shared memory that one warp writes and another reads needs an order between the two: an mbarrier the
// first arrives on and the second waits on, or a named barrier the second syncs on. The interpreter checks it
// by happens-before (SharedRaces), whatever order it runs the warps in: these two-warp kernels keep the rule
// and must pass, or break it and must fail, in both directions (a read of bytes not yet handed over, and a
// write over bytes another warp may still be reading: a stage refilled before its reader released it).
#include <gtest/gtest.h>

#include <string>

#include "asmgen/builder.hpp"
#include "asmgen/interpreter.hpp"
#include "small_kernels.hpp"

namespace zyfa::asmgen {
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 2 * kWarp;

enum class Handover { kMbarrier, kNoWait, kNamedBarrier, kNamedBarrierWrongWay };

// Warp `writer` stores one word a lane, warp 1 - writer loads them; `handover` orders the two (or not).
// writer 0: the load may see bytes not yet handed over; writer 1: warp 0 loads first, then warp 1 (the
// interpreter runs warp 0 first) overwrites bytes that warp 0 may, on the GPU, not have read yet.
std::string run(int writer, Handover handover) {
  test_kernels::HandoverKernel k(kThreads, kWarp);  // `empty`: an arrival from each lane of warp 0 completes it
  Builder &b = k.b;
  const Reg addr = b.temp(Type::kU32, "addr");
  b.and_(addr, k.tid, imm(kWarp - 1));
  b.shl(addr, addr, imm(2));
  const Reg x = b.temp(Type::kB32, "x");
  auto access = [&](bool write) {
    if (write) b.st_shared(Type::kB32, addr, 0, {imm(7)});
    else b.ld_shared({x}, addr, 0);
  };
  const bool named = handover == Handover::kNamedBarrier || handover == Handover::kNamedBarrierWrongWay;
  return k.run_split(
      [&] {  // warp 0, which the interpreter runs first, hands over to warp 1
        access(writer == 0);
        if (handover == Handover::kNamedBarrier) b.bar_arrive(imm(1), kThreads);
        else if (named) b.bar_sync_count(imm(1), kThreads);
        else b.mbar_arrive(k.empty);
      },
      [&] {
        if (handover == Handover::kNamedBarrier) b.bar_sync_count(imm(1), kThreads);
        else if (named) b.bar_arrive(imm(1), kThreads);
        else if (handover == Handover::kMbarrier) b.mbar_wait(k.empty, imm(0));
        access(writer == 1);
      });
}

TEST(SharedRaces, AReadAfterTheMbarrierWaitIsFine) { EXPECT_EQ(run(0, Handover::kMbarrier), ""); }

TEST(SharedRaces, AReadWithoutTheMbarrierWaitFails) {
  const std::string e = run(0, Handover::kNoWait);
  EXPECT_NE(e.find("ld.shared by warp 1 races shared byte 0's write by warp 0"), std::string::npos) << e;
}

TEST(SharedRaces, AWriteAfterTheReadersReleaseIsFine) { EXPECT_EQ(run(1, Handover::kMbarrier), ""); }

TEST(SharedRaces, AWriteWithoutWaitingForTheReadersReleaseFails) {
  const std::string e = run(1, Handover::kNoWait);
  EXPECT_NE(e.find("st.shared by warp 1 races shared byte 0's read by warp 0"), std::string::npos) << e;
}

TEST(SharedRaces, ANamedBarrierTheReaderSyncsOnOrdersTheRead) { EXPECT_EQ(run(0, Handover::kNamedBarrier), ""); }

TEST(SharedRaces, ANamedBarrierTheReaderOnlyArrivesOnDoesNot) {
  const std::string e = run(0, Handover::kNamedBarrierWrongWay);
  EXPECT_NE(e.find("ld.shared by warp 1 races shared byte 0's write by warp 0"), std::string::npos) << e;
}

}  // namespace
}  // namespace zyfa::asmgen
