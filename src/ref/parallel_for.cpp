#include "ref/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace zyfa::ref {

int worker_count(int64_t n_units) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return int(std::max<int64_t>(1, std::min(cores, n_units)));
}

void parallel_for(int64_t n_units, const std::function<void(int worker, int64_t unit)> &body) {
  std::atomic<int64_t> next{0};
  auto drain = [&](int worker) {
    for (int64_t unit = next.fetch_add(1); unit < n_units; unit = next.fetch_add(1)) body(worker, unit);
  };
  const int workers = worker_count(n_units);
  std::vector<std::thread> threads;
  threads.reserve(size_t(workers));
  try {
    for (int w = 1; w < workers; ++w) threads.emplace_back(drain, w);
  } catch (const std::system_error &) {
    // Fewer threads than planned: the counter hands their units to the workers that did start.
  }
  drain(0);
  for (std::thread &t : threads) t.join();
}

}  // namespace zyfa::ref
