// SharedRaces on the asynchronous writers and readers (test_shared_races.cpp covers ld/st.shared between warps): a
// wgmma product reads its operands until wgmma.wait_group retires it, a TMA copy writes its bytes any time
// between its issue and its mbarrier's completion (and only that completion orders them), and a cp.async any time
// between its issue and its wait. Each kernel below but the last races on the GPU and must fail here.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "asmgen/builder.hpp"
#include "asmgen/interpreter.hpp"
#include "small_kernels.hpp"

namespace zyfa::asmgen {
namespace {

using Kernel = test_kernels::HandoverKernel;

// (1) Warp 0's wgmma reads B at shared 0; warp 0 releases the stage (arrives on `empty`) BEFORE its
// wgmma.wait_group; warp 1 waits on `empty` and refills the stage with TMA. On the GPU the copy can overwrite B
// while the product still reads it.
TEST(SharedRacesAsync, StageReleasedBeforeWgmmaWaitThenRefilledByTma) {
  Kernel k(64, 1);
  Builder &b = k.b;
  const std::string e = k.run_split(
      [&] {
        std::array<Reg, 4> a;
        test_kernels::issue_ones_product(b, &a);
        {
          Builder::Guard g = b.when(k.lane0);
          b.mbar_arrive(k.empty);  // BUG: the product may still be reading B
        }
        b.wgmma_wait(0);
        b.mbar_wait(k.full, imm(0));
      },
      [&] {
        b.mbar_wait(k.empty, imm(0));
        k.tma();
      });
  EXPECT_NE(e.find(" races shared byte "), std::string::npos) << e;
}

// (2) cp.async issued before the barrier that orders another warp's read of the destination; waited after it.
TEST(SharedRacesAsync, CpAsyncIssuedBeforeTheBarrierThatReleasesTheReaders) {
  Kernel k(64, 1);
  Builder &b = k.b;
  const Reg x = b.temp(Type::kB32, "x");
  const Reg addr = b.temp(Type::kU32, "addr");
  b.mov(addr, imm(1024));
  const Reg src = b.temp(Type::kU64, "src");
  b.mov(src, imm(int64_t(reinterpret_cast<uintptr_t>(k.global))));
  const std::string e = k.run_split(
      [&] {
        b.ld_shared({x}, addr, 0);  // warp 0 reads shared 1024..1027
        b.bar_sync(0);
      },
      [&] {
        {
          Builder::Guard g = b.when(k.lane0);
          b.cp_async_16(addr, 0, src, imm(16));  // BUG: may land before warp 0's read
        }
        b.cp_async_commit();
        b.bar_sync(0);
        b.cp_async_wait(0);
      });
  EXPECT_NE(e.find(" races shared byte "), std::string::npos) << e;
}

// (3) The TMA issuer stores after issuing (no arrive in between); the reader waits only on `full`, which the
// copy's complete-tx completes: nothing orders the store before the wait.
TEST(SharedRacesAsync, IssuerStoreAfterTheTmaIssueIsNotPublishedByTheCopy) {
  Kernel k(64, 1);
  Builder &b = k.b;
  const Reg y = b.temp(Type::kU32, "y");
  b.mov(y, imm(2048));
  const Reg x = b.temp(Type::kB32, "x");
  const std::string e = k.run_split(
      [&] {
        k.tma();
        Builder::Guard g = b.when(k.lane0);
        b.st_shared(Type::kB32, y, 0, {imm(7)});  // BUG: after the issue, not ordered before the completion
      },
      [&] {
        b.mbar_wait(k.full, imm(0));
        b.ld_shared({x}, y, 0);
      });
  EXPECT_NE(e.find(" races shared byte "), std::string::npos) << e;
}

// (4) The TMA bytes reach warp 0 through the issuer's bar.arrive only (issued before the copy completes); the
// issuer waits on `full` after its arrive, so the copy has landed when warp 0 reads, but nothing orders it.
TEST(SharedRacesAsync, TmaBytesPublishedByTheIssuersLaterRelease) {
  Kernel k(64, 1);
  Builder &b = k.b;
  const Reg x = b.temp(Type::kB32, "x");
  const std::string e = k.run_split(
      [&] {
        b.bar_sync_count(imm(1), 64);
        b.ld_shared({x}, k.dst, 0);  // BUG: no wait on `full`
      },
      [&] {
        k.tma();
        b.bar_arrive(imm(1), 64);
        b.mbar_wait(k.full, imm(0));
      });
  EXPECT_NE(e.find(" races shared byte "), std::string::npos) << e;
}

// (5) The issuer stores into the destination of its own copy in flight.
TEST(SharedRacesAsync, IssuerStoreIntoItsOwnCopyInFlight) {
  Kernel k(32, 1);
  Builder &b = k.b;
  k.tma();
  {
    Builder::Guard g = b.when(k.lane0);
    b.st_shared(Type::kB32, k.dst, 0, {imm(7)});  // BUG: races the copy's write
  }
  b.mbar_wait(k.full, imm(0));
  b.exit();
  const std::string e = k.run();
  EXPECT_NE(e.find(" races shared byte "), std::string::npos) << e;
}

// (6) Correct, so it must pass: warp 0 reads the copy after the full wait and releases it on `empty`; warp 1
// waits on `empty` and refills.
TEST(SharedRacesAsync, CorrectRefillPasses) {
  Kernel k(64, 1);
  Builder &b = k.b;
  const Reg x = b.temp(Type::kB32, "x");
  const std::string e = k.run_split(
      [&] {
        b.mbar_wait(k.full, imm(0));
        b.ld_shared({x}, k.dst, 0);
        {
          Builder::Guard g = b.when(k.lane0);
          b.mbar_arrive(k.empty);
        }
        b.mbar_wait(k.full, imm(1));
        b.ld_shared({x}, k.dst, 0);
      },
      [&] {
        k.tma();
        b.mbar_wait(k.empty, imm(0));
        k.tma();
      });
  EXPECT_EQ(e, "");
}

}  // namespace
}  // namespace zyfa::asmgen
