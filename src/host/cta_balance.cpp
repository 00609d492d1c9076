#include "host/cta_balance.hpp"

#include <algorithm>
#include <climits>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

#include "kernels/numerics.h"

namespace zyfa {

namespace {

Job single(const Job &job, int32_t tile) { return Job{job.batch, job.head, tile, kNoTile}; }

void append_singles(const Job &job, std::vector<Job> *out) {
  out->push_back(single(job, job.tile_first));
  if (job.tile_second != kNoTile) out->push_back(single(job, job.tile_second));
}

// Splits the last pair of *list into its two tiles, in place. False if there is none (all singles).
bool split_last_pair(std::vector<Job> *list) {
  for (size_t i = list->size(); i-- > 0;) {
    const Job job = (*list)[i];
    if (job.tile_second == kNoTile) continue;
    (*list)[i] = single(job, job.tile_first);
    list->insert(list->begin() + std::ptrdiff_t(i) + 1, single(job, job.tile_second));
    return true;
  }
  return false;
}

// How far over an even split the balance settles (slowest CTA / mean, in thousandths), and the most whole
// rounds it moves with the partial one to get there. The partial and last whole round reach it at 128-row
// tiles; the 192-row tiles of the FP8 kernels cost 1.5 blocks per tile index, and those two rounds alone leave
// their plans 2.3% (4K), 2.0% (gqa 8K) and 1.4% (gqa 16K) over (test_cta_balance.cpp's cases, printed with
// kMostMovedRounds = 1). Each round moved further mixes more heads'
// tiles at the end, so the balance moves no more than it needs.
constexpr int64_t kSettledPerMille = 1010;
constexpr int64_t kEvenPerMille = 1000;
constexpr int64_t kMostMovedRounds = 4;

// Whether the slowest of `grid` CTAs is at most per_mille / 1000 of the mean of `total` (in 128 bits: a
// table of 2^31 jobs of long tiles totals near 2^53 blocks).
bool within(int64_t slowest, int64_t grid, int64_t total, int64_t per_mille) {
  return __int128(slowest) * grid * 1000 <= __int128(total) * per_mille;
}

// The table with its jobs from round kept_rounds on split into single tiles and handed out largest first, each
// to the CTA with the least work so far (ties to the lowest CTA), then relabelled for the strided walk; empty
// where the counts cannot fit the walk.
std::vector<Job> rebalanced(const std::vector<Job> &table, int64_t grid, const QueryTiling &tiling,
                            int64_t kept_rounds) {
  const int64_t n = int64_t(table.size()), kept = kept_rounds * grid;
  std::vector<std::vector<Job>> lists(static_cast<size_t>(grid));
  std::vector<int64_t> load(static_cast<size_t>(grid), 0);
  for (int64_t i = 0; i < kept; ++i) {
    lists[size_t(i % grid)].push_back(table[size_t(i)]);
    load[size_t(i % grid)] += job_blocks(table[size_t(i)], tiling);
  }
  std::vector<Job> singles;
  for (int64_t i = kept; i < n; ++i) append_singles(table[size_t(i)], &singles);
  std::stable_sort(singles.begin(), singles.end(),
                   [&](const Job &a, const Job &b) { return job_blocks(a, tiling) > job_blocks(b, tiling); });
  using Slot = std::pair<int64_t, int64_t>;  // (blocks so far, cta): the least loaded, then the lowest cta
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> least;
  for (int64_t c = 0; c < grid; ++c) least.push({load[size_t(c)], c});
  for (const Job &job : singles) {
    const auto [blocks, c] = least.top();
    least.pop();
    lists[size_t(c)].push_back(job);
    least.push({blocks + job_blocks(job, tiling), c});
  }
  // Largest first hands each CTA tiles of heads from all over the moved rounds. Where more than the last whole
  // round moved, run each CTA's in head order instead (its work, and so the balance, is the same), so that the
  // CTAs walk those heads together and fewer of them are in flight at once, their K and V in L2 (a time model
  // at mha-d128 4K: 27 kv heads on average against 44; bench/NOTES.md, session 41). One round's singles keep
  // the order the balance has always given them.
  if (kept_rounds + 1 < int64_t(table.size()) / grid) {
    for (std::vector<Job> &list : lists) {
      std::stable_sort(list.begin() + std::ptrdiff_t(kept_rounds), list.end(), [](const Job &a, const Job &b) {
        return std::make_pair(a.batch, a.head) < std::make_pair(b.batch, b.head);
      });
    }
  }

  // The strided walk gives the first CTAs one job more than the rest: relabel the CTAs by count, and let a
  // CTA with two or more jobs fewer than the most split pairs (same work, one job more each).
  std::vector<size_t> order(static_cast<size_t>(grid));
  std::iota(order.begin(), order.end(), size_t(0));
  const size_t most =
      std::max_element(lists.begin(), lists.end(), [](const auto &a, const auto &b) { return a.size() < b.size(); })
          ->size();
  for (std::vector<Job> &list : lists) {
    while (list.size() + 1 < most) {
      if (!split_last_pair(&list)) return {};
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lists[a].size() > lists[b].size(); });

  std::vector<Job> out;
  for (size_t k = 0; k < most; ++k) {
    for (size_t c : order) {
      if (k < lists[c].size()) out.push_back(lists[c][k]);
    }
  }
  return out;
}

int64_t slowest_cta(const std::vector<Job> &table, int64_t grid, const QueryTiling &tiling) {
  const std::vector<int64_t> blocks = blocks_per_cta(table, grid, tiling);
  return *std::max_element(blocks.begin(), blocks.end());
}

}  // namespace

int64_t tile_blocks(int32_t tile, const QueryTiling &tiling) {
  const int64_t rows_end = std::min((int64_t(tile) + 1) * tiling.rows - tiling.row_shift, tiling.seqlen);
  return std::max<int64_t>((rows_end + numerics::kKeyBlock - 1) / numerics::kKeyBlock, 0);
}

int64_t job_blocks(const Job &job, const QueryTiling &tiling) {
  return tile_blocks(job.tile_first, tiling) + (job.tile_second == kNoTile ? 0 : tile_blocks(job.tile_second, tiling));
}

std::vector<int64_t> blocks_per_cta(const std::vector<Job> &table, int64_t grid, const QueryTiling &tiling) {
  std::vector<int64_t> blocks(size_t(std::max<int64_t>(grid, 1)), 0);
  for (size_t i = 0; i < table.size(); ++i) blocks[i % blocks.size()] += job_blocks(table[i], tiling);
  return blocks;
}

void balance_tail(std::vector<Job> *table, int64_t grid, const QueryTiling &tiling) {
  const int64_t n = int64_t(table->size());
  if (grid < 2 || n <= grid) return;
  const std::vector<int64_t> blocks = blocks_per_cta(*table, grid, tiling);
  const int64_t total = std::accumulate(blocks.begin(), blocks.end(), int64_t(0));
  // The table stays as it was where no balance makes its slowest CTA faster (many small tiles: the splits
  // that fit the counts then move kept rounds too), or where the kernels' int32 job index (and its step by
  // the grid) would not hold the longer table.
  std::vector<Job> best;
  int64_t best_slowest = *std::max_element(blocks.begin(), blocks.end());
  // Whole rounds are even where every job costs the same (pairs of 128-row tiles), not where the middle tile
  // of an odd tile count or 192-row pairs of 65 and 66 blocks come back to the same CTAs every round.
  if (within(best_slowest, grid, total, kEvenPerMille)) return;
  // The partial round and the last whole one move first (grid to 2 grid - 1 jobs), then one more round at a
  // time, until the slowest CTA settles; true if it did.
  const auto settles = [&](const std::vector<Job> &order) {
    const int64_t least_kept = std::max<int64_t>(n / grid - kMostMovedRounds, 0);
    for (int64_t kept_rounds = n / grid - 1; kept_rounds >= least_kept; --kept_rounds) {
      std::vector<Job> out = rebalanced(order, grid, tiling, kept_rounds);
      if (out.empty() || !fits_strided_walk(int64_t(out.size()), grid)) continue;
      const int64_t slowest = slowest_cta(out, grid, tiling);
      if (slowest < best_slowest) best = std::move(out), best_slowest = slowest;
      if (within(best_slowest, grid, total, kSettledPerMille)) return true;
    }
    return false;
  };
  // First the table as built; then with its single tiles (odd tile counts' middle tiles) last, for where the
  // first cannot fit the walk's counts: a CTA that held a middle tile every round is light, takes many of
  // the moved singles, and the CTAs that took few have no pair left to split to match it (8K, 100-3000 heads).
  if (!settles(*table)) {
    std::vector<Job> singles_last = *table;
    std::stable_partition(singles_last.begin(), singles_last.end(),
                          [](const Job &j) { return j.tile_second != kNoTile; });
    settles(singles_last);
  }
  if (!best.empty()) *table = std::move(best);
}

}  // namespace zyfa
