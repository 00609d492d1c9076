#include "ref/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace zyfa::ref {

int worker_count(int64_t n_units) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return int(std::max<int64_t>(1, std::min(cores, n_units)));
}

void parallel_for(int64_t n_units, const std::function<void(int worker, int64_t unit)> &body) {
  std::atomic<int64_t> next{0};
  // An exception leaving a std::thread's function terminates the process, and the library must never
  // abort: each worker keeps the first exception it meets, stops taking units, and the caller's thread
  // rethrows it after every worker has joined (the entry point's guard turns it into a status).
  std::vector<std::exception_ptr> failures(size_t(worker_count(n_units)));
  auto drain = [&](int worker) {
    try {
      for (int64_t unit = next.fetch_add(1); unit < n_units; unit = next.fetch_add(1)) body(worker, unit);
    } catch (...) {
      failures[size_t(worker)] = std::current_exception();
      next = n_units;  // the others stop at their next unit
    }
  };
  const int workers = int(failures.size());
  std::vector<std::thread> threads;
  threads.reserve(size_t(workers));
  try {
    for (int w = 1; w < workers; ++w) threads.emplace_back(drain, w);
  } catch (...) {
    // Fewer threads than planned (std::system_error, or std::bad_alloc for a thread's state): the counter
    // hands their units to the workers that did start.
  }
  drain(0);
  for (std::thread &t : threads) t.join();
  for (const std::exception_ptr &failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

}  // namespace zyfa::ref
