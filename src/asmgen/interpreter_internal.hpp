// What interpreter.cpp (the plain ISA) and interpreter_hopper.cpp (the Hopper ops and their memory model) share:
// a warp's state, and the views of register bits as numbers.
#ifndef ZYFA_ASMGEN_INTERPRETER_INTERNAL_HPP_
#define ZYFA_ASMGEN_INTERPRETER_INTERNAL_HPP_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <utility>
#include <memory>
#include <vector>

#include "asmgen/interpreter.hpp"

namespace zyfa::asmgen {
namespace interp {

inline constexpr int kWarpSize = 32;

inline uint64_t width_mask(Type t) {
  const int bits = type_bits(t);
  return bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
}
inline float as_f32(uint64_t bits) {
  const uint32_t u = uint32_t(bits);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint64_t of_f32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
// An arithmetic result as the GPU writes it (every f32 operation here, products and sums of the matrix
// units too): every NaN is the canonical 0x7fffffff (CUDA does not keep NaN payloads or signs; x86 gives
// 0xffc00000), which lean P's code clamp reads as a NaN code (numerics.h).
inline uint64_t of_f32_result(float f) { return std::isnan(f) ? uint64_t(0x7fffffffu) : of_f32(f); }
inline int64_t as_signed(uint64_t bits, Type t) {
  const int n = type_bits(t);
  if (n == 64) return int64_t(bits);
  const uint64_t sign = uint64_t(1) << (n - 1);
  bits &= width_mask(t);
  return int64_t((bits ^ sign) - sign);
}

}  // namespace interp

struct Interpreter::Warp {
  // kBarrier: at the CTA barrier; kNamed: at named barrier named_id; kSpin: an mbarrier wait that failed,
  // retried in the next round.
  enum class State { kRunning, kBarrier, kNamed, kSpin, kExited };
  struct Copy {
    uint32_t dst;
    uintptr_t src;
    uint32_t src_bytes;
    std::shared_ptr<const SharedRaces::Clocks> issued;  // the warp's clocks at the issue
  };
  int index = 0;
  int named_id = -1;
  uint32_t grid_dependency_waited = 0;  // lanes past griddepcontrol.wait
  size_t pc = 0;
  // Divergence: a forward branch that some active lanes take parks them at its target, which is where
  // they join the others again (the emitter's if-then shape); `mask` holds the lanes running now.
  uint32_t mask = ~0u;
  std::vector<std::pair<size_t, uint32_t>> joins;  // (target, mask to restore there), innermost last
  State state = State::kRunning;
  std::vector<uint64_t> regs;
  std::vector<Copy> open_group[interp::kWarpSize];              // issued, not yet committed
  std::vector<std::vector<Copy>> committed[interp::kWarpSize];  // oldest first
  // wgmma runs asynchronously on the GPU: the registers of a product in flight (its A fragments, its
  // accumulator) belong to it until a wgmma.wait_group retires its group. The interpreter computes each
  // product when issued, so it tracks them instead: wgmma_busy counts, per register, the pending products
  // that use it, and any other instruction that reads or writes such a register is an error.
  std::vector<Reg> wgmma_open;                    // issued since the last commit
  std::deque<std::vector<Reg>> wgmma_committed;   // committed groups, oldest first
  std::vector<uint32_t> wgmma_busy;               // by register id
  // The shared-memory bytes those products read (A from a descriptor, B), grouped as the registers are.
  std::vector<uint32_t> wgmma_open_smem;
  std::deque<std::vector<uint32_t>> wgmma_committed_smem;
  uint64_t &r(Reg reg, int lane) { return regs[size_t(reg.id) * interp::kWarpSize + size_t(lane)]; }
  int thread(int lane) const { return index * interp::kWarpSize + lane; }  // %tid.x of the lane
  bool dependency_waited(int lane) const { return (grid_dependency_waited >> lane) & 1; }
  // Whether `lane` runs `in`: in the running mask, and its guard (if any) holds.
  bool active(const Instr &in, int lane) {
    if (((mask >> lane) & 1) == 0) return false;
    if (!in.guard.valid()) return true;
    return (r(in.guard, lane) != 0) != in.guard_negated;
  }
};

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_INTERPRETER_INTERNAL_HPP_
