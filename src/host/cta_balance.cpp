#include "host/cta_balance.hpp"

#include <algorithm>
#include <climits>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

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

}  // namespace

int64_t job_blocks(const Job &job) {
  return int64_t(job.tile_first) + 1 + (job.tile_second == kNoTile ? 0 : int64_t(job.tile_second) + 1);
}

std::vector<int64_t> blocks_per_cta(const std::vector<Job> &table, int64_t grid) {
  std::vector<int64_t> blocks(size_t(std::max<int64_t>(grid, 1)), 0);
  for (size_t i = 0; i < table.size(); ++i) blocks[i % blocks.size()] += job_blocks(table[i]);
  return blocks;
}

void balance_tail(std::vector<Job> *table, int64_t grid) {
  const int64_t n = int64_t(table->size());
  if (grid < 2 || n <= grid || n % grid == 0) return;
  const int64_t kept_rounds = n / grid - 1;  // the last one or two rounds (grid + 1 to 2 grid - 1 jobs) move
  const int64_t kept = kept_rounds * grid;

  std::vector<std::vector<Job>> lists(static_cast<size_t>(grid));
  std::vector<int64_t> load(static_cast<size_t>(grid), 0);
  for (int64_t i = 0; i < kept; ++i) {
    lists[size_t(i % grid)].push_back((*table)[size_t(i)]);
    load[size_t(i % grid)] += job_blocks((*table)[size_t(i)]);
  }
  std::vector<Job> singles;
  for (int64_t i = kept; i < n; ++i) append_singles((*table)[size_t(i)], &singles);
  std::stable_sort(singles.begin(), singles.end(),
                   [](const Job &a, const Job &b) { return job_blocks(a) > job_blocks(b); });
  using Slot = std::pair<int64_t, int64_t>;  // (blocks so far, cta): the least loaded, then the lowest cta
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> least;
  for (int64_t c = 0; c < grid; ++c) least.push({load[size_t(c)], c});
  for (const Job &job : singles) {
    const auto [blocks, c] = least.top();
    least.pop();
    lists[size_t(c)].push_back(job);
    least.push({blocks + job_blocks(job), c});
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
      if (!split_last_pair(&list)) return;  // counts cannot fit the walk: the table stays as it was
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lists[a].size() > lists[b].size(); });

  std::vector<Job> out;
  for (size_t k = 0; k < most; ++k) {
    for (size_t c : order) {
      if (k < lists[c].size()) out.push_back(lists[c][k]);
    }
  }
  // Keep the table as it was where the balance gains nothing (many small tiles: the splits that fit the
  // counts then move kept rounds too), or where the kernels' int32 job index (and its step by the grid)
  // would not hold the longer table.
  const std::vector<int64_t> before = blocks_per_cta(*table, grid), after = blocks_per_cta(out, grid);
  if (*std::max_element(after.begin(), after.end()) >= *std::max_element(before.begin(), before.end())) return;
  if (!fits_strided_walk(int64_t(out.size()), grid)) return;
  *table = std::move(out);
}

}  // namespace zyfa
