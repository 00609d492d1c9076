// The job table (coverage, balance, order, int32 bounds) and the plan cache (one table per key under
// concurrency, LRU, pinning, statistics, error paths, evicted tables freed only after their launches)
// over a fake device memory in host memory with fake events.
//
// Under ThreadSanitizer (these tests make no CUDA call; cuda_api.cpp only satisfies PlanCache::global),
// from the repository root (one command line, split here for width):
//   g++ -std=c++17 -O1 -g -fsanitize=thread -Iinclude -Isrc -I/usr/local/cuda/include
//     test/host/test_plan_cache.cpp src/host/{plan_cache,error,cuda_api,validate}.cpp -L/usr/local/cuda/lib64
//     -lcudart_static -lgtest -lgtest_main -lpthread -ldl -lrt -o /tmp/plan_cache_tsan && /tmp/plan_cache_tsan
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "host/error.hpp"
#include "host/cta_balance.hpp"
#include "host/plan_cache.hpp"
#include "host/validate.hpp"
#include "kernels/numerics.h"
#include "support/job_work.hpp"

namespace zyfa {
namespace {

// ---------------------------------------------------------------- helpers

int64_t tile_count(int64_t seqlen) { return (seqlen + numerics::kQueryTile - 1) / numerics::kQueryTile; }

using test::key_blocks_of_job;
using test::key_blocks_of_tile;

struct Shape {
  int64_t batch, nheads, nheads_k, seqlen;
};

std::string describe(const Shape &s, JobOrder order) {
  return "batch " + std::to_string(s.batch) + " nheads " + std::to_string(s.nheads) + " nheads_k " +
         std::to_string(s.nheads_k) + " seqlen " + std::to_string(s.seqlen) + " order " +
         std::to_string(int(order));
}

// Every sequence length the brief names, with multi-head, GQA and MQA head counts.
std::vector<Shape> table_shapes() {
  const int64_t seqlens[] = {1, 127, 128, 129, 1000, 4097, 32768};
  const Shape heads[] = {{2, 4, 4, 0}, {3, 8, 2, 0}, {2, 6, 1, 0}, {1, 12, 3, 0}};
  std::vector<Shape> shapes;
  for (int64_t s : seqlens) {
    for (Shape h : heads) shapes.push_back({h.batch, h.nheads, h.nheads_k, s});
  }
  return shapes;
}

constexpr JobOrder kOrders[] = {JobOrder::kHeadThenPair, JobOrder::kPairThenHead};

std::vector<Job> table_of(const Shape &s, JobOrder order) {
  std::vector<Job> table;
  EXPECT_EQ(build_job_table(s.batch, s.nheads, s.nheads_k, s.seqlen, &table, order), ZYFA_STATUS_SUCCESS)
      << last_error();
  return table;
}

// ---------------------------------------------------------------- the job table

TEST(JobTable, CoversEveryBatchHeadTileExactlyOnce) {
  for (const Shape &s : table_shapes()) {
    for (JobOrder order : kOrders) {
      SCOPED_TRACE(describe(s, order));
      const std::vector<Job> table = table_of(s, order);
      const int64_t tiles = tile_count(s.seqlen);
      ASSERT_EQ(int64_t(table.size()), s.batch * s.nheads * ((tiles + 1) / 2));
      std::vector<int> covered(size_t(s.batch * s.nheads * tiles), 0);
      for (const Job &job : table) {
        ASSERT_GE(job.batch, 0);
        ASSERT_LT(job.batch, s.batch);
        ASSERT_GE(job.head, 0);
        ASSERT_LT(job.head, s.nheads);
        ASSERT_GE(job.tile_first, 0);
        ASSERT_LT(job.tile_first, tiles);
        const int64_t base = (int64_t(job.batch) * s.nheads + job.head) * tiles;
        ++covered[size_t(base + job.tile_first)];
        if (job.tile_second != kNoTile) {
          ASSERT_EQ(job.tile_second, tiles - 1 - job.tile_first) << "pairs are first with last";
          ASSERT_GT(job.tile_second, job.tile_first);
          ++covered[size_t(base + job.tile_second)];
        } else {
          ASSERT_EQ(tiles % 2, 1) << "only an odd tile count leaves a tile alone";
          ASSERT_EQ(job.tile_first, tiles / 2) << "the lone tile is the middle one";
        }
      }
      for (size_t i = 0; i < covered.size(); ++i) ASSERT_EQ(covered[i], 1) << "tile slot " << i;
    }
  }
}

TEST(JobTable, WorkPerJobIsEqualWithinOneTile) {
  for (const Shape &s : table_shapes()) {
    for (JobOrder order : kOrders) {
      SCOPED_TRACE(describe(s, order));
      const std::vector<Job> table = table_of(s, order);
      const int64_t tiles = tile_count(s.seqlen);
      int64_t least = INT64_MAX, most = 0, most_of_one_tile = 0;
      for (int64_t t = 0; t < tiles; ++t) {
        most_of_one_tile = std::max(most_of_one_tile, key_blocks_of_tile(t, s.seqlen));
      }
      for (const Job &job : table) {
        const int64_t work = key_blocks_of_job(job, s.seqlen);
        least = std::min(least, work);
        most = std::max(most, work);
        if (numerics::kQueryTile == numerics::kKeyBlock && job.tile_second != kNoTile) {
          ASSERT_EQ(work, tiles + 1) << "a full pair covers T + 1 key blocks";
        }
      }
      EXPECT_LE(most - least, most_of_one_tile);
    }
  }
}

TEST(JobTable, QueryHeadsOfOneKvHeadAreConsecutiveAndPairsInOrder) {
  for (const Shape &s : table_shapes()) {
    for (JobOrder order : kOrders) {
      SCOPED_TRACE(describe(s, order));
      const std::vector<Job> table = table_of(s, order);
      const int64_t group = s.nheads / s.nheads_k;
      // (batch, kv head) runs: each appears as one contiguous run, in batch-then-kv-head order.
      int64_t runs = 0, previous_run = -1;
      std::vector<int32_t> last_tile(size_t(s.batch * s.nheads), -1);
      for (const Job &job : table) {
        const int64_t run = int64_t(job.batch) * s.nheads_k + job.head / group;
        if (run != previous_run) {
          ASSERT_EQ(run, previous_run + 1) << "a kv head's jobs were split or out of order";
          previous_run = run;
          ++runs;
        }
        int32_t &last = last_tile[size_t(int64_t(job.batch) * s.nheads + job.head)];
        ASSERT_GT(job.tile_first, last) << "a head's pairs must run in order";
        last = job.tile_first;
      }
      EXPECT_EQ(runs, s.batch * s.nheads_k);
      // What distinguishes the orders: one head's pairs back to back, or the group's heads side by side.
      const int64_t pairs = (tile_count(s.seqlen) + 1) / 2;
      for (size_t i = 1; i < table.size(); ++i) {
        const bool same_run = table[i].batch == table[i - 1].batch &&
                              table[i].head / group == table[i - 1].head / group;
        if (!same_run) continue;
        if (order == JobOrder::kHeadThenPair && pairs > 1 && table[i].head == table[i - 1].head) {
          ASSERT_EQ(table[i].tile_first, table[i - 1].tile_first + 1);
        }
        if (order == JobOrder::kPairThenHead && table[i].tile_first == table[i - 1].tile_first) {
          ASSERT_EQ(table[i].head, table[i - 1].head + 1);
        }
      }
    }
  }
}

TEST(JobTable, RefusesTablesBeyondInt32JobIndices) {
  struct Case {
    int64_t batch, nheads, seqlen;
  };
  const Case cases[] = {
      {int64_t(1) << 31, 1, 1},                // 2^31 jobs: one past INT32_MAX
      {INT32_MAX - 100, 1, 1},                 // fits int32, but a CTA's next index would not
      {int64_t(1) << 20, 1 << 10, 128 * 4},    // 2^31 jobs from a product
      {INT64_MAX, INT64_MAX, 1},               // the product overflows 64 bits
      {1, 1, INT64_MAX},                       // tile indices beyond int32
      {1, 1, (int64_t(INT32_MAX) + 1) * numerics::kQueryTile},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE("batch " + std::to_string(c.batch) + " nheads " + std::to_string(c.nheads) + " seqlen " +
                 std::to_string(c.seqlen));
    std::vector<Job> table;
    clear_error();
    EXPECT_EQ(build_job_table(c.batch, c.nheads, 1, c.seqlen, &table), ZYFA_STATUS_SIZE_OVERFLOW);
    EXPECT_TRUE(table.empty());
    EXPECT_NE(std::string(last_error()).find("int32"), std::string::npos) << last_error();
  }
}

TEST(JobTable, RefusesBadArguments) {
  std::vector<Job> table;
  EXPECT_EQ(build_job_table(0, 1, 1, 128, &table), ZYFA_STATUS_BAD_SHAPE);
  EXPECT_EQ(build_job_table(1, 1, 1, 0, &table), ZYFA_STATUS_BAD_SHAPE);
  EXPECT_EQ(build_job_table(1, 6, 4, 128, &table), ZYFA_STATUS_BAD_HEAD_RATIO);
  EXPECT_NE(std::string(last_error()).find("nheads = 6"), std::string::npos) << last_error();
  EXPECT_EQ(build_job_table(1, 1, 1, 128, &table, JobOrder(7)), ZYFA_STATUS_BAD_ARGUMENT);
  EXPECT_TRUE(table.empty());
}

// ---------------------------------------------------------------- a fake device memory

// A fake event: recorded on a stream, pending until the test finishes that stream's work.
struct FakeEvent {
  void *stream = nullptr;
  bool pending = false;
};

// What the fake saw, shared with the test after the cache takes the fake.
struct FakeLedger {
  std::mutex mutex;
  std::map<const void *, size_t> live;  // "device" allocations not yet released
  std::map<void *, FakeEvent> events;   // events created and not yet destroyed
  std::map<void *, std::vector<const void *>> in_flight;  // per stream, the tables of unfinished launches
  int64_t uploads = 0, releases = 0, live_bytes = 0, records = 0, events_created = 0, events_destroyed = 0;
  std::atomic<zyfa_status> upload_failure{ZYFA_STATUS_SUCCESS};  // what every upload fails with, if not SUCCESS
  std::atomic<bool> fail_records{false};
  // One upload made while hold_next_upload is set waits inside the fake until release_upload(): a build that
  // takes a long time (uploads_held says when it is waiting).
  std::atomic<bool> hold_next_upload{false}, upload_released{false};
  std::atomic<int> uploads_held{0};
  std::atomic<bool> throw_next_upload{false};  // the next upload throws std::bad_alloc, as an allocation may
  std::atomic<bool> throw_next_record{false};  // so does the next event record (its bookkeeping allocates)
  void release_upload() { upload_released = true; }
  std::atomic<int> multiprocessors{132};

  int64_t count_uploads() { std::lock_guard<std::mutex> l(mutex); return uploads; }
  int64_t count_releases() { std::lock_guard<std::mutex> l(mutex); return releases; }
  int64_t bytes_live() { std::lock_guard<std::mutex> l(mutex); return live_bytes; }
  bool is_live(const void *p) { std::lock_guard<std::mutex> l(mutex); return live.count(p) != 0; }
  int64_t count_records() { std::lock_guard<std::mutex> l(mutex); return records; }
  int64_t count_events() { std::lock_guard<std::mutex> l(mutex); return int64_t(events.size()); }
  int64_t count_events_created() { std::lock_guard<std::mutex> l(mutex); return events_created; }
  // A launch on `stream` reads `table` (tests that track launches say so; release checks them).
  void launched(void *stream, const void *table) {
    std::lock_guard<std::mutex> l(mutex);
    in_flight[stream].push_back(table);
  }
  // The work queued so far on `stream` (every stream, for nullptr) has finished.
  void finish(void *stream = nullptr) {
    std::lock_guard<std::mutex> l(mutex);
    for (auto &e : events) {
      if (stream == nullptr || e.second.stream == stream) e.second.pending = false;
    }
    if (stream == nullptr) in_flight.clear();
    else in_flight.erase(stream);
  }
  bool read_by_a_launch(const void *table) const {  // under mutex
    for (const auto &stream : in_flight) {
      if (std::find(stream.second.begin(), stream.second.end(), table) != stream.second.end()) return true;
    }
    return false;
  }
};

class HostDeviceMemory final : public DeviceMemory {
 public:
  explicit HostDeviceMemory(std::shared_ptr<FakeLedger> ledger) : ledger_(std::move(ledger)) {}

  zyfa_status upload(const Place &, const void *host, size_t bytes, void **table) override {
    if (const zyfa_status s = ledger_->upload_failure; s != ZYFA_STATUS_SUCCESS)
      return fail(s, "the fake's upload fails with %s", zyfa_status_string(s));
    if (ledger_->throw_next_upload.exchange(false)) throw std::bad_alloc();
    if (ledger_->hold_next_upload.exchange(false)) {
      ++ledger_->uploads_held;
      while (!ledger_->upload_released) std::this_thread::yield();
    }
    void *p = std::malloc(bytes);
    if (p == nullptr) return fail(ZYFA_STATUS_OUT_OF_MEMORY, "the fake's malloc failed");
    std::memcpy(p, host, bytes);
    std::lock_guard<std::mutex> l(ledger_->mutex);
    ledger_->live[p] = bytes;
    ++ledger_->uploads;
    ledger_->live_bytes += int64_t(bytes);
    *table = p;
    return ZYFA_STATUS_SUCCESS;
  }
  void release(const Place &, void *ptr) override {
    {
      std::lock_guard<std::mutex> l(ledger_->mutex);
      auto found = ledger_->live.find(ptr);
      EXPECT_NE(found, ledger_->live.end()) << "released memory the fake never handed out, or twice";
      if (found == ledger_->live.end()) return;
      EXPECT_FALSE(ledger_->read_by_a_launch(ptr)) << "released a table that a running launch reads";
      ledger_->live_bytes -= int64_t(found->second);
      ++ledger_->releases;
      ledger_->live.erase(found);
    }
    // Poison before freeing, so a reader that outlives the release sees garbage even without a sanitizer.
    std::memset(ptr, 0xEE, sizeof(Job));
    std::free(ptr);
  }
  int multiprocessor_count(int) override { return ledger_->multiprocessors; }
  bool record_event(const Place &, void *stream, void **event) override {
    if (ledger_->fail_records) return false;
    if (ledger_->throw_next_record.exchange(false)) throw std::bad_alloc();
    std::lock_guard<std::mutex> l(ledger_->mutex);
    if (*event == nullptr) {
      *event = new char;  // a unique handle
      ledger_->events[*event] = FakeEvent{};
      ++ledger_->events_created;
    }
    auto found = ledger_->events.find(*event);
    EXPECT_NE(found, ledger_->events.end()) << "recorded an event that was destroyed";
    if (found == ledger_->events.end()) return false;
    found->second = FakeEvent{stream, /*pending=*/true};
    ++ledger_->records;
    return true;
  }
  bool event_finished(const Place &, void *event) override {
    std::lock_guard<std::mutex> l(ledger_->mutex);
    auto found = ledger_->events.find(event);
    EXPECT_NE(found, ledger_->events.end()) << "queried an event that was destroyed";
    return found == ledger_->events.end() || !found->second.pending;
  }
  void destroy_event(const Place &, void *event) override {
    {
      std::lock_guard<std::mutex> l(ledger_->mutex);
      EXPECT_EQ(ledger_->events.erase(event), 1u) << "destroyed an event twice, or one never created";
      ++ledger_->events_destroyed;
    }
    delete static_cast<char *>(event);
  }

 private:
  std::shared_ptr<FakeLedger> ledger_;
};

// Stand-ins for cudaStream_t values: only their identity matters.
void *stream_id(int i) { return reinterpret_cast<void *>(uintptr_t(0x1000 + 0x10 * i)); }

PlanKey key_of(int64_t seqlen, int64_t batch = 2, int64_t nheads = 8, int64_t nheads_k = 2) {
  return PlanKey{/*device=*/0, ZYFA_DTYPE_BF16, 128, 128, batch, nheads, nheads_k, seqlen};
}

// The table the cache should have uploaded for `k` on the test's 132 SMs: built over nheads / heads_per_job
// heads, then its tail balanced over as many walkers (CTAs, or clusters of heads_per_job CTAs) as fit.
std::vector<Job> table_of(const PlanKey &k, int ctas_per_sm = 1, int heads_per_job = 1) {
  std::vector<Job> table = table_of(Shape{k.batch, k.nheads / heads_per_job, k.nheads_k, k.seqlen}, kDefaultJobOrder);
  balance_tail(&table, std::min<int64_t>(132 * ctas_per_sm / heads_per_job, int64_t(table.size())),
               query_tiling(k.seqlen, numerics::kQueryTile));
  return table;
}

uint64_t table_bytes(const PlanKey &k, int ctas_per_sm = 1) { return table_of(k, ctas_per_sm).size() * sizeof(Job); }

zyfa_plan_cache_stats stats_of(const PlanCache &cache) {
  zyfa_plan_cache_stats s = ZYFA_PLAN_CACHE_STATS_INIT;
  EXPECT_EQ(cache.stats(&s), ZYFA_STATUS_SUCCESS) << last_error();
  return s;
}

class PlanCacheTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeLedger> ledger = std::make_shared<FakeLedger>();

  std::unique_ptr<PlanCache> make_cache(uint64_t capacity) {
    return std::make_unique<PlanCache>(std::make_unique<HostDeviceMemory>(ledger), capacity);
  }
  // A call outside capture as run_attention makes it: the lookup, then the deferred tables whose launches
  // have finished are freed (tables no launch read go at once).
  static std::shared_ptr<const Plan> get(PlanCache &cache, const PlanKey &key, bool pin = false,
                                         int ctas_per_sm = 1) {
    std::shared_ptr<const Plan> plan;
    EXPECT_EQ(cache.acquire(key, ctas_per_sm, /*may_build=*/true, pin, &plan), ZYFA_STATUS_SUCCESS)
        << last_error();
    cache.release_finished();
    return plan;
  }
  // A plan the test holds as a caller does between its lookup and its launch, and its table's address,
  // which stays the fake's name for the table after the plan is dropped.
  struct HeldPlan {
    std::shared_ptr<const Plan> plan;
    const void *table;
  };
  static HeldPlan hold(PlanCache &cache, const PlanKey &key) {
    std::shared_ptr<const Plan> plan = get(cache, key);
    return HeldPlan{plan, plan->schedule.jobs};
  }
  static bool present(PlanCache &cache, const PlanKey &key) {
    std::shared_ptr<const Plan> plan;
    return cache.acquire(key, 1, /*may_build=*/false, /*pin=*/false, &plan) == ZYFA_STATUS_SUCCESS;
  }
};

// ---------------------------------------------------------------- the cache

TEST_F(PlanCacheTest, BuildsOnceAndUploadsTheTableWithItsGrid) {
  auto cache = make_cache(8);
  const PlanKey small = key_of(1000, 1, 4, 4);   // 4 heads * 4 pairs = 16 jobs < 132 SMs
  const PlanKey large = key_of(32768, 2, 8, 2);  // 2048 jobs
  for (const PlanKey &key : {small, large}) {
    const std::vector<Job> expected = table_of(key);
    const std::shared_ptr<const Plan> plan = get(*cache, key);
    ASSERT_TRUE(plan);
    ASSERT_EQ(plan->schedule.n_jobs, int64_t(expected.size()));
    EXPECT_EQ(std::memcmp(plan->schedule.jobs, expected.data(), expected.size() * sizeof(Job)), 0)
        << "the uploaded table is the built one";
    EXPECT_EQ(plan->schedule.grid, std::min<int64_t>(132, int64_t(expected.size())));
    EXPECT_EQ(get(*cache, key).get(), plan.get()) << "a second lookup finds the same plan";
    // Two CTAs per SM need their own grid, hence their own plan.
    const std::shared_ptr<const Plan> two = get(*cache, key, false, 2);
    EXPECT_NE(two.get(), plan.get());
    const std::vector<Job> expected_two = table_of(key, 2);
    ASSERT_EQ(two->schedule.n_jobs, int64_t(expected_two.size()));
    EXPECT_EQ(std::memcmp(two->schedule.jobs, expected_two.data(), expected_two.size() * sizeof(Job)), 0);
    EXPECT_EQ(two->schedule.grid, std::min<int64_t>(264, int64_t(table_of(key, 2).size())));
  }
  const zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.misses, 4u);
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.entries, 4u);
  EXPECT_EQ(ledger->count_uploads(), 4);
  EXPECT_EQ(s.device_bytes, table_bytes(small) + table_bytes(small, 2) + table_bytes(large) + table_bytes(large, 2));
  EXPECT_EQ(int64_t(s.device_bytes), ledger->bytes_live());
}

// A kernel whose cluster of two CTAs runs two query heads of one kv head per job (the BF16 kernel where the
// group is even): its plan is a table over half the heads, walked by half the grid, and a plan of its own.
TEST_F(PlanCacheTest, HeadsPerJobHalveTheTableHeadsAndTheGrid) {
  auto cache = make_cache(8);
  for (const PlanKey &key : {key_of(1000, 1, 4, 2), key_of(32768, 2, 8, 1)}) {
    const std::vector<Job> expected = table_of(key, /*ctas_per_sm=*/1, /*heads_per_job=*/2);
    std::shared_ptr<const Plan> pairs;
    ASSERT_EQ(cache->acquire(key, GridShape{1, 2}, /*may_build=*/true, /*pin=*/false, &pairs), ZYFA_STATUS_SUCCESS)
        << last_error();
    ASSERT_EQ(pairs->schedule.n_jobs, int64_t(expected.size()));
    EXPECT_EQ(std::memcmp(pairs->schedule.jobs, expected.data(), expected.size() * sizeof(Job)), 0);
    EXPECT_EQ(pairs->schedule.grid, std::min<int64_t>(66, int64_t(expected.size()))) << "the walkers are clusters";
    EXPECT_EQ(pairs->schedule.heads_per_job, 2);
    for (int64_t i = 0; i < pairs->schedule.n_jobs; ++i) EXPECT_LT(pairs->schedule.jobs[i].head, key.nheads / 2);
    EXPECT_NE(get(*cache, key).get(), pairs.get()) << "one head per job is another plan";
    EXPECT_EQ(get(*cache, key)->schedule.heads_per_job, 1);
  }
  // Heads per job must divide the group: an odd group cannot pair its heads.
  std::shared_ptr<const Plan> plan;
  EXPECT_EQ(cache->acquire(key_of(1000, 1, 6, 2), GridShape{1, 2}, true, false, &plan), ZYFA_STATUS_INTERNAL);
  EXPECT_NE(std::string(last_error()).find("heads_per_job = 2"), std::string::npos) << last_error();
  EXPECT_EQ(cache->acquire(key_of(1000), GridShape{1, 0}, true, false, &plan), ZYFA_STATUS_INTERNAL);
  EXPECT_NE(std::string(last_error()).find("heads_per_job = 0"), std::string::npos) << last_error();
  EXPECT_FALSE(plan);
}

// Where the device holds fewer clusters than SMs / heads_per_job (an MPS or green-context partition), the grid
// is capped at what it holds, balanced for that grid, and is a plan of its own.
TEST_F(PlanCacheTest, MaxWalkersCapTheGrid) {
  auto cache = make_cache(8);
  const PlanKey key = key_of(32768, 1, 8, 2);
  std::shared_ptr<const Plan> capped, whole;
  ASSERT_EQ(cache->acquire(key, GridShape{1, 2, 40}, true, false, &capped), ZYFA_STATUS_SUCCESS) << last_error();
  ASSERT_EQ(cache->acquire(key, GridShape{1, 2}, true, false, &whole), ZYFA_STATUS_SUCCESS) << last_error();
  EXPECT_EQ(capped->schedule.grid, 40);
  EXPECT_EQ(whole->schedule.grid, 66);
  EXPECT_NE(capped.get(), whole.get());
  std::vector<Job> expected = table_of(Shape{key.batch, key.nheads / 2, key.nheads_k, key.seqlen}, kDefaultJobOrder);
  balance_tail(&expected, 40, query_tiling(key.seqlen, numerics::kQueryTile));
  ASSERT_EQ(capped->schedule.n_jobs, int64_t(expected.size()));
  EXPECT_EQ(std::memcmp(capped->schedule.jobs, expected.data(), expected.size() * sizeof(Job)), 0);
  // A cap above the SMs changes nothing but the key.
  std::shared_ptr<const Plan> loose;
  ASSERT_EQ(cache->acquire(key, GridShape{1, 2, 1000}, true, false, &loose), ZYFA_STATUS_SUCCESS) << last_error();
  EXPECT_EQ(loose->schedule.grid, 66);
  std::shared_ptr<const Plan> plan;
  EXPECT_EQ(cache->acquire(key, GridShape{1, 2, -1}, true, false, &plan), ZYFA_STATUS_INTERNAL);
  EXPECT_NE(std::string(last_error()).find("max_walkers = -1"), std::string::npos) << last_error();
  EXPECT_FALSE(plan);
}

// A plan of 192-row tiles (the FP8 kernels of three consumer warpgroups) is a plan of its own, balanced over
// where those tiles lie: tile 0 starts fp8_query_tile_shift rows before row 0 (128 at 4K, whose 22 tiles
// would overhang by as many), and a tile's work is the key blocks its last row reaches.
TEST_F(PlanCacheTest, ThreeConsumerTilesAreBalancedWhereTheyLie) {
  constexpr int kRows = 192;
  auto cache = make_cache(8);
  const PlanKey key = key_of(4096, 1, 64, 16);
  EXPECT_EQ(query_tiling(4096, kRows).row_shift, 128);
  EXPECT_EQ(query_tiling(4096, numerics::kQueryTile).row_shift, 0);
  std::shared_ptr<const Plan> wide, plain;
  ASSERT_EQ(cache->acquire(key, GridShape{1, 1, 0, kRows}, true, false, &wide), ZYFA_STATUS_SUCCESS) << last_error();
  ASSERT_EQ(cache->acquire(key, GridShape{1, 1}, true, false, &plain), ZYFA_STATUS_SUCCESS) << last_error();
  EXPECT_NE(wide.get(), plain.get());
  std::vector<Job> expected;
  ASSERT_EQ(build_job_table(key.batch, key.nheads, key.nheads_k, key.seqlen, &expected, kDefaultJobOrder, kRows),
            ZYFA_STATUS_SUCCESS)
      << last_error();
  balance_tail(&expected, 132, query_tiling(key.seqlen, kRows));
  ASSERT_EQ(wide->schedule.n_jobs, int64_t(expected.size()));
  EXPECT_EQ(std::memcmp(wide->schedule.jobs, expected.data(), expected.size() * sizeof(Job)), 0);
  // The slowest CTA, counted from the rows each tile reads, within 1% of an even split.
  std::vector<int64_t> blocks(132, 0);
  int64_t total = 0;
  for (int32_t i = 0; i < wide->schedule.n_jobs; ++i) {
    const int64_t work = key_blocks_of_job(expected[size_t(i)], key.seqlen, kRows, 128);
    blocks[size_t(i) % blocks.size()] += work;
    total += work;
  }
  EXPECT_LE(double(*std::max_element(blocks.begin(), blocks.end())), 1.01 * double(total) / 132.0);
}

TEST_F(PlanCacheTest, EvictsTheLeastRecentlyUsed) {
  auto cache = make_cache(3);
  const PlanKey k0 = key_of(128), k1 = key_of(256), k2 = key_of(384), k3 = key_of(512);
  get(*cache, k0);
  const void *table_of_k1 = get(*cache, k1)->schedule.jobs;
  get(*cache, k2);
  get(*cache, k0);  // k0 used again: k1 is now the oldest
  get(*cache, k3);  // evicts k1
  zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(ledger->count_releases(), 1);
  EXPECT_FALSE(ledger->is_live(table_of_k1)) << "k1's table was the one released";
  EXPECT_EQ(s.device_bytes, table_bytes(k0) + table_bytes(k2) + table_bytes(k3));
  // Recency now, newest first: k3, k0, k2. Touch k2 and k0; k3 becomes the oldest.
  EXPECT_TRUE(present(*cache, k2));
  EXPECT_TRUE(present(*cache, k0));
  get(*cache, k1);  // rebuilt: evicts k3
  EXPECT_FALSE(present(*cache, k3));
  EXPECT_TRUE(present(*cache, k0));
  EXPECT_TRUE(present(*cache, k1));
  EXPECT_TRUE(present(*cache, k2));
  s = stats_of(*cache);
  EXPECT_EQ(s.evictions, 2u);
  EXPECT_EQ(s.misses, 6u);  // k0 k1 k2 k3, k1 again, and the lookup of the evicted k3
  EXPECT_EQ(s.hits, 6u);
  EXPECT_EQ(ledger->count_uploads(), 5);
  EXPECT_EQ(ledger->count_releases(), 2);
}

TEST_F(PlanCacheTest, EvictedPlanStaysValidWhileACallerHoldsIt) {
  auto cache = make_cache(1);
  const PlanKey k0 = key_of(4097), k1 = key_of(1000);
  std::shared_ptr<const Plan> held = get(*cache, k0);
  const std::vector<Job> expected = table_of(k0);
  get(*cache, k1);  // evicts k0 from the cache, but `held` keeps its table
  zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(ledger->count_releases(), 0);
  EXPECT_EQ(s.device_bytes, table_bytes(k0) + table_bytes(k1)) << "device_bytes counts the held table";
  EXPECT_EQ(std::memcmp(held->schedule.jobs, expected.data(), expected.size() * sizeof(Job)), 0);
  EXPECT_EQ(cache->deferred_tables(), 0u) << "a held plan is not deferred yet";
  held.reset();
  EXPECT_EQ(cache->deferred_tables(), 1u) << "dropped: the table waits for a call to free it";
  EXPECT_EQ(ledger->count_releases(), 0);
  cache->release_finished();
  EXPECT_EQ(cache->deferred_tables(), 0u);
  EXPECT_EQ(ledger->count_releases(), 1);
  EXPECT_EQ(stats_of(*cache).device_bytes, table_bytes(k1));
}

// A launch may still read an evicted table: its event must complete, and a later call must come, before
// the table is freed. Here the launch is queued after another call evicted the plan, as a thread that
// holds the plan between its lookup and its launch does.
TEST_F(PlanCacheTest, EvictedTableWaitsForItsLaunch) {
  auto cache = make_cache(1);
  const PlanKey k0 = key_of(1000), k1 = key_of(2000);
  HeldPlan held = hold(*cache, k0);
  get(*cache, k1);  // evicts k0, which this "thread" still holds
  cache->record_launch(*held.plan, stream_id(0));
  held.plan.reset();
  EXPECT_EQ(cache->deferred_tables(), 1u);
  cache->release_finished();
  EXPECT_TRUE(ledger->is_live(held.table)) << "freed while its launch may run";
  EXPECT_EQ(stats_of(*cache).device_bytes, table_bytes(k0) + table_bytes(k1)) << "deferred tables count";
  ledger->finish(stream_id(0));
  EXPECT_TRUE(ledger->is_live(held.table)) << "only a call frees";
  cache->release_finished();
  EXPECT_FALSE(ledger->is_live(held.table));
  EXPECT_EQ(cache->deferred_tables(), 0u);
  EXPECT_EQ(ledger->count_events(), 0) << "the freed plan's event was destroyed";
  EXPECT_EQ(stats_of(*cache).device_bytes, table_bytes(k1));
}

// One event per stream and plan, recorded again by each launch on that stream; a stream new to the plan
// takes over the event of a stream whose work has finished. The table waits for every stream.
TEST_F(PlanCacheTest, TableWaitsForEveryStreamWithOneEventPerStream) {
  auto cache = make_cache(1);
  const PlanKey k0 = key_of(700), k1 = key_of(900);
  HeldPlan held = hold(*cache, k0);
  for (int stream : {0, 0, 1}) cache->record_launch(*held.plan, stream_id(stream));
  EXPECT_EQ(ledger->count_records(), 3);
  EXPECT_EQ(ledger->count_events(), 2);
  ledger->finish(stream_id(0));
  cache->record_launch(*held.plan, stream_id(2));  // reuses stream 0's event
  EXPECT_EQ(ledger->count_events(), 2);
  EXPECT_EQ(ledger->count_events_created(), 2);
  held.plan.reset();
  get(*cache, k1);  // evicts k0
  EXPECT_TRUE(ledger->is_live(held.table));
  ledger->finish(stream_id(1));
  cache->release_finished();
  EXPECT_TRUE(ledger->is_live(held.table)) << "stream 2 still runs";
  ledger->finish(stream_id(2));
  cache->release_finished();
  EXPECT_FALSE(ledger->is_live(held.table));
  EXPECT_EQ(ledger->count_events(), 0);
}

// A launch whose event could not be recorded leaves no way to know when it ends: its table waits for
// clear(), which also frees deferred tables whose launches have not finished (zyfa.h's rule).
TEST_F(PlanCacheTest, UnrecordedLaunchAndPendingTablesWaitForClear) {
  auto cache = make_cache(1);
  const PlanKey k0 = key_of(300), k1 = key_of(600), k2 = key_of(900);
  HeldPlan unrecorded = hold(*cache, k0);
  ledger->fail_records = true;
  cache->record_launch(*unrecorded.plan, stream_id(0));
  ledger->fail_records = false;
  EXPECT_EQ(ledger->count_events(), 0);
  unrecorded.plan.reset();
  HeldPlan pending = hold(*cache, k1);  // evicts k0
  cache->record_launch(*pending.plan, stream_id(1));
  pending.plan.reset();
  get(*cache, k2);  // evicts k1
  ledger->finish();
  cache->release_finished();
  EXPECT_TRUE(ledger->is_live(unrecorded.table)) << "no event: it may still run";
  EXPECT_FALSE(ledger->is_live(pending.table));
  EXPECT_EQ(cache->deferred_tables(), 1u);
  // Another pending one, then clear: both go, with their events.
  std::shared_ptr<const Plan> plan = get(*cache, k0);  // evicts k2
  cache->record_launch(*plan, stream_id(3));
  plan.reset();
  get(*cache, k1);  // evicts k0 (rebuilt); its launch has not finished
  EXPECT_EQ(cache->deferred_tables(), 2u);
  ASSERT_EQ(cache->clear(), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(cache->deferred_tables(), 0u);
  EXPECT_EQ(ledger->count_releases(), ledger->count_uploads());
  EXPECT_EQ(ledger->count_events(), 0);
  EXPECT_EQ(stats_of(*cache).device_bytes, 0u);
}

// The launch is queued before its record: a record that throws must not reach the caller (the call would
// report a failure for a launch that runs), and the table must wait for clear(), as an unrecorded one does.
TEST_F(PlanCacheTest, ARecordThatThrowsLeavesTheTableForClear) {
  auto cache = make_cache(1);
  HeldPlan launched = hold(*cache, key_of(300));
  ledger->launched(stream_id(0), launched.table);
  ledger->throw_next_record = true;
  EXPECT_NO_THROW(cache->record_launch(*launched.plan, stream_id(0)));
  launched.plan.reset();
  get(*cache, key_of(600));  // evicts it while its launch may still run
  cache->release_finished();
  EXPECT_TRUE(ledger->is_live(launched.table)) << "no event: it may still run";
  ledger->finish();
  ASSERT_EQ(cache->clear(), ZYFA_STATUS_SUCCESS);
  EXPECT_FALSE(ledger->is_live(launched.table));
}

// A destroyed cache frees what it holds and what it deferred; a plan a caller holds past it is freed when
// the caller drops it.
TEST_F(PlanCacheTest, DestroyedCacheFreesDeferredAndHeldPlansLater) {
  std::shared_ptr<const Plan> survivor;
  {
    auto cache = make_cache(2);
    std::shared_ptr<const Plan> plan = get(*cache, key_of(100));
    cache->record_launch(*plan, stream_id(0));
    plan.reset();
    survivor = get(*cache, key_of(200));
    cache->record_launch(*survivor, stream_id(1));
    get(*cache, key_of(300));  // evicts key_of(100), whose launch has not finished
    EXPECT_EQ(cache->deferred_tables(), 1u);
  }
  EXPECT_EQ(ledger->count_releases(), 2);
  EXPECT_TRUE(ledger->is_live(survivor->schedule.jobs));
  survivor.reset();
  EXPECT_EQ(ledger->count_releases(), ledger->count_uploads());
  EXPECT_EQ(ledger->count_events(), 0);
}

TEST_F(PlanCacheTest, PinnedPlansSurviveEvictionUntilClear) {
  auto cache = make_cache(2);
  const PlanKey pinned = key_of(128);
  const Plan *pinned_plan = get(*cache, pinned, /*pin=*/true).get();
  for (int64_t s = 2; s <= 6; ++s) get(*cache, key_of(s * 128));
  std::shared_ptr<const Plan> again;
  ASSERT_EQ(cache->acquire(pinned, 1, /*may_build=*/false, /*pin=*/true, &again), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(again.get(), pinned_plan);
  again.reset();
  zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.entries, 3u);    // the pinned plan beside the capacity's two unpinned ones
  EXPECT_EQ(s.evictions, 3u);  // five unpinned plans through two slots
  // A plan pinned on a later lookup (captured after prepare) is kept too, and leaves the capacity to the
  // unpinned plans.
  get(*cache, key_of(6 * 128), /*pin=*/true);
  get(*cache, key_of(7 * 128), /*pin=*/true);
  s = stats_of(*cache);
  EXPECT_EQ(s.entries, 4u);  // three pinned, and 5 * 128 unpinned
  EXPECT_EQ(s.evictions, 3u);
  EXPECT_TRUE(present(*cache, pinned));
  EXPECT_TRUE(present(*cache, key_of(5 * 128)));
  EXPECT_TRUE(present(*cache, key_of(6 * 128)));
  ASSERT_EQ(cache->clear(), ZYFA_STATUS_SUCCESS);
  s = stats_of(*cache);
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.device_bytes, 0u);
  EXPECT_EQ(ledger->count_releases(), ledger->count_uploads());
  EXPECT_EQ(s.evictions, 3u) << "clear is not eviction";
}

// Pinned plans as many as the capacity or more (one captured shape under capacity 1) leave room for a new
// shape: prepare builds its plan and keeps it, so that its capture finds it, instead of evicting it at once.
TEST_F(PlanCacheTest, PinnedPlansLeaveTheCapacityToUnpinnedOnes) {
  auto cache = make_cache(1);
  get(*cache, key_of(128), /*pin=*/true);
  get(*cache, key_of(2 * 128), /*pin=*/true);
  get(*cache, key_of(3 * 128));  // as prepare would
  EXPECT_TRUE(present(*cache, key_of(3 * 128)));
  std::shared_ptr<const Plan> captured;
  EXPECT_EQ(cache->acquire(key_of(3 * 128), 1, /*may_build=*/false, /*pin=*/true, &captured), ZYFA_STATUS_SUCCESS);
  get(*cache, key_of(4 * 128));
  EXPECT_TRUE(present(*cache, key_of(4 * 128)));
  const zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.entries, 4u);
  EXPECT_EQ(s.evictions, 0u);
}

TEST_F(PlanCacheTest, CapacityBoundsDeviceBytes) {
  constexpr uint64_t kCapacity = 4;
  auto cache = make_cache(kCapacity);
  std::mt19937 random(20261129);
  std::uniform_int_distribution<int64_t> seqlen(1, 20000), batch(1, 4);
  std::vector<PlanKey> recent;  // newest last
  uint64_t largest = 0;
  for (int i = 0; i < 40; ++i) {
    const PlanKey key = key_of(seqlen(random), batch(random));
    get(*cache, key);
    recent.erase(std::remove(recent.begin(), recent.end(), key), recent.end());
    recent.push_back(key);
    if (recent.size() > kCapacity) recent.erase(recent.begin());
    largest = std::max(largest, table_bytes(key));
    const zyfa_plan_cache_stats s = stats_of(*cache);
    uint64_t expected = 0;
    for (const PlanKey &k : recent) expected += table_bytes(k);
    ASSERT_LE(s.entries, kCapacity);
    ASSERT_LE(s.device_bytes, kCapacity * largest);
    ASSERT_EQ(s.device_bytes, expected);
    ASSERT_EQ(int64_t(s.device_bytes), ledger->bytes_live());
  }
  // Shrinking evicts at once; the tables are freed by the next call.
  ASSERT_EQ(cache->set_capacity(1), ZYFA_STATUS_SUCCESS);
  cache->release_finished();
  const zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.capacity, 1u);
  EXPECT_EQ(s.device_bytes, table_bytes(recent.back()));
}

TEST_F(PlanCacheTest, CapacityBelowOneIsRefused) {
  auto cache = make_cache(5);
  clear_error();
  EXPECT_EQ(cache->set_capacity(0), ZYFA_STATUS_BAD_ARGUMENT);
  EXPECT_NE(std::string(last_error()).find("capacity = 0"), std::string::npos) << last_error();
  EXPECT_EQ(stats_of(*cache).capacity, 5u);
}

TEST_F(PlanCacheTest, MissingPlanUnderCaptureIsNotPrepared) {
  auto cache = make_cache(4);
  const PlanKey key = key_of(1000);
  std::shared_ptr<const Plan> plan;
  clear_error();
  EXPECT_EQ(cache->acquire(key, 1, /*may_build=*/false, /*pin=*/true, &plan), ZYFA_STATUS_NOT_PREPARED);
  EXPECT_FALSE(plan);
  EXPECT_NE(std::string(last_error()).find("zyfa_attn_prepare"), std::string::npos) << last_error();
  EXPECT_NE(std::string(last_error()).find("captur"), std::string::npos) << last_error();
  EXPECT_EQ(ledger->count_uploads(), 0);
  // After prepare (a build outside capture) the captured lookup finds it.
  get(*cache, key);
  EXPECT_EQ(cache->acquire(key, 1, /*may_build=*/false, /*pin=*/true, &plan), ZYFA_STATUS_SUCCESS);
  EXPECT_TRUE(plan);
  const zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(ledger->count_uploads(), 1);
}

// An upload's own status reaches the caller (a CUDA error is not reported as memory), with its message after
// the cache's.
TEST_F(PlanCacheTest, FailedUploadPassesItsStatusOnAndLeavesNothing) {
  for (const zyfa_status failure : {ZYFA_STATUS_OUT_OF_MEMORY, ZYFA_STATUS_CUDA_ERROR}) {
    SCOPED_TRACE(zyfa_status_string(failure));
    auto cache = make_cache(4);
    const PlanKey key = key_of(1000);
    ledger->upload_failure = failure;
    std::shared_ptr<const Plan> plan;
    clear_error();
    EXPECT_EQ(cache->acquire(key, 1, true, false, &plan), failure);
    EXPECT_FALSE(plan);
    const std::string message = last_error();
    EXPECT_NE(message.find("could not upload the job table"), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("the fake's upload fails with ") + zyfa_status_string(failure)),
              std::string::npos) << message;
    zyfa_plan_cache_stats s = stats_of(*cache);
    EXPECT_EQ(s.entries, 0u);
    EXPECT_EQ(s.device_bytes, 0u);
    ledger->upload_failure = ZYFA_STATUS_SUCCESS;
    EXPECT_TRUE(get(*cache, key));
    EXPECT_EQ(stats_of(*cache).entries, 1u);
  }
}

TEST_F(PlanCacheTest, ShapesBeyondInt32AreAStatusNotAnUpload) {
  auto cache = make_cache(4);
  std::shared_ptr<const Plan> plan;
  EXPECT_EQ(cache->acquire(key_of(128, int64_t(1) << 31, 1, 1), 1, true, false, &plan),
            ZYFA_STATUS_SIZE_OVERFLOW);
  EXPECT_FALSE(plan);
  // Jobs of two heads: 2^17 batches * 32 head pairs * 512 tile pairs = 2^31 jobs. The message names the
  // caller's nheads, not the table's 32.
  EXPECT_EQ(cache->acquire(key_of(int64_t(1) << 17, int64_t(1) << 17, 64, 8), GridShape{1, 2}, true, false, &plan),
            ZYFA_STATUS_SIZE_OVERFLOW);
  EXPECT_NE(std::string(last_error()).find("desc->nheads = 64 in jobs of 2 query heads"), std::string::npos)
      << last_error();
  EXPECT_FALSE(plan);
  EXPECT_EQ(ledger->count_uploads(), 0);
  EXPECT_EQ(cache->acquire(key_of(128), 0, true, false, &plan), ZYFA_STATUS_INTERNAL) << "0 CTAs per SM";
  ledger->multiprocessors = 0;
  EXPECT_EQ(cache->acquire(key_of(128), 1, true, false, &plan), ZYFA_STATUS_CUDA_ERROR);
  EXPECT_EQ(ledger->count_uploads(), 0);
}

TEST_F(PlanCacheTest, StatsHonourStructSize) {
  auto cache = make_cache(7);
  get(*cache, key_of(129));
  get(*cache, key_of(129));
  EXPECT_EQ(cache->stats(nullptr), ZYFA_STATUS_NULL_ARGUMENT);
  for (size_t size : {size_t(0), sizeof(zyfa_plan_cache_stats) - 8, sizeof(zyfa_plan_cache_stats) + 8}) {
    zyfa_plan_cache_stats s;
    std::memset(&s, 0xAB, sizeof s);
    s.struct_size = size;
    clear_error();
    EXPECT_EQ(cache->stats(&s), ZYFA_STATUS_BAD_STRUCT_SIZE) << size;
    EXPECT_NE(std::string(last_error()).find(std::to_string(size)), std::string::npos) << last_error();
    EXPECT_EQ(s.hits, 0xABABABABABABABABull) << "nothing written on failure";
  }
  zyfa_plan_cache_stats s;
  std::memset(&s, 0xAB, sizeof s);  // poison: every field must be written
  s.struct_size = sizeof s;
  ASSERT_EQ(cache->stats(&s), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(s.struct_size, sizeof s);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.capacity, 7u);
  EXPECT_EQ(s.device_bytes, table_bytes(key_of(129)));
}

// The job table names (batch, head, tile), never an address: a shape prepared in one layout is found by a
// call in another, as a graph captured after zyfa_attn_prepare needs.
TEST_F(PlanCacheTest, OneShapeInAnyLayoutSharesOnePlan) {
  auto cache = make_cache(4);
  zyfa_attn_desc desc = ZYFA_ATTN_DESC_INIT;
  desc.batch = 2;
  desc.seqlen = 300;
  desc.nheads = 8;
  desc.nheads_k = 2;
  // BHSD-ordered strides with a gap between heads, spelled out as STRIDED.
  const int64_t row = 128, head = 320 * row, batch_q = 8 * head, batch_kv = 2 * head;
  desc.q_strides = desc.out_strides = zyfa_strides{batch_q, row, head};
  desc.k_strides = desc.v_strides = zyfa_strides{batch_kv, row, head};
  std::vector<PlanKey> keys;
  for (zyfa_layout layout : {ZYFA_LAYOUT_BSHD, ZYFA_LAYOUT_STRIDED, ZYFA_LAYOUT_BHSD}) {
    desc.layout = layout;
    Problem problem;
    ASSERT_EQ(validate_attention(&desc, PointerCheck::kOptional, &problem), ZYFA_STATUS_SUCCESS) << last_error();
    keys.push_back(plan_key_of(problem, /*device=*/0, /*context=*/1));
  }
  const std::shared_ptr<const Plan> prepared = get(*cache, keys[0]);  // zyfa_attn_prepare with BSHD
  for (size_t i = 1; i < keys.size(); ++i) {
    SCOPED_TRACE("layout " + std::to_string(i));
    std::shared_ptr<const Plan> captured;  // a captured call in another layout: no build allowed
    ASSERT_EQ(cache->acquire(keys[i], 1, /*may_build=*/false, /*pin=*/true, &captured), ZYFA_STATUS_SUCCESS)
        << last_error();
    EXPECT_EQ(captured.get(), prepared.get());
  }
  const zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(ledger->count_uploads(), 1);
}

// A table lives in the context it was allocated in; another context of the same device cannot read it.
TEST_F(PlanCacheTest, EachContextOfADeviceGetsItsOwnPlan) {
  auto cache = make_cache(4);
  PlanKey first = key_of(300), second = key_of(300);
  first.context_id = 7;
  second.context_id = 8;
  EXPECT_FALSE(first == second);
  const std::shared_ptr<const Plan> a = get(*cache, first);
  EXPECT_FALSE(present(*cache, second)) << "a plan of one context was found for another";
  const std::shared_ptr<const Plan> b = get(*cache, second);
  EXPECT_NE(a->schedule.jobs, b->schedule.jobs);
  EXPECT_EQ(get(*cache, first).get(), a.get());
  EXPECT_EQ(ledger->count_uploads(), 2);
}

// ---------------------------------------------------------------- concurrency (run under TSan in CI)

constexpr int kThreads = 16;

// Starts every thread's body at once, so lookups of one key really race.
void run_together(const std::function<void(int)> &body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      body(t);
    });
  }
  for (std::thread &thread : threads) thread.join();
}

TEST_F(PlanCacheTest, ConcurrentLookupsShareOneTablePerKey) {
  constexpr int kKeys = 8, kRounds = 50;
  auto cache = make_cache(kKeys);
  std::vector<PlanKey> keys;
  for (int k = 0; k < kKeys; ++k) keys.push_back(key_of(100 + 300 * k, 1 + k % 3));
  std::vector<std::vector<const Plan *>> seen(kThreads, std::vector<const Plan *>(kKeys, nullptr));
  std::atomic<int> mismatches{0};
  run_together([&](int t) {
    std::mt19937 random{uint32_t(t)};
    for (int r = 0; r < kRounds; ++r) {
      for (int i = 0; i < kKeys; ++i) {
        const int k = (i + t) % kKeys;  // threads start on different keys, then collide
        std::shared_ptr<const Plan> plan;
        if (cache->acquire(keys[k], 1, true, false, &plan) != ZYFA_STATUS_SUCCESS) {
          ++mismatches;
          continue;
        }
        if (seen[t][k] == nullptr) seen[t][k] = plan.get();
        if (seen[t][k] != plan.get()) ++mismatches;
        // Read the table another thread uploaded: TSan checks the publication through the mutex.
        const Job last = plan->schedule.jobs[plan->schedule.n_jobs - 1];
        if (last.batch != keys[k].batch - 1 || last.head != keys[k].nheads - 1) ++mismatches;
      }
      if (random() % 8 == 0) stats_of(*cache);
    }
  });
  EXPECT_EQ(mismatches.load(), 0);
  for (int k = 0; k < kKeys; ++k) {
    for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t][k], seen[0][k]) << "key " << k << " thread " << t;
  }
  const zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.misses, uint64_t(kKeys));
  EXPECT_EQ(s.hits + s.misses, uint64_t(kThreads) * kRounds * kKeys);
  EXPECT_EQ(s.entries, uint64_t(kKeys));
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(ledger->count_uploads(), kKeys);
}

// A build takes an upload and a stream synchronization: while one thread builds a plan, other shapes' calls
// (a hit and another build) go on, and a call of the same shape waits for that plan instead of building its own.
TEST_F(PlanCacheTest, ABuildHoldsUpOnlyCallsOfItsOwnShape) {
  auto cache = make_cache(8);
  const PlanKey slow = key_of(4096, 1, 8, 2), cached = key_of(1000), fresh = key_of(2000, 2);
  const std::shared_ptr<const Plan> cached_plan = get(*cache, cached);
  ledger->hold_next_upload = true;
  std::shared_ptr<const Plan> slow_plan, waiter_plan;
  std::thread builder([&] { slow_plan = get(*cache, slow); });
  while (ledger->uploads_held.load() == 0) std::this_thread::yield();
  // Run while the slow build waits: if the cache held its lock through the build they could not return, so
  // they run on a thread of their own and the test gives them 10 s before it fails (and lets the build go).
  std::atomic<bool> others_done{false};
  std::thread others([&] {
    EXPECT_EQ(get(*cache, cached).get(), cached_plan.get());
    EXPECT_TRUE(get(*cache, fresh));
    others_done = true;
  });
  for (int i = 0; i < 10000 && !others_done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(others_done.load()) << "a hit and another shape's build waited for a build of their own";
  std::thread waiter([&] { waiter_plan = get(*cache, slow); });  // the same shape: waits for the build
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ledger->release_upload();
  builder.join();
  others.join();
  waiter.join();
  ASSERT_TRUE(slow_plan);
  EXPECT_EQ(waiter_plan.get(), slow_plan.get()) << "the waiting call took the plan the first one built";
  EXPECT_EQ(ledger->count_uploads(), 3) << "one upload per shape";
  const zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.misses, 3u);
  EXPECT_EQ(s.hits, 2u);
}

// A build that throws (the API's guard turns it into a status) leaves no mark behind: the next call of the
// shape builds it instead of waiting for a build that ended.
TEST_F(PlanCacheTest, ABuildThatThrowsLeavesTheShapeBuildable) {
  auto cache = make_cache(4);
  const PlanKey key = key_of(3000, 1, 4, 2);
  ledger->throw_next_upload = true;
  std::shared_ptr<const Plan> plan;
  EXPECT_THROW(cache->acquire(key, 1, /*may_build=*/true, /*pin=*/false, &plan), std::bad_alloc);
  std::atomic<bool> done{false};
  std::thread retry([&] {
    plan = get(*cache, key);
    done = true;
  });
  for (int i = 0; i < 10000 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(done.load()) << "the next call of the shape waits for the build that threw";
  retry.join();
  EXPECT_TRUE(plan);
  EXPECT_EQ(ledger->count_uploads(), 1);
}

TEST_F(PlanCacheTest, ConcurrentLookupsWithEvictionKeepCountsConsistent) {
  constexpr int kKeys = 12, kRounds = 40;
  constexpr uint64_t kCapacity = 3;
  auto cache = make_cache(kCapacity);
  std::vector<PlanKey> keys;
  for (int k = 0; k < kKeys; ++k) keys.push_back(key_of(64 + 250 * k));
  std::vector<std::vector<Job>> tables;
  for (const PlanKey &key : keys) tables.push_back(table_of(key));
  const auto same = [](const Job &a, const Job &b) {
    return a.batch == b.batch && a.head == b.head && a.tile_first == b.tile_first && a.tile_second == b.tile_second;
  };
  std::atomic<int> failures{0};
  run_together([&](int t) {
    std::mt19937 random{uint32_t(1000 + t)};
    std::shared_ptr<const Plan> held;  // kept across lookups, so this thread drops evicted plans later
    void *const stream = stream_id(t);
    for (int r = 0; r < kRounds * kKeys; ++r) {
      const int k = int(random() % kKeys);
      const bool pin = t == 0 && r == 0;  // one pinned plan, as if captured
      std::shared_ptr<const Plan> plan;
      if (cache->acquire(keys[k], 1, true, pin, &plan) != ZYFA_STATUS_SUCCESS) {
        ++failures;
        continue;
      }
      const Job first = plan->schedule.jobs[0];
      const Job last = plan->schedule.jobs[plan->schedule.n_jobs - 1];
      if (!same(first, tables[size_t(k)].front()) || !same(last, tables[size_t(k)].back())) ++failures;
      // The launch, as run_attention queues it; the fake checks that no table is freed under it.
      ledger->launched(stream, plan->schedule.jobs);
      cache->record_launch(*plan, stream);
      if (random() % 3 == 0) ledger->finish(stream);  // the thread waits for its stream
      cache->release_finished();
      if (random() % 4 == 0) held = plan;
      if (random() % 64 == 0) stats_of(*cache);
      if (t == 1 && r % 97 == 0 && cache->set_capacity(kCapacity + r % 2) != ZYFA_STATUS_SUCCESS) ++failures;
    }
  });
  EXPECT_EQ(failures.load(), 0);
  ledger->finish();
  cache->release_finished();
  EXPECT_EQ(cache->deferred_tables(), 0u);
  zyfa_plan_cache_stats s = stats_of(*cache);
  EXPECT_EQ(s.hits + s.misses, uint64_t(kThreads) * kRounds * kKeys);
  EXPECT_EQ(int64_t(s.misses), ledger->count_uploads());
  EXPECT_EQ(s.evictions, s.misses - s.entries);
  EXPECT_LE(s.entries, s.capacity + 1);  // the one pinned plan is held beside the capacity
  EXPECT_GT(s.evictions, 0u);
  EXPECT_EQ(ledger->count_releases(), ledger->count_uploads() - int64_t(s.entries));
  EXPECT_EQ(int64_t(s.device_bytes), ledger->bytes_live());
  EXPECT_LE(ledger->count_events(), int64_t(s.entries) * kThreads) << "one event per stream and plan at most";
  ASSERT_EQ(cache->clear(), ZYFA_STATUS_SUCCESS);
  s = stats_of(*cache);
  EXPECT_EQ(s.device_bytes, 0u);
  EXPECT_EQ(ledger->count_releases(), ledger->count_uploads());
  EXPECT_EQ(ledger->count_events(), 0);
}

}  // namespace
}  // namespace zyfa
