// Spreads independent work units over the host's cores: the CPU backend and the fp64 oracle both run
// one unit per (batch, head, block of query rows) with no shared writes, so a shared counter is all they need.
#ifndef ZYFA_REF_PARALLEL_FOR_HPP_
#define ZYFA_REF_PARALLEL_FOR_HPP_

#include <cstdint>
#include <functional>

namespace zyfa::ref {

// How many workers parallel_for will use for n_units units (at least 1, at most the core count), so a
// caller can allocate one scratch area per worker before the threads start.
int worker_count(int64_t n_units);

// Calls body(worker, unit) once for every unit in [0, n_units), with worker in [0, worker_count(n_units)).
// The calling thread is worker 0. If the system refuses a thread, the remaining workers take its share,
// so every unit still runs exactly once. `body` must not throw.
void parallel_for(int64_t n_units, const std::function<void(int worker, int64_t unit)> &body);

}  // namespace zyfa::ref

#endif  // ZYFA_REF_PARALLEL_FOR_HPP_
