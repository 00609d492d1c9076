// The work of a job-table entry as the tests count it, from the rows each causal query tile reads, apart from
// the library's own cost model (src/host/cta_balance.cpp), which the tests check against it.
#ifndef ZYFA_TEST_SUPPORT_JOB_WORK_HPP_
#define ZYFA_TEST_SUPPORT_JOB_WORK_HPP_

#include <algorithm>
#include <cstdint>

#include "kernels/job.h"
#include "kernels/numerics.h"

namespace zyfa::test {

// Key blocks that causal query tile t reads: keys 0 .. its last row.
inline int64_t key_blocks_of_tile(int64_t t, int64_t seqlen) {
  const int64_t last_row_end = std::min<int64_t>((t + 1) * numerics::kQueryTile, seqlen);
  return (last_row_end + numerics::kKeyBlock - 1) / numerics::kKeyBlock;
}

// Key blocks of a job: its tile, and its partner tile if it has one.
inline int64_t key_blocks_of_job(const Job &job, int64_t seqlen) {
  return key_blocks_of_tile(job.tile_first, seqlen) +
         (job.tile_second == kNoTile ? 0 : key_blocks_of_tile(job.tile_second, seqlen));
}

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_JOB_WORK_HPP_
