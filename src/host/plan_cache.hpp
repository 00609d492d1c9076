// The plan cache: for each (device, dtype, d_qk, d_v, batch, nheads, nheads_k, seqlen), the pair-balanced
// job table of the persistent grid, its last rounds rebalanced over the grid (host/cta_balance.hpp), built
// on the host once and uploaded to device memory. The layout is not
// part of the key: jobs name (batch, head, tile), never an address, so every layout of a shape shares one
// plan (a shape prepared as BSHD may be captured as STRIDED).
// Thread-safe, bounded (least recently used first out), with statistics. An evicted table is freed only
// once every launch that read it has finished (an event per stream), by a later call whose stream is not
// being captured, or by clear().
#ifndef ZYFA_HOST_PLAN_CACHE_HPP_
#define ZYFA_HOST_PLAN_CACHE_HPP_

#include <cstdint>
#include <memory>
#include <vector>

#include "host/cta_balance.hpp"
#include "host/problem.hpp"
#include "kernels/job.h"
#include "kernels/launch.hpp"
#include "kernels/numerics.h"

namespace zyfa {

struct PlanKey {
  int device = 0;
  zyfa_dtype dtype = ZYFA_DTYPE_BF16;
  int64_t d_qk = 0, d_v = 0, batch = 0, nheads = 0, nheads_k = 0, seqlen = 0;
  // The process-unique ID (cuCtxGetId) of the context the table was allocated in: another context of the same
  // device (a driver-created or green one) cannot read it, so it gets a plan of its own.
  uint64_t context_id = 0;
  bool operator==(const PlanKey &o) const;
};

// The key of a validated problem's plan in the context of ID `context_id` on `device`: its shape, never its
// layout or pointers.
PlanKey plan_key_of(const Problem &problem, int device, uint64_t context_id);

struct Plan {
  kernels::Schedule schedule;  // the job table in device memory and the grid
};

// Where a job table or an event lives: its device, and the ID of the context it was made in (PlanKey::context_id,
// current at the call that built the plan). Contexts end (destroyed, or a device reset) and their handles and
// addresses are reused by later ones: the ID tells them apart.
struct Place {
  int device = 0;
  uint64_t context_id = 0;
};

// Where job tables live, and the events that tell when the GPU has finished with one. The CUDA
// implementation (src/host/cuda_api.cpp) uploads to the device and records CUDA events; tests substitute
// host memory and events they finish by hand, so the cache's logic is tested on machines without a GPU.
// Every method may be called from several threads at once: implementations must be thread-safe.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // Copies `bytes` bytes to new device memory in `place` (the current context) into *table. On failure,
  // nothing stays allocated and the status says why (ZYFA_STATUS_OUT_OF_MEMORY for memory, device or host;
  // ZYFA_STATUS_CUDA_ERROR for any other CUDA failure), with its message recorded (host/error.hpp), which the
  // cache passes on.
  virtual zyfa_status upload(const Place &place, const void *host, size_t bytes, void **table) = 0;
  // Frees a table once no launch can read it any more (or at PlanCache::clear). Never under the cache's lock.
  // A table whose context has ended went with it: it is not freed again.
  virtual void release(const Place &place, void *ptr) = 0;
  virtual int multiprocessor_count(int device) = 0;
  // Records *event on `stream` (a stream of `place`, not being captured), creating the event first when
  // *event is nullptr: it completes when the work queued on `stream` so far has finished. False when no
  // event could be created or recorded (then *event, if it was created, stays valid).
  virtual bool record_event(const Place &place, void *stream, void **event) = 0;
  // Whether the work before the event's last record has finished. A query that fails counts as finished:
  // the event's context is gone (a device reset) or broken, and no launch of it can still read a table.
  virtual bool event_finished(const Place &place, void *event) = 0;
  virtual void destroy_event(const Place &place, void *event) = 0;
};

// The order of a job table, outermost first. Every order keeps batch, then kv head, outermost, so the
// jobs of the query heads that share one kv head are consecutive and K and V stay in L2; within one query
// head the tile pairs always run t = 0, 1, ... with the lone middle tile (odd T) last. One named choice,
// so that kernels can measure the alternatives by passing another value, not by forking the builder.
enum class JobOrder {
  kHeadThenPair,  // batch > kv head > query head of the group > tile pair: each head's pairs in one run
  kPairThenHead,  // batch > kv head > tile pair > query head of the group: the group's heads side by side
};
// The order the plan cache builds.
constexpr JobOrder kDefaultJobOrder = JobOrder::kHeadThenPair;

// Builds the job table for a shape into *table: T = ceil(seqlen / tile_rows) causal query
// tiles per (batch, query head), tile t paired with tile T-1-t for t < T/2, and the middle tile of an odd T
// alone (tile_second = kNoTile). Counts are 64-bit; a table whose job count or tile index would not fit
// the kernels' int32 indices is refused with ZYFA_STATUS_SIZE_OVERFLOW before anything is allocated (the
// caller sees a status, never a truncated table). Bad arguments: ZYFA_STATUS_BAD_SHAPE / BAD_HEAD_RATIO;
// host allocation failure: ZYFA_STATUS_OUT_OF_MEMORY.
// tile_rows: the query rows per tile of the kernel that walks the table (numerics::kQueryTile, or 192 for
// the FP8 kernel of three consumer warpgroups), at least 1.
zyfa_status build_job_table(int64_t batch, int64_t nheads, int64_t nheads_k, int64_t seqlen,
                            std::vector<Job> *table, JobOrder order = kDefaultJobOrder,
                            int64_t tile_rows = numerics::kQueryTile);

// Where the tiles of a plan over `tile_rows`-row tiles lie, for its tail balance (cta_balance.hpp): the FP8
// kernels' 192-row tiles start asmgen::fp8_query_tile_shift rows early (the lean-P d_qk = 192 V^T kernel, which
// ignores the shift, then balances over a tiling a little off its own: its tiles still run once each).
QueryTiling query_tiling(int64_t seqlen, int64_t tile_rows);

// How a kernel walks a plan: CTAs per SM, and query heads per job (one CTA each, the CTAs of one cluster,
// which share every K and V copy; the table then holds one job per group of heads_per_job consecutive query
// heads of a kv head, and the grid counts clusters). max_walkers, where above 0, caps the grid at the clusters
// the device holds at once (a persistent walker that waits for another's SMs would double the call's time).
// tile_rows is the kernel's query rows per tile, which sets the table's tiles. The grid and the table depend
// on all four, so all four are in the cache's key.
struct GridShape {
  int ctas_per_sm = 1;
  int heads_per_job = 1;
  int max_walkers = 0;
  int tile_rows = numerics::kQueryTile;
  GridShape(int ctas, int heads = 1, int walkers = 0, int rows = numerics::kQueryTile)  // NOLINT: an int is a plain grid
      : ctas_per_sm(ctas), heads_per_job(heads), max_walkers(walkers), tile_rows(rows) {}
};

class PlanCache {
 public:
  static constexpr uint64_t kDefaultCapacity = 64;

  // A capacity below 1 is taken as 1.
  explicit PlanCache(std::unique_ptr<DeviceMemory> memory, uint64_t capacity = kDefaultCapacity);
  ~PlanCache();
  PlanCache(const PlanCache &) = delete;
  PlanCache &operator=(const PlanCache &) = delete;

  // The process-wide cache over CUDA device memory.
  static PlanCache &global();

  // Finds the plan for `key`, or builds and uploads it unless `may_build` is false (a call under stream
  // capture): then it returns ZYFA_STATUS_NOT_PREPARED. `shape` sizes the grid: min(SMs * ctas_per_sm /
  // heads_per_job, max_walkers if above 0, jobs); since the grid depends on it, it is part of the cache's key.
  // A plan returned while captured is pinned: never evicted, since a graph holds its table's address. Every
  // lookup counts as one hit or one miss (a NOT_PREPARED or failed lookup is a miss). When the last caller
  // drops an evicted plan, its table joins the deferred list (see release_finished).
  zyfa_status acquire(const PlanKey &key, GridShape shape, bool may_build, bool pin,
                      std::shared_ptr<const Plan> *plan);

  // Records that a launch just queued on `stream`, which is not being captured, reads `plan`'s table (a
  // plan of this cache): once evicted, the table is freed only after that launch has finished. One event
  // per stream and plan, recorded again by later launches on the same stream. A launch under capture
  // records nothing: its plan is pinned. If no event can be recorded, the table waits for clear().
  void record_launch(const Plan &plan, void *stream);
  // Frees the deferred tables whose recorded launches have all finished. Call it only when the calling
  // stream is not being captured (a free may wait for the device); the others wait for a later call.
  void release_finished();
  // Tables of evicted plans that no caller holds any more, waiting for their launches to finish.
  uint64_t deferred_tables() const;

  // device_bytes counts every table not yet released: cached, held by a caller after eviction, deferred.
  zyfa_status stats(zyfa_plan_cache_stats *out) const;
  // capacity >= 1 unpinned plans; pinned ones are held beside it (entries may pass the capacity).
  zyfa_status set_capacity(uint64_t capacity);
  // Drops every plan, pinned ones too, and frees every table no caller holds, deferred ones included,
  // without waiting for their launches (zyfa.h: not while a call may still run); the counters of hits,
  // misses and evictions keep running.
  zyfa_status clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zyfa

#endif  // ZYFA_HOST_PLAN_CACHE_HPP_
