// Balances a job table's tail over a persistent grid without touching the kernels' walk.
//
// The kernels walk jobs blockIdx.x, blockIdx.x + grid, ... (kernels::Schedule), so with N equal pair jobs
// CTA c runs ceil((N - c) / grid) of them, and the grid waits for the CTAs that got one job more: with
// N / grid = 15.5 (2048 jobs on 132 SMs) that is 3% of the time lost at every length of the benchmark
// protocol. The rebalanced table keeps every full round of pairs where it was (so the CTAs of one round
// still share the same heads' K and V in L2), splits the jobs of the last one or two rounds into single
// tiles, and gives each single to the CTA with the least work so far, largest first (longest processing
// time first; ties to the lowest CTA, so the table is a function of the shape and the grid alone). CTAs
// are then relabelled, and pairs split where a CTA holds fewer jobs, until the counts fit the strided walk
// (the first CTAs one job more than the rest). The jobs of one tile do not depend on which CTA runs them,
// so the output stays bitwise the same.
#ifndef ZYFA_HOST_CTA_BALANCE_HPP_
#define ZYFA_HOST_CTA_BALANCE_HPP_

#include <cstdint>
#include <vector>

#include "kernels/job.h"

namespace zyfa {

// Key blocks a job covers (a causal tile t of 128 rows spans t + 1 key blocks; one of 192 rows about 1.5 (t + 1),
// the same proportions): the work the balance evens out.
int64_t job_blocks(const Job &job);

// Rewrites *table (pairs and singles, as build_job_table makes them) for a strided walk over `grid` CTAs.
// Leaves it as it is where there is no tail to balance (at most one round of jobs, whole rounds only, or
// one CTA), where the counts cannot be made to fit the walk, where the slowest CTA would not get faster,
// or where the longer table would not fit the kernels' int32 job index. Throws std::bad_alloc only.
void balance_tail(std::vector<Job> *table, int64_t grid);

// The key blocks each CTA runs under the strided walk of `table` over `grid` CTAs (for tests and notes).
std::vector<int64_t> blocks_per_cta(const std::vector<Job> &table, int64_t grid);

}  // namespace zyfa

#endif  // ZYFA_HOST_CTA_BALANCE_HPP_
