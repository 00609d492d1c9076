// Runs a Program on the CPU, warp by warp in lockstep, so that host tests check the kernel's instruction
// list (indexing, masking, fragment layouts, the recurrence, barriers) without a GPU. Global memory is
// host memory: addresses in the parameter block are host pointers, and every access must fall inside a
// region the caller declared. cp.async copies land only when their thread waits for them (the latest the
// hardware may complete them), so a read before the wait and the barrier sees stale bytes. What the model cannot know about the hardware: ex2/lg2 are computed
// exactly (the GPU's approximations differ in the last bits) and an MMA sums its products exactly before
// one rounding (the tensor core's order of fp32 additions is its own).
#ifndef ZYFA_ASMGEN_INTERPRETER_HPP_
#define ZYFA_ASMGEN_INTERPRETER_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "asmgen/program.hpp"

namespace zyfa::asmgen {

class Interpreter {
 public:
  explicit Interpreter(const Program &program);

  // Host memory the kernel may read (and, if `writable`, write).
  void add_region(const void *begin, size_t bytes, bool writable);

  // Runs CTAs 0 .. grid - 1 one after another with the parameter block `params` (program.param_bytes).
  // Returns "" on success, else what went wrong (an access outside every region, a divergent branch,
  // a barrier some warp never reaches, ...) and where.
  std::string run(int grid, const void *params);

  // Instructions executed per lane, over the last run: a coarse cost model of the schedule.
  uint64_t instructions_executed() const { return executed_; }

 private:
  struct Region {
    uintptr_t begin, end;
    bool writable;
  };
  struct Warp;
  std::string run_cta(int cta, int grid, const void *params);
  std::string step(Warp &w, int cta, int grid, const void *params);
  bool global_ok(uintptr_t addr, size_t bytes, bool write) const;

  const Program &p_;
  std::vector<size_t> label_at_;
  std::vector<Region> regions_;
  std::vector<uint8_t> smem_;
  uint64_t executed_ = 0;
};

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_INTERPRETER_HPP_
