// The work of a job-table entry as the tests count it, from the rows each causal query tile reads, apart from
// the library's own cost model (src/host/cta_balance.cpp), which the tests check against it.
#ifndef ZYFA_TEST_SUPPORT_JOB_WORK_HPP_
#define ZYFA_TEST_SUPPORT_JOB_WORK_HPP_

#include <algorithm>
#include <cstdint>

#include "kernels/job.h"
#include "kernels/numerics.h"

namespace zyfa::test {

// Key blocks that causal query tile t of `rows` rows reads, its first row `shift` rows before t * rows: keys 0 ..
// its last row in the sequence (the row that reaches furthest; a tile's consumers walk its blocks in lockstep).
inline int64_t key_blocks_of_tile(int64_t t, int64_t seqlen, int64_t rows = numerics::kQueryTile, int64_t shift = 0) {
  const int64_t last_row = std::min<int64_t>((t + 1) * rows - shift, seqlen) - 1;
  return last_row < 0 ? 0 : last_row / numerics::kKeyBlock + 1;
}

// Key blocks of a job: its tile, and its partner tile if it has one.
inline int64_t key_blocks_of_job(const Job &job, int64_t seqlen, int64_t rows = numerics::kQueryTile,
                                 int64_t shift = 0) {
  return key_blocks_of_tile(job.tile_first, seqlen, rows, shift) +
         (job.tile_second == kNoTile ? 0 : key_blocks_of_tile(job.tile_second, seqlen, rows, shift));
}

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_JOB_WORK_HPP_
