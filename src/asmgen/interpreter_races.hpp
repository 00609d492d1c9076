// Data races on shared memory between the warps of a CTA, by happens-before: each warp carries a vector clock,
// and the orderings the kernel builds (mbarrier arrivals and waits, TMA copies completing their mbarrier's
// transactions, named barriers, the CTA barrier) join the clocks as the hardware orders the memory. An access
// that no chain of those orders after another warp's conflicting access is a race, whatever order the
// interpreter happened to run the warps in: a consumer that rewrites a stage before waiting for the warps that
// read it is caught even where, here, they read first. The interpreter's other checks see only what a given
// interleaving breaks (bytes read before a TMA copy lands, a stage written while a wgmma product reads it);
// this one sees what another interleaving, the GPU's, could break.
//
// Lanes of one warp run in lockstep here, so a warp is the unit: accesses of the same warp never race.
#ifndef ZYFA_ASMGEN_INTERPRETER_RACES_HPP_
#define ZYFA_ASMGEN_INTERPRETER_RACES_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zyfa::asmgen {

class SharedRaces {
 public:
  // One clock per warp: what of each warp's history a warp (or a barrier) has seen.
  using Clocks = std::vector<uint32_t>;

  void reset(int warps, size_t shared_bytes);
  Clocks empty_clocks() const { return Clocks(size_t(warps_), 0); }
  const Clocks &clocks(int warp) const { return clocks_[size_t(warp)]; }

  // `warp` reads or writes [addr, addr + bytes) now; "" unless it races an access of another warp.
  std::string read(int warp, size_t addr, size_t bytes, const char *what);
  std::string write(int warp, size_t addr, size_t bytes, const char *what);
  // A write made on `issuer`'s behalf with the clocks it had then (a TMA copy, landing later).
  std::string write_as(int issuer, const Clocks &issuer_clocks, size_t addr, size_t bytes, const char *what);

  // `warp`'s history so far goes into `sync` (an arrive), and the warp starts a new epoch.
  void release(int warp, Clocks *sync);
  // The epoch after an arrive whose history went into its barriers some other way (per lane, say).
  void next_epoch(int warp) { ++clocks_[size_t(warp)][size_t(warp)]; }
  // `warp` has seen everything `sync` holds (a completed wait).
  void acquire(int warp, const Clocks &sync);
  static void join(Clocks *into, const Clocks &from);

 private:
  int warps_ = 0;
  std::vector<Clocks> clocks_;         // by warp
  std::vector<uint32_t> write_clock_;  // per shared byte, the last write's epoch (0: never written) ...
  std::vector<uint8_t> write_warp_;    // ... and its warp
  std::vector<uint32_t> read_clock_;   // per shared byte and warp, that warp's last read's epoch
};

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_INTERPRETER_RACES_HPP_
