// Spreads independent work units over the host's cores: the CPU backend and the fp64 oracle both run
// one unit per (batch, head, block of query rows: RowBlocks) with no shared writes, so a shared counter is
// all they need.
#ifndef ZYFA_REF_PARALLEL_FOR_HPP_
#define ZYFA_REF_PARALLEL_FOR_HPP_

#include <algorithm>
#include <cstdint>
#include <functional>

namespace zyfa::ref {

// How many workers parallel_for will use for n_units units (at least 1, at most the core count), so a
// caller can allocate one scratch area per worker before the threads start.
int worker_count(int64_t n_units);

// Calls body(worker, unit) once for every unit in [0, n_units), with worker in [0, worker_count(n_units)).
// The calling thread is worker 0. If the system refuses a thread, the remaining workers take its share,
// so every unit still runs exactly once. If `body` throws, the units not yet begun are skipped and the first
// exception is rethrown on the calling thread once every worker has joined (never std::terminate).
void parallel_for(int64_t n_units, const std::function<void(int worker, int64_t unit)> &body);

// Causal attention's units: (batch, head, block of `rows` query rows), numbered so that the blocks of the
// last rows, which attend to the most keys, come first and the workers finish together.
struct RowBlocks {
  int64_t batch, nheads, seqlen, rows;
  struct Unit {
    int64_t b, h, row0, row1;  // rows row0 .. row1 - 1 of (batch b, head h)
  };
  int64_t count() const { return batch * nheads * blocks(); }
  Unit operator[](int64_t unit) const {
    const int64_t heads = batch * nheads, block = blocks() - 1 - unit / heads;
    const int64_t row0 = block * rows;
    return {(unit % heads) / nheads, (unit % heads) % nheads, row0, std::min(row0 + rows, seqlen)};
  }

 private:
  int64_t blocks() const { return (seqlen + rows - 1) / rows; }
};

}  // namespace zyfa::ref

#endif  // ZYFA_REF_PARALLEL_FOR_HPP_
