// The host's work splitter: every unit exactly once, and an exception in any worker reaches the caller
// instead of terminating the process (the library must never abort).
#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <stdexcept>
#include <vector>

#include "ref/parallel_for.hpp"

namespace zyfa::ref {
namespace {

constexpr int64_t kUnits = 1000;

TEST(ParallelFor, RunsEveryUnitOnce) {
  std::vector<std::atomic<int>> runs(kUnits);
  parallel_for(kUnits, [&](int worker, int64_t unit) {
    EXPECT_GE(worker, 0);
    EXPECT_LT(worker, worker_count(kUnits));
    ++runs[size_t(unit)];
  });
  for (int64_t u = 0; u < kUnits; ++u) ASSERT_EQ(runs[size_t(u)].load(), 1) << "unit " << u;
}

// Each unit throws, so whichever workers start meet one: a throw on a started thread used to end the process.
TEST(ParallelFor, AThrowingBodyReachesTheCaller) {
  std::atomic<int64_t> begun{0};
  EXPECT_THROW(parallel_for(kUnits,
                            [&](int, int64_t) {
                              ++begun;
                              throw std::bad_alloc();
                            }),
               std::bad_alloc);
  EXPECT_GE(begun.load(), 1);
  EXPECT_LE(begun.load(), worker_count(kUnits)) << "a worker went on after its exception";
}

// One late unit throws: the units that already began still finish, and the caller sees that exception.
TEST(ParallelFor, TheFirstExceptionIsRethrownAfterEveryWorkerJoined) {
  std::atomic<int64_t> finished{0};
  EXPECT_THROW(parallel_for(kUnits,
                            [&](int, int64_t unit) {
                              if (unit == kUnits / 2) throw std::runtime_error("unit failed");
                              ++finished;
                            }),
               std::runtime_error);
  EXPECT_GE(finished.load(), kUnits / 2 - worker_count(kUnits));
  EXPECT_LT(finished.load(), kUnits);
}

}  // namespace
}  // namespace zyfa::ref
