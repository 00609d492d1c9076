// The plan cache: pair-balanced job tables, built on the host and uploaded once per key, kept in least
// recently used order under one mutex.
#include "host/plan_cache.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <list>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "asmgen/fp8_kernel_params.h"
#include "host/cta_balance.hpp"
#include "host/cuda_api.hpp"
#include "host/error.hpp"
#include "kernels/numerics.h"

namespace zyfa {

bool PlanKey::operator==(const PlanKey &o) const {
  return device == o.device && dtype == o.dtype && d_qk == o.d_qk && d_v == o.d_v && batch == o.batch &&
         nheads == o.nheads && nheads_k == o.nheads_k && seqlen == o.seqlen && context_id == o.context_id;
}

PlanKey plan_key_of(const Problem &problem, int device, uint64_t context_id) {
  return PlanKey{device,         problem.dtype,    problem.d_qk,   problem.d_v, problem.batch,
                 problem.nheads, problem.nheads_k, problem.seqlen, context_id};
}

// ---------------------------------------------------------------- the job table

namespace {

// The kernels index tiles with int32 too (Job's fields); jobs are bounded by kMaxJobs (kernels/job.h).
constexpr int64_t kMaxTileIndex = INT32_MAX;

Job make_job(int64_t b, int64_t head, int64_t pair, int64_t tiles) {
  const int64_t partner = tiles - 1 - pair;
  return Job{int32_t(b), int32_t(head), int32_t(pair), partner == pair ? kNoTile : int32_t(partner)};
}

}  // namespace

QueryTiling query_tiling(int64_t seqlen, int64_t tile_rows) {
  return QueryTiling{seqlen, tile_rows, asmgen::fp8_query_tile_shift(seqlen, tile_rows)};
}

zyfa_status build_job_table(int64_t batch, int64_t nheads, int64_t nheads_k, int64_t seqlen,
                            std::vector<Job> *table, JobOrder order, int64_t tile_rows) {
  if (batch < 1 || nheads < 1 || nheads_k < 1 || seqlen < 1) {
    return fail(ZYFA_STATUS_BAD_SHAPE,
                "job table: batch = %lld, nheads = %lld, nheads_k = %lld, seqlen = %lld: each must be >= 1",
                (long long)batch, (long long)nheads, (long long)nheads_k, (long long)seqlen);
  }
  if (nheads % nheads_k != 0) {
    return fail(ZYFA_STATUS_BAD_HEAD_RATIO, "job table: nheads = %lld is not a multiple of nheads_k = %lld",
                (long long)nheads, (long long)nheads_k);
  }
  if (order != JobOrder::kHeadThenPair && order != JobOrder::kPairThenHead) {
    return fail(ZYFA_STATUS_BAD_ARGUMENT, "job table: order = %d is not a JobOrder", int(order));
  }
  if (tile_rows < 1) {
    return fail(ZYFA_STATUS_BAD_ARGUMENT, "job table: tile_rows = %lld: a tile holds >= 1 query row",
                (long long)tile_rows);
  }
  const int64_t tiles = (seqlen - 1) / tile_rows + 1;  // no overflow near INT64_MAX
  const int64_t pairs = tiles / 2 + tiles % 2;                    // the middle tile of an odd T counts as one
  int64_t heads_total = 0, n_jobs = 0;
  if (tiles > kMaxTileIndex || __builtin_mul_overflow(batch, nheads, &heads_total) ||
      __builtin_mul_overflow(heads_total, pairs, &n_jobs) || n_jobs > kMaxJobs) {
    return fail(ZYFA_STATUS_SIZE_OVERFLOW,
                "job table: batch = %lld, nheads = %lld, seqlen = %lld need %lld query tiles per head and "
                "batch * nheads * %lld jobs: more than the kernels' int32 job index allows (%lld jobs)",
                (long long)batch, (long long)nheads, (long long)seqlen, (long long)tiles, (long long)pairs,
                (long long)kMaxJobs);
  }
  try {
    table->clear();
    table->reserve(size_t(n_jobs));
  } catch (const std::bad_alloc &) {
    return fail(ZYFA_STATUS_OUT_OF_MEMORY, "job table: no host memory for %lld jobs", (long long)n_jobs);
  }
  // batch and kv head outermost in every order; the two inner loops swap roles with the order.
  const int64_t group = nheads / nheads_k;
  const bool head_outer = order == JobOrder::kHeadThenPair;
  const int64_t outer_count = head_outer ? group : pairs;
  const int64_t inner_count = head_outer ? pairs : group;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t hk = 0; hk < nheads_k; ++hk) {
      for (int64_t outer = 0; outer < outer_count; ++outer) {
        for (int64_t inner = 0; inner < inner_count; ++inner) {
          const int64_t g = head_outer ? outer : inner;
          const int64_t pair = head_outer ? inner : outer;
          table->push_back(make_job(b, hk * group + g, pair, tiles));  // query head hk*G+g reads kv head hk
        }
      }
    }
  }
  return ZYFA_STATUS_SUCCESS;
}

// ---------------------------------------------------------------- the cache

namespace {

// The grid depends on the kernel's CTAs per SM, so two kernels of one shape get two plans.
struct CacheKey {
  PlanKey plan;
  int ctas_per_sm = 0;
  int heads_per_job = 1;
  int max_walkers = 0;
  int tile_rows = 0;
  bool operator==(const CacheKey &o) const {
    return plan == o.plan && ctas_per_sm == o.ctas_per_sm && heads_per_job == o.heads_per_job &&
           max_walkers == o.max_walkers && tile_rows == o.tile_rows;
  }
};

struct CacheKeyHash {
  size_t operator()(const CacheKey &k) const {
    const int64_t fields[] = {k.plan.device, int64_t(k.plan.dtype), k.plan.d_qk,    k.plan.d_v,
                              k.plan.batch,  k.plan.nheads,         k.plan.nheads_k, k.plan.seqlen,
                              int64_t(k.plan.context_id), k.ctas_per_sm, k.heads_per_job, k.max_walkers,
                              k.tile_rows};
    size_t h = 0;
    for (int64_t f : fields) {
      // The boost::hash_combine recipe (golden-ratio constant): cheap and spreads small integers.
      h ^= std::hash<int64_t>{}(f) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return h;
  }
};

// The event of the last launch on one stream that read a plan's table.
struct StreamUse {
  void *stream = nullptr;
  void *event = nullptr;
};

// A plan as the cache allocates it: the table's owner, and what tells when the GPU is done with it.
struct TrackedPlan final : Plan {
  Place place;  // the table's, and its events'
  uint64_t bytes = 0;
  mutable std::mutex mutex;                // guards uses and untracked
  mutable std::vector<StreamUse> uses;     // one per stream with a launch that may still be running
  mutable bool untracked = false;          // an event could not be recorded: only clear() frees the table
  TrackedPlan *next_deferred = nullptr;    // the deferred list's link (Backing::deferred_mutex)
};

// The device memory, the bytes it holds and the deferred tables, shared with every plan's deleter: a plan
// that a caller holds past its eviction, or past the cache itself, still reaches the list.
struct Backing {
  std::unique_ptr<DeviceMemory> memory;
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> deferred_count{0};
  std::mutex deferred_mutex;           // guards deferred
  TrackedPlan *deferred = nullptr;     // plans no caller holds, their tables not yet freed
  std::mutex collect_mutex;            // one thread frees at a time; the others leave it to a later call

  ~Backing() { free_deferred(/*all=*/true); }

  // The deleter of every plan: no CUDA call (it may run in any thread, under any lock), only a link.
  void defer(TrackedPlan *plan) noexcept {
    std::lock_guard<std::mutex> lock(deferred_mutex);
    plan->next_deferred = deferred;
    deferred = plan;
    deferred_count.fetch_add(1);
  }

  bool launches_finished(const TrackedPlan &plan) {
    std::lock_guard<std::mutex> lock(plan.mutex);
    if (plan.untracked) return false;
    for (const StreamUse &use : plan.uses)
      if (!memory->event_finished(plan.place, use.event)) return false;
    return true;
  }

  void free_now(TrackedPlan *plan) {
    for (const StreamUse &use : plan->uses) memory->destroy_event(plan->place, use.event);
    memory->release(plan->place, const_cast<Job *>(plan->schedule.jobs));
    bytes.fetch_sub(plan->bytes);
    deferred_count.fetch_sub(1);
    delete plan;
  }

  // Frees the deferred tables whose launches have finished, or every one with `all`. The list is taken
  // whole, so the events are queried and the tables freed without holding deferred_mutex (a free may
  // wait for the device); what is still running goes back.
  void free_deferred(bool all) {
    if (!all && deferred_count.load() == 0) return;  // the common case of a call: nothing to look at
    std::unique_lock<std::mutex> collecting(collect_mutex, std::defer_lock);
    if (all) {
      collecting.lock();
    } else if (!collecting.try_lock()) {
      return;  // another thread is freeing: this one's tables wait for a later call
    }
    TrackedPlan *list = nullptr;
    {
      std::lock_guard<std::mutex> lock(deferred_mutex);
      std::swap(list, deferred);
    }
    TrackedPlan *running = nullptr, *running_tail = nullptr;
    while (list != nullptr) {
      TrackedPlan *plan = list;
      list = plan->next_deferred;
      if (all || launches_finished(*plan)) {
        free_now(plan);
        continue;
      }
      plan->next_deferred = running;
      running = plan;
      if (running_tail == nullptr) running_tail = plan;
    }
    if (running != nullptr) {
      std::lock_guard<std::mutex> lock(deferred_mutex);
      running_tail->next_deferred = deferred;
      deferred = running;
    }
  }
};

struct DeferTable {
  std::shared_ptr<Backing> backing;
  void operator()(const Plan *plan) const {
    // Every plan is a TrackedPlan built by PlanCache::Impl::build, and never const at its creation.
    backing->defer(const_cast<TrackedPlan *>(static_cast<const TrackedPlan *>(plan)));
  }
};

struct Entry {
  CacheKey key;
  std::shared_ptr<const Plan> plan;
};
using EntryList = std::list<Entry>;

struct Slot {
  EntryList::iterator entry;
  bool pinned = false;
};

}  // namespace

struct PlanCache::Impl {
  std::shared_ptr<Backing> backing = std::make_shared<Backing>();
  mutable std::mutex mutex;  // guards everything below
  uint64_t capacity = kDefaultCapacity;
  EntryList lru;     // unpinned plans, most recently used first
  EntryList pinned;  // plans a captured graph may hold: never evicted
  std::unordered_map<CacheKey, Slot, CacheKeyHash> index;
  // Keys whose plan a thread is building now, without the lock (an upload and a stream synchronization):
  // callers of other shapes go on meanwhile, callers of the same one wait on `build_done` for it.
  std::unordered_set<CacheKey, CacheKeyHash> building;
  std::condition_variable build_done;
  uint64_t hits = 0, misses = 0, evictions = 0;

  uint64_t entries() const { return lru.size() + pinned.size(); }

  // Moves least recently used plans into *out until the unpinned ones fit the capacity. Pinned plans are held
  // beside it (zyfa.h): counted against it, they would leave no room once as many shapes were captured, and
  // every new plan, a prepared one included, would be evicted as soon as it was built. The caller drops *out
  // after unlocking: the plans no caller holds join the deferred list, and their tables are freed by
  // release_finished once their launches have finished.
  void evict_over_capacity(EntryList *out) {
    while (lru.size() > capacity) {
      index.erase(lru.back().key);
      out->splice(out->end(), lru, std::prev(lru.end()));
      ++evictions;
    }
  }

  // Builds and uploads the plan for `key` into a one-entry list (so a failure leaves nothing behind).
  zyfa_status build(const CacheKey &key, EntryList *built) {
    std::vector<Job> table;
    const PlanKey &k = key.plan;
    // A job of heads_per_job heads is one entry of a table over nheads / heads_per_job "heads" per batch,
    // whose kv head is the same: entry head h stands for query heads h * heads_per_job + 0 .. heads_per_job - 1.
    if (k.nheads % (k.nheads_k * int64_t(key.heads_per_job)) != 0) {
      return fail(ZYFA_STATUS_INTERNAL, "plan cache: heads_per_job = %d does not divide the group of %lld heads",
                  key.heads_per_job, (long long)(k.nheads / k.nheads_k));
    }
    if (zyfa_status s = build_job_table(k.batch, k.nheads / key.heads_per_job, k.nheads_k, k.seqlen, &table,
                                        kDefaultJobOrder, key.tile_rows)) {
      if (key.heads_per_job == 1) return s;
      // The table's "nheads" counts jobs of heads_per_job heads: name the caller's value too.
      const std::string message = last_error();
      return fail(s, "%s (desc->nheads = %lld in jobs of %d query heads)", message.c_str(), (long long)k.nheads,
                  key.heads_per_job);
    }
    const int sms = backing->memory->multiprocessor_count(k.device);
    if (sms < 1) {
      return fail(ZYFA_STATUS_CUDA_ERROR, "plan cache: could not read the multiprocessor count of device %d",
                  k.device);
    }
    int64_t walkers = std::max<int64_t>(int64_t(sms) * key.ctas_per_sm / key.heads_per_job, 1);
    if (key.max_walkers > 0) walkers = std::min<int64_t>(walkers, key.max_walkers);
    const int64_t grid = std::min({walkers, int64_t(table.size()), kMaxPersistentGrid});
    try {
      balance_tail(&table, grid, query_tiling(k.seqlen, key.tile_rows));
    } catch (const std::bad_alloc &) {
      return fail(ZYFA_STATUS_OUT_OF_MEMORY, "plan cache: no host memory to balance %lld jobs over %lld CTAs",
                  (long long)table.size(), (long long)grid);
    }
    const int64_t n_jobs = int64_t(table.size());
    // Owned here until the shared_ptr below takes it: an upload that throws must not leak it.
    std::unique_ptr<TrackedPlan> plan(new (std::nothrow) TrackedPlan);
    if (plan == nullptr) return fail(ZYFA_STATUS_OUT_OF_MEMORY, "plan cache: no host memory for a plan");
    const uint64_t bytes = uint64_t(n_jobs) * sizeof(Job);
    const Place place{k.device, k.context_id};
    void *device_table = nullptr;
    if (const zyfa_status s = backing->memory->upload(place, table.data(), bytes, &device_table)) {
      const std::string why = last_error();
      return fail(s, "plan cache: could not upload the job table of %lld jobs (%llu bytes) to device %d: %s",
                  (long long)n_jobs, (unsigned long long)bytes, k.device, why.c_str());
    }
    backing->bytes.fetch_add(bytes);
    plan->place = place;
    plan->bytes = bytes;
    plan->schedule.jobs = static_cast<const Job *>(device_table);
    plan->schedule.n_jobs = int32_t(n_jobs);  // build_job_table and balance_tail bound it (kernels/job.h)
    plan->schedule.grid = int32_t(grid);
    plan->schedule.heads_per_job = key.heads_per_job;
    // From here the shared_ptr owns the table; if it cannot allocate its control block it defers it.
    std::shared_ptr<const Plan> owned(plan.release(), DeferTable{backing});
    built->push_back(Entry{key, std::move(owned)});
    return ZYFA_STATUS_SUCCESS;
  }
};

PlanCache::PlanCache(std::unique_ptr<DeviceMemory> memory, uint64_t capacity)
    : impl_(std::make_unique<Impl>()) {
  impl_->backing->memory = std::move(memory);
  impl_->capacity = capacity < 1 ? 1 : capacity;
}

// Frees what clear() frees; a plan a caller still holds is freed when it is dropped (the Backing outlives
// the cache).
PlanCache::~PlanCache() { clear(); }

PlanCache &PlanCache::global() {
  // Never destroyed: at exit the CUDA runtime may be unloaded before a static destructor could free the
  // tables, and the driver reclaims device memory with the process anyway. Initialization of a
  // function-local static is thread-safe.
  static PlanCache *const cache = new PlanCache(cuda::make_device_memory());
  return *cache;
}

zyfa_status PlanCache::acquire(const PlanKey &key, GridShape shape, bool may_build, bool pin,
                               std::shared_ptr<const Plan> *plan) {
  if (plan == nullptr) return fail(ZYFA_STATUS_INTERNAL, "plan cache: acquire without an output plan");
  if (shape.ctas_per_sm < 1) {
    return fail(ZYFA_STATUS_INTERNAL, "plan cache: ctas_per_sm = %d: a kernel must run >= 1 CTA per SM",
                shape.ctas_per_sm);
  }
  if (shape.heads_per_job < 1) {
    return fail(ZYFA_STATUS_INTERNAL, "plan cache: heads_per_job = %d: a job holds >= 1 query head",
                shape.heads_per_job);
  }
  if (shape.max_walkers < 0) {
    return fail(ZYFA_STATUS_INTERNAL, "plan cache: max_walkers = %d: 0 (no cap) or a count of walkers",
                shape.max_walkers);
  }
  if (shape.tile_rows < 1) {
    return fail(ZYFA_STATUS_INTERNAL, "plan cache: tile_rows = %d: a tile holds >= 1 query row", shape.tile_rows);
  }
  const CacheKey cache_key{key, shape.ctas_per_sm, shape.heads_per_job, shape.max_walkers, shape.tile_rows};
  EntryList evicted;  // declared before the lock: dropped after it is released
  std::unique_lock<std::mutex> lock(impl_->mutex);
  for (;;) {
    auto found = impl_->index.find(cache_key);
    if (found != impl_->index.end()) {
      ++impl_->hits;
      Slot &slot = found->second;
      if (!slot.pinned) {
        EntryList &destination = pin ? impl_->pinned : impl_->lru;
        destination.splice(destination.begin(), impl_->lru, slot.entry);
        slot.pinned = pin;
      }
      *plan = slot.entry->plan;
      return ZYFA_STATUS_SUCCESS;
    }
    if (impl_->building.count(cache_key) == 0) break;
    // Another thread builds this plan: take it when it is done (or, if that build failed, build ours).
    impl_->build_done.wait(lock);
  }
  ++impl_->misses;
  if (!may_build) {
    return fail(ZYFA_STATUS_NOT_PREPARED,
                "no plan for this shape (batch = %lld, nheads = %lld, nheads_k = %lld, seqlen = %lld) and "
                "the stream is being captured: call zyfa_attn_prepare with this descriptor before capturing",
                (long long)key.batch, (long long)key.nheads, (long long)key.nheads_k, (long long)key.seqlen);
  }
  impl_->building.insert(cache_key);
  // However the build ends (a status, or an exception such as bad_alloc on its way to the API's guard), the
  // key leaves `building` under the lock and the callers waiting for it wake: none waits forever.
  struct BuildingMark {
    Impl &impl;
    const CacheKey &key;
    std::unique_lock<std::mutex> &lock;
    ~BuildingMark() {
      if (!lock.owns_lock()) lock.lock();
      impl.building.erase(key);
      impl.build_done.notify_all();
    }
  } mark{*impl_, cache_key, lock};
  lock.unlock();
  EntryList built;
  const zyfa_status status = impl_->build(cache_key, &built);
  lock.lock();
  if (status != ZYFA_STATUS_SUCCESS) return status;
  impl_->index.emplace(cache_key, Slot{built.begin(), pin});  // iterators stay valid across the splice
  EntryList &destination = pin ? impl_->pinned : impl_->lru;
  destination.splice(destination.begin(), built);
  *plan = destination.front().plan;
  impl_->evict_over_capacity(&evicted);
  return ZYFA_STATUS_SUCCESS;
}

void PlanCache::record_launch(const Plan &plan, void *stream) {
  // Every plan of this cache is a TrackedPlan (Impl::build).
  const TrackedPlan &tracked = static_cast<const TrackedPlan &>(plan);
  DeviceMemory &memory = *impl_->backing->memory;
  std::lock_guard<std::mutex> lock(tracked.mutex);
  StreamUse *use = nullptr;
  for (StreamUse &u : tracked.uses) {
    if (u.stream == stream) {
      use = &u;
      break;
    }
  }
  if (use == nullptr) {
    // A stream new to this plan takes over the event of a stream whose launches have finished, so the
    // plan keeps one event per stream with work in flight, not one per stream it ever ran on.
    for (StreamUse &u : tracked.uses) {
      if (memory.event_finished(tracked.place, u.event)) {
        use = &u;
        break;
      }
    }
  }
  const bool added = use == nullptr;
  if (added) {
    try {
      tracked.uses.push_back(StreamUse{});
    } catch (const std::bad_alloc &) {
      tracked.untracked = true;  // the launch is queued: it cannot fail now, its table waits for clear()
      return;
    }
    use = &tracked.uses.back();
  }
  use->stream = stream;
  bool recorded = false;
  try {
    recorded = memory.record_event(tracked.place, stream, &use->event);
  } catch (...) {
    // The launch is queued whatever happens here, so this must not throw: unrecorded, its table waits for
    // clear() (an event created but never recorded would read as finished).
  }
  if (added && use->event == nullptr) tracked.uses.pop_back();  // its event was never created
  if (!recorded) tracked.untracked = true;
}

void PlanCache::release_finished() { impl_->backing->free_deferred(/*all=*/false); }

uint64_t PlanCache::deferred_tables() const { return impl_->backing->deferred_count.load(); }

zyfa_status PlanCache::stats(zyfa_plan_cache_stats *out) const {
  if (out == nullptr) {
    return fail(ZYFA_STATUS_NULL_ARGUMENT,
                "stats = NULL: pass a zyfa_plan_cache_stats set by ZYFA_PLAN_CACHE_STATS_INIT");
  }
  // Every size of zyfa_plan_cache_stats ever released; when a field is appended, add the new size here.
  // A caller's struct gets the prefix its struct_size covers.
  constexpr size_t kKnownSizes[] = {sizeof(zyfa_plan_cache_stats)};
  const size_t size = out->struct_size;
  bool known = false;
  for (size_t s : kKnownSizes) known = known || s == size;
  if (!known) {
    return fail(ZYFA_STATUS_BAD_STRUCT_SIZE,
                "stats->struct_size = %zu: this library knows sizeof(zyfa_plan_cache_stats) = %zu", size,
                sizeof(zyfa_plan_cache_stats));
  }
  zyfa_plan_cache_stats full{};
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    full.hits = impl_->hits;
    full.misses = impl_->misses;
    full.evictions = impl_->evictions;
    full.entries = impl_->entries();
    full.capacity = impl_->capacity;
    full.device_bytes = impl_->backing->bytes.load();
  }
  full.struct_size = size;
  std::memcpy(out, &full, size);
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status PlanCache::set_capacity(uint64_t capacity) {
  if (capacity < 1) {
    return fail(ZYFA_STATUS_BAD_ARGUMENT, "capacity = %llu: the plan cache must hold >= 1 plan",
                (unsigned long long)capacity);
  }
  EntryList evicted;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->capacity = capacity;
  impl_->evict_over_capacity(&evicted);
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status PlanCache::clear() {
  {
    EntryList dropped;  // declared before the lock: dropped after it is released
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->index.clear();
    dropped.splice(dropped.end(), impl_->lru);
    dropped.splice(dropped.end(), impl_->pinned);
  }
  impl_->backing->free_deferred(/*all=*/true);
  return ZYFA_STATUS_SUCCESS;
}

}  // namespace zyfa
