// The plan cache: for each (device, dtype, d_qk, d_v, batch, nheads, nheads_k, seqlen, layout), the
// pair-balanced job table of the persistent grid, built on the host once and uploaded to device memory.
// Thread-safe, bounded (least recently used first out), with statistics.
#ifndef ZYFA_HOST_PLAN_CACHE_HPP_
#define ZYFA_HOST_PLAN_CACHE_HPP_

#include <cstdint>
#include <memory>
#include <vector>

#include "host/problem.hpp"
#include "kernels/job.h"
#include "kernels/launch.hpp"

namespace zyfa {

struct PlanKey {
  int device = 0;
  zyfa_dtype dtype = ZYFA_DTYPE_BF16;
  int64_t d_qk = 0, d_v = 0, batch = 0, nheads = 0, nheads_k = 0, seqlen = 0;
  zyfa_layout layout = ZYFA_LAYOUT_BSHD;
  bool operator==(const PlanKey &o) const;
};

struct Plan {
  kernels::Schedule schedule;  // the job table in device memory and the grid
};

// Where job tables live. The CUDA implementation (src/host/cuda_api.cpp) uploads to the device; tests
// substitute host memory, so the cache's logic is tested on machines without a GPU.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // Copies `bytes` bytes to new device memory on `device`; returns nullptr on failure (the cache reports it).
  virtual void *upload(int device, const void *host, size_t bytes) = 0;
  virtual void release(int device, void *ptr) = 0;
  virtual int multiprocessor_count(int device) = 0;
};

// The job table for a shape, in the order the kernel walks it: pairs (t, T-1-t) of causal query tiles,
// consecutive jobs of one kv head's query heads next to each other so that K and V stay in L2.
std::vector<Job> build_job_table(int64_t batch, int64_t nheads, int64_t nheads_k, int64_t seqlen);

class PlanCache {
 public:
  static constexpr uint64_t kDefaultCapacity = 64;

  explicit PlanCache(std::unique_ptr<DeviceMemory> memory, uint64_t capacity = kDefaultCapacity);
  ~PlanCache();
  PlanCache(const PlanCache &) = delete;
  PlanCache &operator=(const PlanCache &) = delete;

  // The process-wide cache over CUDA device memory.
  static PlanCache &global();

  // Finds the plan for `key`, or builds and uploads it unless `may_build` is false (a call under stream
  // capture): then it returns ZYFA_STATUS_NOT_PREPARED. `ctas_per_sm` sizes the grid:
  // min(SMs * ctas_per_sm, jobs). A plan returned while captured is pinned: never evicted, since a graph
  // holds its table's address.
  zyfa_status acquire(const PlanKey &key, int ctas_per_sm, bool may_build, bool pin,
                      std::shared_ptr<const Plan> *plan);

  zyfa_status stats(zyfa_plan_cache_stats *out) const;
  zyfa_status set_capacity(uint64_t capacity);
  zyfa_status clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zyfa

#endif  // ZYFA_HOST_PLAN_CACHE_HPP_
