// Fuzzes the plan cache's host logic (src/host/plan_cache.cpp) against a model: a sequence of lookups
// (with and without building, pinned or not), capacity changes, clears, releases of held plans and
// injected upload failures, over a small key space, on a cache whose "device memory" is host memory.
// After every step the statistics must equal the model's (hits, misses, evictions, entries), device_bytes
// the bytes of tables not yet released, and a returned plan's table the job table of its key. ASan sees
// any use of a released table; at the end every table must have been released exactly once.
#include <algorithm>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "fuzz_common.hpp"
#include "fuzz_targets.hpp"
#include "host/cta_balance.hpp"
#include "host/error.hpp"
#include "host/plan_cache.hpp"

namespace zyfa::fuzz {
namespace {

constexpr int kMaxSteps = 64;
constexpr int kMaxHeld = 8;

// What the fake device memory did, kept by the harness: the memory object itself dies with the last plan.
struct Ledger {
  bool fail_next_upload = false;
  int sms = 132;
  std::map<void *, size_t> live;  // tables uploaded and not yet released
  std::set<void *> events;        // events created and not yet destroyed (every launch has finished)
  int64_t uploads = 0, releases = 0;

  uint64_t live_bytes() const {
    uint64_t total = 0;
    for (const auto &entry : live) total += entry.second;
    return total;
  }
};

// What a failed upload of the fake reports: a CUDA error, which the cache must pass on as it is.
constexpr zyfa_status kUploadFailure = ZYFA_STATUS_CUDA_ERROR;

// Host memory standing in for the device: every upload is its own exact block, so a read of a released
// table is a heap-use-after-free.
class FakeDeviceMemory final : public DeviceMemory {
 public:
  explicit FakeDeviceMemory(Ledger *ledger) : ledger_(ledger) {}
  zyfa_status upload(const Place &, const void *host, size_t bytes, void **table) override {
    if (ledger_->fail_next_upload) {
      ledger_->fail_next_upload = false;
      return fail(kUploadFailure, "the fake's upload fails");  // a failed upload records its message
    }
    void *p = ::operator new(bytes == 0 ? 1 : bytes);
    std::memcpy(p, host, bytes);
    ledger_->live[p] = bytes;
    ++ledger_->uploads;
    *table = p;
    return ZYFA_STATUS_SUCCESS;
  }
  void release(const Place &, void *ptr) override {
    auto it = ledger_->live.find(ptr);
    require(it != ledger_->live.end(), "plan cache", "released a table that is not live (double release?)");
    ledger_->live.erase(it);
    ::operator delete(ptr);
    ++ledger_->releases;
  }
  int multiprocessor_count(int) override { return ledger_->sms; }
  bool record_event(const Place &, void *, void **event) override {
    if (*event == nullptr) {
      *event = ::operator new(1);
      ledger_->events.insert(*event);
    }
    return true;
  }
  bool event_finished(const Place &, void *event) override {
    require(ledger_->events.count(event) == 1, "plan cache", "queried an event that is not live");
    return true;
  }
  void destroy_event(const Place &, void *event) override {
    require(ledger_->events.erase(event) == 1, "plan cache", "destroyed an event that is not live");
    ::operator delete(event);
  }

 private:
  Ledger *ledger_;
};

// The cache as the header documents it: LRU over unpinned plans, pinned plans never evicted.
struct Model {
  // device and context, dtype, b, h, hk, s, ctas, tile rows
  using Key = std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, int, int>;
  std::list<Key> lru;  // most recent first
  std::set<Key> pinned;
  uint64_t capacity = 0, hits = 0, misses = 0, evictions = 0;
  std::map<Key, int> built_sms;  // the SM count each cached plan's grid was sized with

  bool cached(const Key &k) const { return pinned.count(k) || std::find(lru.begin(), lru.end(), k) != lru.end(); }
  void evict() {  // the capacity bounds the unpinned plans; pinned ones are held beside it
    while (lru.size() > capacity) {
      lru.pop_back();
      ++evictions;
    }
  }
};

// The three-consumer FP8 kernels' tiles: 192 rows, shifted (the balance counts them where they lie).
constexpr int kThreeConsumerRows = 192;

PlanKey pick_key(FuzzedDataProvider &in, int *ctas, int *tile_rows) {
  PlanKey k;
  k.device = in.ConsumeIntegralInRange<int>(0, 1);
  k.context_id = in.ConsumeIntegralInRange<uint64_t>(1, 2);  // two contexts of a device: two plans
  k.dtype = in.ConsumeBool() ? ZYFA_DTYPE_BF16 : ZYFA_DTYPE_FP8_E4M3;
  k.d_qk = in.ConsumeBool() ? 128 : 192;
  k.d_v = 128;
  k.batch = in.ConsumeIntegralInRange<int64_t>(1, 3);
  k.nheads_k = in.ConsumeIntegralInRange<int64_t>(1, 2);
  k.nheads = k.nheads_k * in.ConsumeIntegralInRange<int64_t>(1, 2);
  const int64_t kSeqlens[] = {1, 127, 128, 129, 1000, 4096};
  k.seqlen = kSeqlens[in.ConsumeIntegralInRange<int>(0, 5)];
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0) {
    // Beyond the kernels' int32 job index: refused before anything is allocated.
    k.batch = int64_t(1) << 20;
    k.nheads = k.nheads_k = int64_t(1) << 12;
  }
  *ctas = in.ConsumeIntegralInRange<int>(1, 3);
  *tile_rows = in.ConsumeBool() ? numerics::kQueryTile : kThreeConsumerRows;
  return k;
}

Model::Key model_key(const PlanKey &k, int ctas, int tile_rows) {
  // dtype, d_qk and the context do not change the table, but they are part of the cache's key: fold them in.
  return {k.device * 4 + int(k.context_id), int(k.dtype) * 1000 + int(k.d_qk), k.batch, k.nheads, k.nheads_k, k.seqlen,
          ctas, tile_rows};
}

void check_stats(const PlanCache &cache, const Model &model, const Ledger &memory) {
  zyfa_plan_cache_stats s = ZYFA_PLAN_CACHE_STATS_INIT;
  require(cache.stats(&s) == ZYFA_STATUS_SUCCESS, "plan cache", "stats failed");
  require(s.hits == model.hits, "plan cache", "hits differ from the model");
  require(s.misses == model.misses, "plan cache", "misses differ from the model");
  require(s.evictions == model.evictions, "plan cache", "evictions differ from the model");
  require(s.entries == model.lru.size() + model.pinned.size(), "plan cache", "entries differ from the model");
  require(s.capacity == model.capacity, "plan cache", "capacity differs");
  require(s.device_bytes == memory.live_bytes(), "plan cache", "device_bytes differs from the live tables");
}

// The plan's table must be the job table of its key with its tail balanced, and its grid min(SMs * ctas, jobs).
void check_plan(const Plan &plan, const PlanKey &k, int ctas, int tile_rows, int sms) {
  std::vector<Job> expected;
  require(build_job_table(k.batch, k.nheads, k.nheads_k, k.seqlen, &expected, kDefaultJobOrder, tile_rows) ==
              ZYFA_STATUS_SUCCESS,
          "harness", "build_job_table refused a key the cache accepted");
  balance_tail(&expected, std::min<int64_t>(int64_t(sms) * ctas, int64_t(expected.size())),
               query_tiling(k.seqlen, tile_rows));
  require(plan.schedule.n_jobs == int32_t(expected.size()), "plan cache", "job count differs from the table");
  require(std::memcmp(plan.schedule.jobs, expected.data(), expected.size() * sizeof(Job)) == 0, "plan cache",
          "uploaded table differs from the job table");
  require(plan.schedule.grid == int32_t(std::min<int64_t>(int64_t(sms) * ctas, int64_t(expected.size()))),
          "plan cache", "grid is not min(SMs * ctas_per_sm, jobs)");
}

}  // namespace

void fuzz_plan_cache(FuzzedDataProvider &in) {
  Ledger ledger;  // outlives the cache, the memory object and every plan
  Model model;
  model.capacity = in.ConsumeIntegralInRange<uint64_t>(1, 6);
  std::vector<std::shared_ptr<const Plan>> held;  // plans the "callers" still hold
  {
    PlanCache cache(std::make_unique<FakeDeviceMemory>(&ledger), model.capacity);
    for (int step = 0; step < kMaxSteps && in.remaining_bytes() > 0; ++step) {
      switch (in.ConsumeIntegralInRange<int>(0, 9)) {
        case 0: {
          const uint64_t capacity = in.ConsumeIntegralInRange<uint64_t>(0, 6);
          const zyfa_status s = cache.set_capacity(capacity);
          require((s == ZYFA_STATUS_SUCCESS) == (capacity >= 1), "plan cache", "set_capacity status");
          if (s == ZYFA_STATUS_SUCCESS) {
            model.capacity = capacity;
            model.evict();
          }
          break;
        }
        case 1:
          require(cache.clear() == ZYFA_STATUS_SUCCESS, "plan cache", "clear failed");
          model.lru.clear();
          model.pinned.clear();
          break;
        case 2:
          if (!held.empty()) held.erase(held.begin() + in.ConsumeIntegralInRange<size_t>(0, held.size() - 1));
          break;
        case 3: ledger.fail_next_upload = true; break;
        case 4: ledger.sms = in.ConsumeIntegralInRange<int>(0, 2) == 0 ? 0 : in.ConsumeIntegralInRange<int>(1, 200); break;
        default: {
          int ctas = 1, tile_rows = numerics::kQueryTile;
          const PlanKey key = pick_key(in, &ctas, &tile_rows);
          const bool may_build = in.ConsumeIntegralInRange<int>(0, 7) != 0;
          const bool pin = in.ConsumeIntegralInRange<int>(0, 5) == 0;
          const Model::Key mk = model_key(key, ctas, tile_rows);
          const bool was_cached = model.cached(mk);
          const bool was_pinned = model.pinned.count(mk) > 0;
          const bool upload_fails = ledger.fail_next_upload;
          std::shared_ptr<const Plan> plan;
          clear_error();  // as every entry point does before it reaches the cache
          const zyfa_status s = cache.acquire(key, GridShape{ctas, 1, 0, tile_rows}, may_build, pin, &plan);
          check_status_contract(s, "PlanCache::acquire");
          if (was_cached) {
            ++model.hits;
            require(s == ZYFA_STATUS_SUCCESS, "plan cache", "a cached plan was not returned");
            if (!was_pinned) {
              model.lru.remove(mk);
              if (pin) model.pinned.insert(mk);
              else model.lru.push_front(mk);
            }
          } else {
            ++model.misses;
            std::vector<Job> table;
            const zyfa_status table_status =
                build_job_table(key.batch, key.nheads, key.nheads_k, key.seqlen, &table, kDefaultJobOrder, tile_rows);
            zyfa_status expected = ZYFA_STATUS_SUCCESS;
            if (!may_build) expected = ZYFA_STATUS_NOT_PREPARED;
            else if (table_status != ZYFA_STATUS_SUCCESS) expected = table_status;
            else if (ledger.sms < 1) expected = ZYFA_STATUS_CUDA_ERROR;
            else if (upload_fails) expected = kUploadFailure;
            require(s == expected, "plan cache", "acquire status differs from the model");
            if (s == ZYFA_STATUS_SUCCESS) {
              if (pin) model.pinned.insert(mk);
              else model.lru.push_front(mk);
              model.built_sms[mk] = ledger.sms;
              model.evict();
            }
          }
          require((s == ZYFA_STATUS_SUCCESS) == (plan != nullptr), "plan cache", "plan set exactly on success");
          if (plan) {
            check_plan(*plan, key, ctas, tile_rows, model.built_sms[mk]);
            if (may_build) {
              // A launch outside capture, as run_attention makes it, on one of three streams.
              cache.record_launch(*plan, reinterpret_cast<void *>(uintptr_t(0x100 + 0x10 * (step % 3))));
              cache.release_finished();
            }
            if (int(held.size()) < kMaxHeld && in.ConsumeBool()) held.push_back(plan);
          }
          break;
        }
      }
      check_stats(cache, model, ledger);
    }
  }
  // The cache is gone; only tables that callers still hold may be live.
  require(int64_t(ledger.live.size()) <= int64_t(held.size()), "plan cache",
          "the destroyed cache left tables no caller holds");
  held.clear();
  require(ledger.live.empty(), "plan cache", "a table was never released");
  require(ledger.releases == ledger.uploads, "plan cache", "uploads and releases differ");
  require(ledger.events.empty(), "plan cache", "an event was never destroyed");
}

}  // namespace zyfa::fuzz
