// Balances a job table's tail over a persistent grid without touching the kernels' walk.
//
// The kernels walk jobs blockIdx.x, blockIdx.x + grid, ... (kernels::Schedule), so with N equal pair jobs
// CTA c runs ceil((N - c) / grid) of them, and the grid waits for the CTAs that got one job more: with
// N / grid = 15.5 (2048 jobs on 132 SMs) that is 3% of the time lost at every length of the benchmark
// protocol. The rebalanced table keeps the first rounds of pairs where they were (so the CTAs of one round
// still share the same heads' K and V in L2), splits the jobs of the last rounds into single tiles, and
// gives each single to the CTA with the least work so far, largest first (longest processing time first;
// ties to the lowest CTA, so the table is a function of the shape, the tiling and the grid alone); where more
// than the last whole round moved, each CTA runs its singles in head order, so that the CTAs walk the moved
// heads together. CTAs are then relabelled,
// and pairs split where a CTA holds fewer jobs, until the counts fit the strided walk (the first CTAs one job
// more than the rest). It moves the partial round and the last whole one, and up to three whole rounds more
// where fewer leave the slowest CTA more than 1% over the mean (the FP8 kernels' 192-row tiles). The jobs of
// one tile do not depend on which CTA runs them, so the output stays bitwise the same.
#ifndef ZYFA_HOST_CTA_BALANCE_HPP_
#define ZYFA_HOST_CTA_BALANCE_HPP_

#include <cstdint>
#include <vector>

#include "kernels/job.h"

namespace zyfa {

// Where a table's tiles lie: tile t holds query rows [t * rows - row_shift, (t + 1) * rows - row_shift), clipped
// to [0, seqlen) (the three-consumer FP8 kernels start their 192-row tiles fp8_query_tile_shift rows early).
struct QueryTiling {
  int64_t seqlen;
  int64_t rows;
  int64_t row_shift;
};

// The work the balance evens out: the key blocks a tile's last row reaches. A tile's consumers walk its key
// blocks in lockstep, so the strip that reaches furthest sets the tile's time (a 128-row tile: t + 1 blocks,
// both strips; a 192-row tile: its last 64 rows, one key block past its first 64).
int64_t tile_blocks(int32_t tile, const QueryTiling &tiling);
// Key blocks of a job: its tile, and its partner tile if it has one.
int64_t job_blocks(const Job &job, const QueryTiling &tiling);

// Rewrites *table (pairs and singles, as build_job_table makes them over `tiling`'s tiles) for a strided walk
// over `grid` CTAs. Leaves it as it is where there is nothing to balance (at most one round of jobs, one CTA,
// or every CTA's work already the same), where the counts cannot be made to fit the walk, where the slowest
// CTA would not get faster, or where the longer table would not fit the kernels' int32 job index. Throws
// std::bad_alloc only.
void balance_tail(std::vector<Job> *table, int64_t grid, const QueryTiling &tiling);

// The key blocks each CTA runs under the strided walk of `table` over `grid` CTAs (for tests and notes).
std::vector<int64_t> blocks_per_cta(const std::vector<Job> &table, int64_t grid, const QueryTiling &tiling);

}  // namespace zyfa

#endif  // ZYFA_HOST_CTA_BALANCE_HPP_
