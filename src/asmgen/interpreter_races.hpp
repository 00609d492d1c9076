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
  // What of each warp's history (and of its TMA copies') a warp, or a barrier, has seen.
  using Clocks = std::vector<uint32_t>;

  void reset(int warps, size_t shared_bytes);
  // Components 0 .. warps - 1: the warps; warps + w: warp w's TMA copies (an async agent, seen only through
  // the mbarrier its copies complete, never through the issuer's own releases).
  Clocks empty_clocks() const { return Clocks(2 * size_t(warps_), 0); }
  // The clocks a TMA copy issued by `warp` now carries: the issuer's, with a fresh epoch of its copy agent.
  // The issuer starts a new epoch: what it does after the issue is not ordered before the copy's completion.
  Clocks tma_issue(int warp) {
    Clocks c = clocks_[size_t(warp)];
    c[size_t(warps_ + warp)] = ++agent_epoch_[size_t(warp)];
    next_epoch(warp);
    return c;
  }
  int agent(int warp) const { return warps_ + warp; }
  // `warp` read shared byte `addr` until now (a wgmma product retired by wgmma.wait_group).
  void extend_read(int warp, size_t addr);
  // write_as, checked against `check` (the clocks at issue) but stamped with `stamp` (the epoch of completion).
  std::string write_checked(int issuer, const Clocks &check, uint32_t stamp, size_t addr, size_t bytes,
                            const char *what);
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
  std::string who(int index) const;  // a warp, or a warp's TMA copies
  std::string race(const char *what, size_t addr, int index, const char *earlier, int other) const;

  int warps_ = 0;
  std::vector<Clocks> clocks_;         // by warp
  std::vector<uint32_t> agent_epoch_;  // by warp, the epoch of its TMA copies' clock
  std::vector<uint32_t> write_clock_;  // per shared byte, the last write's epoch (0: never written) ...
  std::vector<uint8_t> write_warp_;    // ... and its writer (a warp, or warps + w: warp w's TMA copies)
  std::vector<uint32_t> read_clock_;   // per shared byte and warp, that warp's last read's epoch
};

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_INTERPRETER_RACES_HPP_
