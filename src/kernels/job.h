// One entry of a plan's job table: the contract between the plan cache (src/host) and the persistent
// kernels (src/kernels, src/asmgen). A job is one (batch, query head) and up to two causal query tiles,
// paired first with last so that every full job covers the same number of key blocks; the last rounds of
// a table may hold single tiles of any index (src/host/cta_balance.hpp). Kernels take any tile in either
// field and assume no order.
#ifndef ZYFA_KERNELS_JOB_H_
#define ZYFA_KERNELS_JOB_H_

#include <cstdint>
#include <climits>

namespace zyfa {

// No second tile (the middle tile of an odd count, or a tile the balance split from its pair).
constexpr int32_t kNoTile = -1;

struct alignas(16) Job {
  int32_t batch;
  int32_t head;         // query head; its kv head is head / (nheads / nheads_k)
  int32_t tile_first;   // query tile index, in tiles of the kernel's rows (its code object's query_tile_rows;
                        // an FP8 kernel of 192-row tiles starts them fp8_query_tile_shift rows earlier)
  int32_t tile_second;  // kNoTile, or the tile paired with tile_first
};
static_assert(sizeof(Job) == 16, "a Job is one 16-byte load for the kernel");

// Job indices are int32 in the kernels, and a persistent CTA steps its index by the grid until it passes the
// last job: a table of n_jobs walked by `grid` CTAs needs index n_jobs - 1 + grid to fit.
constexpr int64_t kMaxJobIndex = INT32_MAX;
constexpr bool fits_strided_walk(int64_t n_jobs, int64_t grid) { return n_jobs - 1 + grid <= kMaxJobIndex; }
// Tables are built before their grid is known: they leave room for a grid of up to this many CTAs (more
// than any persistent grid, multiprocessors x CTAs per multiprocessor, launches), and plans cap their grid at it.
constexpr int64_t kMaxPersistentGrid = int64_t(1) << 16;
constexpr int64_t kMaxJobs = kMaxJobIndex + 1 - kMaxPersistentGrid;
static_assert(fits_strided_walk(kMaxJobs, kMaxPersistentGrid), "the largest table fits the largest grid's walk");

}  // namespace zyfa

#endif  // ZYFA_KERNELS_JOB_H_
