// 16 host threads, each with 4 streams, call zyfa_attn_fwd on a random mix of shapes and dtypes for a
// bounded time, with the plan cache's capacity below the number of shapes so that plans are evicted and
// rebuilt while other threads' kernels run. Every result must be bitwise equal to the single-threaded
// result of the same inputs; a monitor checks the cache's bound while it runs, and the statistics must
// show evictions. ZYFA_RELIABILITY_SECONDS sets the duration (default kDefaultSeconds).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "host/plan_cache.hpp"
#include "reliability.hpp"

namespace zyfa::test::reliability {
namespace {

constexpr int kThreads = 16;
constexpr int kStreamsPerThread = 4;
constexpr double kDefaultSeconds = 20.0;
// Fewer plans than shapes below, so that the cache keeps evicting.
constexpr uint64_t kCapacity = 5;
constexpr auto kMonitorPeriod = std::chrono::milliseconds(5);

std::vector<AttentionShape> mixed_shapes() {
  const zyfa_dtype bf16 = ZYFA_DTYPE_BF16, fp8 = ZYFA_DTYPE_FP8_E4M3;
  return {
      attention_shape(bf16, 128, 1, 1, 8, 8),
      attention_shape(bf16, 128, 2, 129, 8, 2),
      attention_shape(bf16, 128, 1, 1000, 16, 16, Layout::kBHSD),
      attention_shape(bf16, 192, 1, 300, 8, 1),
      attention_shape(bf16, 192, 2, 77, 4, 4, Layout::kStrided),
      attention_shape(bf16, 128, 3, 513, 4, 1, Layout::kStrided),
      attention_shape(bf16, 128, 1, 2048, 8, 2),
      attention_shape(fp8, 128, 1, 1, 4, 4),
      attention_shape(fp8, 128, 2, 255, 8, 2, Layout::kBSHD, true),
      attention_shape(fp8, 128, 1, 1500, 8, 8, Layout::kBHSD),
      attention_shape(fp8, 192, 1, 640, 8, 2),
      attention_shape(fp8, 192, 2, 129, 4, 1, Layout::kStrided, true),
      attention_shape(fp8, 128, 4, 64, 16, 4),
      attention_shape(fp8, 192, 1, 2048, 4, 4),
  };
}

double run_seconds() {
  if (const char *s = std::getenv("ZYFA_RELIABILITY_SECONDS")) return std::atof(s);
  return kDefaultSeconds;
}

// One shape's inputs on the device and its single-threaded result.
struct Golden {
  std::unique_ptr<DeviceProblem> problem;
  std::vector<uint8_t> out, lse;
  size_t out_bytes = 0, lse_bytes = 0;
};

// Device memory of the largest job table among the shapes: the unit of the cache's bound. The plan cache
// balances a table's last rounds over the grid (host/cta_balance.hpp), splitting pairs into single tiles,
// which at most doubles its jobs.
size_t largest_table_bytes(const std::vector<AttentionShape> &shapes) {
  size_t most = 0;
  for (const AttentionShape &s : shapes) {
    std::vector<Job> jobs;
    EXPECT_EQ(build_job_table(s.batch, s.nheads, s.nheads_k, s.seqlen, &jobs), ZYFA_STATUS_SUCCESS);
    most = std::max(most, 2 * jobs.size() * sizeof(Job));
  }
  return most;
}

// What the threads report.
struct Tally {
  std::atomic<int64_t> calls{0}, verified{0}, mismatches{0}, failures{0};
  std::mutex mutex;
  std::string first_failure;
  void fail(const std::string &what) {
    ++failures;
    std::lock_guard<std::mutex> lock(mutex);
    if (first_failure.empty()) first_failure = what;
  }
};

// One stream of one thread: its own output buffers (the inputs are shared), a pinned landing area, and
// the shape of the call in flight.
class Slot {
 public:
  Slot(size_t out_bytes, size_t lse_bytes) : out_bytes_(out_bytes), lse_bytes_(lse_bytes) {
    error_ = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    if (error_ == cudaSuccess) error_ = cudaMalloc(&out_, out_bytes + lse_bytes);
    if (error_ == cudaSuccess) error_ = cudaMallocHost(&landing_, out_bytes + lse_bytes);
  }
  ~Slot() {
    if (landing_) cudaFreeHost(landing_);
    if (out_) cudaFree(out_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaError_t error() const { return error_; }

  // Poison, the call, and the copy back, all queued on this slot's stream.
  void issue(int shape, const Golden &g, Tally &tally) {
    zyfa_attn_desc d = g.problem->desc();
    d.out = out_;
    d.lse = d.lse ? reinterpret_cast<float *>(static_cast<uint8_t *>(out_) + out_bytes_) : nullptr;
    if (cudaError_t e = cudaMemsetAsync(out_, 0xff, out_bytes_ + lse_bytes_, stream_)) {
      tally.fail(cuda_message("cudaMemsetAsync", e));
      return;
    }
    ++tally.calls;
    if (zyfa_status s = zyfa_attn_fwd(&d, stream_)) {
      tally.fail(std::string("zyfa_attn_fwd: ") + zyfa_status_string(s) + ": " + zyfa_last_error());
      return;
    }
    if (cudaError_t e = cudaMemcpyAsync(landing_, out_, out_bytes_ + lse_bytes_, cudaMemcpyDeviceToHost, stream_)) {
      tally.fail(cuda_message("cudaMemcpyAsync", e));
      return;
    }
    pending_ = shape;
  }

  // Waits for the call in flight, if any, and compares it with the single-threaded result.
  void verify(const std::vector<Golden> &golden, Tally &tally) {
    if (pending_ < 0) return;
    const Golden &g = golden[size_t(pending_)];
    pending_ = -1;
    if (cudaError_t e = cudaStreamSynchronize(stream_)) {
      tally.fail(cuda_message("cudaStreamSynchronize", e));
      return;
    }
    const auto *bytes = static_cast<const uint8_t *>(landing_);
    const bool same = std::memcmp(bytes, g.out.data(), g.out_bytes) == 0 &&
                      (g.lse_bytes == 0 || std::memcmp(bytes + out_bytes_, g.lse.data(), g.lse_bytes) == 0);
    ++tally.verified;
    if (!same) {
      ++tally.mismatches;
      tally.fail("result of " + g.problem->shape().name() + " differs from the single-threaded one");
    }
  }

 private:
  size_t out_bytes_, lse_bytes_;
  cudaStream_t stream_ = nullptr;
  void *out_ = nullptr;
  void *landing_ = nullptr;
  int pending_ = -1;
  cudaError_t error_ = cudaSuccess;
};

TEST(ReliabilityConcurrency, ThreadsAndStreamsGiveSingleThreadedBits) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  const std::vector<AttentionShape> shapes = mixed_shapes();
  ASSERT_GT(shapes.size(), kCapacity);

  // Single-threaded results first, each checked against fp64 so that the reference is itself right.
  std::vector<Golden> golden(shapes.size());
  size_t out_bytes = 0, lse_bytes = 0;
  {
    Stream stream;
    ZYFA_ASSERT_CUDA(stream.error());
    for (size_t i = 0; i < shapes.size(); ++i) {
      Golden &g = golden[i];
      g.problem = std::make_unique<DeviceProblem>(shapes[i], seed + i);
      ASSERT_EQ(g.problem->status(), "");
      const zyfa_attn_desc d = g.problem->desc();
      ASSERT_EQ(zyfa_attn_fwd(&d, stream), ZYFA_STATUS_SUCCESS) << shapes[i].name() << ": " << zyfa_last_error();
      ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
      ASSERT_EQ(g.problem->download_bytes(&g.out, &g.lse), "");
      ASSERT_EQ(g.problem->download(), "");
      ASSERT_TRUE(matches_fp64(g.problem->host()));
      g.out_bytes = g.out.size();
      g.lse_bytes = g.lse.size();
      out_bytes = std::max(out_bytes, g.out_bytes);
      lse_bytes = std::max(lse_bytes, g.lse_bytes);
    }
  }

  // Start from an empty cache: plans pinned by earlier tests' captures are held beside the capacity and would
  // count in the entries this test bounds.
  // Nothing runs now and no graph of theirs is launched again, so dropping them is safe.
  ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
  ASSERT_EQ(zyfa_plan_cache_clear(), ZYFA_STATUS_SUCCESS);
  CapacityGuard restore;
  ASSERT_EQ(zyfa_plan_cache_set_capacity(kCapacity), ZYFA_STATUS_SUCCESS);
  const zyfa_plan_cache_stats before = cache_stats();
  const size_t table_bytes = largest_table_bytes(shapes);
  // While calls run, job tables beyond the cached ones are: one evicted plan per thread held by its call,
  // and deferred tables whose launches have not finished (one call in flight per stream), or finished
  // while another thread was freeing (one per thread, freed by its next call).
  const uint64_t running_bound = (kCapacity + 2 * kThreads + kThreads * kStreamsPerThread) * table_bytes;

  Tally tally;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> most_entries{0}, most_bytes{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(run_seconds());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<Slot>> slots;
      for (int s = 0; s < kStreamsPerThread; ++s) {
        slots.push_back(std::make_unique<Slot>(out_bytes, lse_bytes));
        if (cudaError_t e = slots.back()->error()) return tally.fail(cuda_message("slot setup", e));
      }
      std::mt19937_64 random(seed ^ (uint64_t(t) << 32));
      while (std::chrono::steady_clock::now() < deadline && tally.failures == 0) {
        for (auto &slot : slots) {
          slot->verify(golden, tally);
          const int shape = int(random() % shapes.size());
          slot->issue(shape, golden[size_t(shape)], tally);
        }
      }
      for (auto &slot : slots) slot->verify(golden, tally);
    });
  }
  std::thread monitor([&] {
    while (!stop) {
      const zyfa_plan_cache_stats s = cache_stats();
      most_entries = std::max<uint64_t>(most_entries, s.entries);
      most_bytes = std::max<uint64_t>(most_bytes, s.device_bytes);
      std::this_thread::sleep_for(kMonitorPeriod);
    }
  });
  for (std::thread &t : threads) t.join();
  stop = true;
  monitor.join();

  const zyfa_plan_cache_stats after = cache_stats();
  // Every launch has finished (each slot waited for its stream): the next call frees every deferred table.
  ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
  const zyfa_attn_desc any = golden[0].problem->desc();
  ASSERT_EQ(zyfa_attn_prepare(&any, nullptr), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  const zyfa_plan_cache_stats settled = cache_stats();
  EXPECT_EQ(tally.failures.load(), 0) << tally.first_failure;
  EXPECT_EQ(tally.mismatches.load(), 0);
  EXPECT_EQ(tally.verified.load(), tally.calls.load()) << "every call was compared";
  EXPECT_GT(tally.calls.load(), int64_t(kThreads * kStreamsPerThread));
  EXPECT_LE(most_entries.load(), kCapacity) << "the cache held more plans than its capacity";
  EXPECT_LE(most_bytes.load(), running_bound) << "job tables beyond capacity plus one per thread";
  EXPECT_LE(after.entries, kCapacity);
  EXPECT_LE(settled.device_bytes, kCapacity * table_bytes) << "with no call running, only cached plans hold memory";
  EXPECT_GT(after.evictions, before.evictions) << "the capacity was below the shape count: evictions expected";
  EXPECT_EQ(after.hits + after.misses - before.hits - before.misses, uint64_t(tally.calls.load()))
      << "every call looks up one plan";
  std::printf("[ concurrency ] %d threads x %d streams, %zu shapes (BF16/FP8, d 128/192, 3 layouts): %lld calls, "
              "%lld compared bitwise, %lld mismatches; cache capacity %llu: %llu evictions, %llu misses, "
              "most %llu plans and %llu bytes held\n",
              kThreads, kStreamsPerThread, shapes.size(), (long long)tally.calls.load(),
              (long long)tally.verified.load(), (long long)tally.mismatches.load(), (unsigned long long)kCapacity,
              (unsigned long long)(after.evictions - before.evictions),
              (unsigned long long)(after.misses - before.misses), (unsigned long long)most_entries.load(),
              (unsigned long long)most_bytes.load());
  RecordProperty("calls", std::to_string(tally.calls.load()));
  RecordProperty("evictions", std::to_string(after.evictions - before.evictions));
}

}  // namespace
}  // namespace zyfa::test::reliability
