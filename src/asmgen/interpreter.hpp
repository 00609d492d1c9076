// Runs a Program on the CPU, warp by warp in lockstep, so that host tests check the kernel's instruction
// list (indexing, masking, fragment layouts, the recurrence, barriers) without a GPU. Global memory is
// host memory: addresses in the parameter block are host pointers, and every access must fall inside a
// region the caller declared. cp.async copies land only when their thread waits for them (the latest the
// hardware may complete them), so a read before the wait and the barrier sees stale bytes. What the model cannot know about the hardware: ex2/lg2 are computed
// exactly (the GPU's approximations differ in the last bits) and an mma.sync sums its products exactly before
// one rounding (the tensor core's order of fp32 additions is its own); a wgmma e4m3 sums them as the H200's
// tensor cores do, which is known bit for bit (src/ref/tensor_core_sums.hpp).
//
// The Hopper machinery of the wgmma schedule is modelled too: named barriers with thread counts,
// mbarriers (arrivals, transaction bytes, phases; a try_wait that fails yields the warp, and a round in
// which no warp moves is a deadlock), TMA loads (landing when a wait on their mbarrier completes) from a
// tensor map the caller writes in the interpreter's own form (InterpretedTensorMap, in place of the
// driver's opaque CUtensorMap), and wgmma e4m3 (each warp computes its 16 rows when it issues the product,
// reading shared memory through the descriptor's swizzle; commit and wait retire its registers and its
// shared-memory reads, below). So a
// buffer handed back too early is overwritten before its reader is done, or never filled: wrong bytes, a
// deadlock or an mbarrier misuse, which the tests see.
//
// Two orderings the hardware needs and the GPU would not report are errors here too: shared bytes written by
// threads (st.shared, stmatrix, cp.async: the generic proxy) and read by a wgmma (the async proxy) need the
// writer's fence.proxy.async before the barrier or arrive that hands them over; and memory a preceding grid
// writes (the V^T pre-pass, add_preceding_grid_output) may be read only after the reading thread's
// griddepcontrol.wait. And shared memory that one warp writes and another reads or writes needs an order
// between them (an mbarrier wait, a named or CTA barrier) whatever order the warps run in: SharedRaces tracks
// it by happens-before, so a stage rewritten before its readers released it fails here although this
// interleaving read it first.
#ifndef ZYFA_ASMGEN_INTERPRETER_HPP_
#define ZYFA_ASMGEN_INTERPRETER_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "asmgen/interpreter_races.hpp"
#include "asmgen/program.hpp"

namespace zyfa::asmgen {

// What a TMA load reads where the kernel's parameter block holds a CUtensorMap: a rank-4 tiled map of
// 1-byte elements, the box's rows swizzled as TMA does (16-byte chunk c of a 128-byte line r at c ^ (r %
// 8) for a 128-byte swizzle; the same on address bits for 64 and 32). Coordinates outside dims read zeros.
struct InterpretedTensorMap {
  uint64_t base;           // host address of element (0, 0, 0, 0)
  uint64_t dims[4];        // extents, innermost first
  uint64_t strides[3];     // bytes between consecutive indices of dims 1, 2, 3
  uint32_t box[2];         // box extents in dims 0 and 1 (1 in dims 2 and 3)
  uint32_t swizzle_bytes;  // 0, 32, 64 or 128
  uint32_t unused;
};

class Interpreter {
 public:
  explicit Interpreter(const Program &program);

  // Host memory the kernel may read (and, if `writable`, write).
  void add_region(const void *begin, size_t bytes, bool writable);
  // Host memory a preceding grid writes while this one may already run (a programmatic launch dependency):
  // readable, but only by a thread that has run griddepcontrol.wait.
  void add_preceding_grid_output(const void *begin, size_t bytes);

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
    bool preceding_grid_output = false;
  };
  struct Mbarrier {
    int64_t count = 0, pending = 0, tx = 0;
    uint64_t phase = 0;
    SharedRaces::Clocks released;   // the arrivals (and landed copies) of the phase in progress
    SharedRaces::Clocks completed;  // those of every completed phase: what a wait that passes has seen
  };
  struct NamedBarrier {
    int64_t arrived = 0;
    SharedRaces::Clocks released;
  };
  struct Warp;
  std::string run_cta(int cta, int grid, const void *params);
  std::string step(Warp &w, int cta, int grid, const void *params);
  bool global_ok(uintptr_t addr, size_t bytes, bool write) const;
  // "" where a lane may read [addr, addr + bytes) of global memory now (see add_preceding_grid_output).
  std::string grid_dependency_ok(uintptr_t addr, size_t bytes, bool waited, const char *what) const;
  // Hopper: the instructions of the wgmma schedule that are not plain arithmetic.
  std::string step_hopper(Warp &w, const void *params);
  Mbarrier *mbarrier(uint64_t addr);
  // `release`: the clocks of the arriving warp, or of a landing copy's issuer (SharedRaces).
  std::string mbar_update(uint64_t addr, int64_t arrivals, int64_t tx, const SharedRaces::Clocks &release);
  // One warp's arrival; true where it completes the barrier (then it and every warp waiting there have seen
  // every arrival's history, unless it only arrives).
  bool named_arrive(Warp &w, int id, int64_t count, bool waits);
  // A TMA copy is read from global memory when issued and lands (its bytes written, its transaction counted
  // on the mbarrier) only when a warp waits on that mbarrier, or when no warp can move otherwise: a warp that
  // reads the destination without that wait reads bytes not yet there, which is an error.
  std::string tma_load(const Warp &issuer, uint32_t dst, const InterpretedTensorMap &map, const int64_t coords[4],
                       uint64_t mbar, bool grid_dependency_waited);
  std::string land_tma_copies(uint64_t mbar);  // the copies of one mbarrier, in issue order; UINT64_MAX: all
  std::string smem_landed(size_t addr, size_t bytes, const char *what) const;
  std::string wgmma(Warp &w, const Instr &in);
  bool smem_at_desc(uint64_t desc, int row, int k, size_t *addr) const;
  // Whether [addr, addr + bytes) of shared memory may be written now: no wgmma product in flight reads it.
  std::string smem_writable(size_t addr, size_t bytes, const char *what) const;
  void read_by_product(Warp &w, size_t addr);  // a shared byte the product being issued reads
  // The generic and async proxies (see the top): a thread's write, its fence, and its barrier or arrive.
  void generic_write(int thread, size_t addr, size_t bytes);
  void fence_proxy_async(int thread);
  void hand_over_unfenced(int thread);
  std::string async_proxy_reads(size_t addr, const char *what) const;

  const Program &p_;
  std::vector<size_t> label_at_;
  std::vector<Region> regions_;
  std::vector<uint8_t> smem_;
  // Per shared-memory byte, the wgmma products in flight (issued, not yet retired by a wait) that read it: on
  // the GPU they read their operands while they run, so a write there before the wait (a TMA copy into a
  // stage released too early, a store) changes what they compute. The interpreter reads at issue, so it
  // counts the readers instead, and a write to a byte with readers is an error.
  std::vector<uint16_t> smem_wgmma_readers_;
  struct PendingTma {
    std::vector<std::pair<uint32_t, uint8_t>> bytes;  // (shared address, value)
    uint64_t mbar;
    int issuer;                         // the issuing warp, and its clocks at the issue: the copy's writes are
    SharedRaces::Clocks issuer_clocks;  // ordered after what it had seen then
  };
  std::vector<PendingTma> pending_tma_;   // issued, not landed, oldest first
  std::vector<uint16_t> smem_landing_;    // per shared byte, the pending copies that will write it
  // Per shared byte, the thread whose generic write there has not been fenced yet (kFenced where none; one
  // handed to others by a barrier or arrive before its fence stays kHandedOverUnfenced until rewritten), and
  // per thread the bytes it wrote since its last fence.
  static constexpr int32_t kFenced = -1, kHandedOverUnfenced = -2;
  std::vector<int32_t> smem_unfenced_;
  std::vector<std::vector<uint32_t>> unfenced_by_thread_;
  std::vector<Mbarrier> mbars_;    // by shared-memory address / 8
  std::vector<bool> mbar_valid_;
  NamedBarrier named_[16];
  SharedRaces races_;
  std::vector<Warp> *warps_ = nullptr;  // the CTA in flight
  bool moved_ = false;                  // some warp got past an instruction in this round
  uint64_t executed_ = 0;
};

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_INTERPRETER_HPP_
