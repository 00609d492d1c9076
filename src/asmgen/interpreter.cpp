// The interpreter's run loop and the plain PTX ISA; the Hopper ops and their memory model are interpreter_hopper.cpp.
#include "asmgen/interpreter.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <stdexcept>

#include "asmgen/interpreter_internal.hpp"
#include "kernels/numerics.h"
#include "ref/tensor_core_sums.hpp"

namespace zyfa::asmgen {

using interp::as_f32;
using interp::as_signed;
using interp::kWarpSize;
using interp::of_f32;
using interp::of_f32_result;
using interp::width_mask;

namespace {

// IEEE binary16, round to nearest even (exact for every e4m3 value).
uint16_t f16_bits(float x) {
  const uint32_t u = uint32_t(of_f32(x));
  const uint32_t sign = (u >> 16) & 0x8000u;
  const float a = std::fabs(x);
  if (std::isnan(x)) return uint16_t(sign | 0x7e00u);
  if (a >= 65520.0f) return uint16_t(sign | 0x7c00u);
  if (a < 0x1p-14f) {  // subnormal: multiples of 2^-24
    const float n = std::nearbyint(a * 0x1p24f);
    return uint16_t(sign | uint32_t(n));
  }
  int e;
  const float f = std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1)
  float mant = std::nearbyint((f * 2.0f - 1.0f) * 1024.0f);
  int exp = e - 1 + 15;
  if (mant >= 1024.0f) {
    mant = 0.0f;
    ++exp;
  }
  if (exp >= 31) return uint16_t(sign | 0x7c00u);
  return uint16_t(sign | uint32_t(exp) << 10 | uint32_t(mant));
}
float f16_value(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
  float v;
  if (exp == 31) v = mant ? NAN : INFINITY;
  else if (exp == 0) v = std::ldexp(float(mant), -24);
  else v = std::ldexp(float(1024 + mant), exp - 25);
  return sign ? -v : v;
}
// ex2.approx.ftz / lg2.approx.ftz modelled exactly, with their flush of subnormal inputs and results.
float flush(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

}  // namespace


Interpreter::Interpreter(const Program &program) : p_(program), label_at_(program.labels.size(), SIZE_MAX) {
  for (size_t i = 0; i < p_.code.size(); ++i)
    if (p_.code[i].op == Op::kLabel) label_at_[size_t(p_.code[i].label)] = i;
}

void Interpreter::add_region(const void *begin, size_t bytes, bool writable) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(begin);
  regions_.push_back({b, b + bytes, writable});
}

void Interpreter::add_preceding_grid_output(const void *begin, size_t bytes) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(begin);
  regions_.push_back({b, b + bytes, false, true});
}

std::string Interpreter::grid_dependency_ok(uintptr_t addr, size_t bytes, bool waited, const char *what) const {
  if (waited) return "";
  for (const Region &r : regions_)
    if (r.preceding_grid_output && addr < r.end && addr + bytes > r.begin)
      return std::string(what) + " touches memory a preceding grid writes before this thread's griddepcontrol.wait";
  return "";
}

bool Interpreter::global_ok(uintptr_t addr, size_t bytes, bool write) const {
  for (const Region &r : regions_)
    if (addr >= r.begin && addr + bytes <= r.end && (!write || r.writable)) return true;
  return false;
}

std::string Interpreter::run(int grid, const void *params) {
  executed_ = 0;
  for (int cta = 0; cta < grid; ++cta) {
    std::string e = run_cta(cta, grid, params);
    if (!e.empty()) return "CTA " + std::to_string(cta) + ": " + e;
  }
  return "";
}

std::string Interpreter::run_cta(int cta, int grid, const void *params) {
  smem_.assign(size_t(p_.dynamic_smem_bytes), 0xa5);  // garbage, as on the GPU
  smem_wgmma_readers_.assign(smem_.size(), 0);
  smem_landing_.assign(smem_.size(), 0);
  smem_unfenced_.assign(smem_.size(), kFenced);
  unfenced_by_thread_.assign(size_t(p_.threads), {});
  pending_tma_.clear();
  mbars_.assign(smem_.size() / 8, Mbarrier{});
  mbar_valid_.assign(smem_.size() / 8, false);
  for (NamedBarrier &n : named_) n = NamedBarrier{};
  std::vector<Warp> warps(size_t(p_.threads / kWarpSize));
  races_.reset(int(warps.size()), smem_.size());
  warps_ = &warps;
  for (size_t w = 0; w < warps.size(); ++w) {
    warps[w].index = int(w);
    warps[w].regs.assign(size_t(p_.regs.count()) * kWarpSize, 0x5a5a5a5a5a5a5a5aull);
    warps[w].wgmma_busy.assign(size_t(p_.regs.count()), 0);
  }
  for (;;) {
    moved_ = false;
    for (Warp &w : warps) {
      if (w.state == Warp::State::kSpin) w.state = Warp::State::kRunning;
      while (w.state == Warp::State::kRunning) {
        std::string e = step(w, cta, grid, params);
        if (!e.empty()) {
          const Instr &in = p_.code[w.pc];
          return "warp " + std::to_string(w.index) + ", instruction " + std::to_string(w.pc) + " (op " +
                 std::to_string(int(in.op)) + "): " + e;
        }
      }
    }
    size_t exited = 0, waiting = 0;
    for (const Warp &w : warps) {
      exited += w.state == Warp::State::kExited;
      waiting += w.state == Warp::State::kBarrier;
    }
    if (exited == warps.size()) {
      if (!pending_tma_.empty()) return "TMA copies still in flight when every warp exited";
      for (const Warp &w : warps)
        for (int lane = 0; lane < kWarpSize; ++lane)
          if (!w.committed[lane].empty() || !w.open_group[lane].empty()) return "cp.async copies never waited for";
      for (const Warp &w : warps)
        if (!w.wgmma_committed.empty() || !w.wgmma_open.empty()) return "wgmma products never waited for";
      return "";
    }
    if (waiting == 0 || waiting + exited < warps.size()) {
      if (moved_) continue;
      if (!pending_tma_.empty()) {  // nothing else can move: the copies in flight land
        if (std::string e = land_tma_copies(UINT64_MAX); !e.empty()) return e;
        continue;
      }
      std::string states;
      for (const Warp &w : warps)
        states += " " + std::to_string(w.index) + ":" + std::to_string(int(w.state)) + "@" + std::to_string(w.pc);
      return "deadlock: no warp can move (warp:state@instruction" + states + ")";
    }
    if (exited > 0) return "a barrier is awaited by " + std::to_string(waiting) + " warps after others exited";
    int64_t id = -1;
    SharedRaces::Clocks all = races_.empty_clocks();
    for (Warp &w : warps) {
      const Instr &in = p_.code[w.pc];
      if (id >= 0 && in.aux != id) return "warps wait at different barriers";
      id = in.aux;
      w.state = Warp::State::kRunning;
      ++w.pc;
      races_.release(w.index, &all);
    }
    for (Warp &w : warps) races_.acquire(w.index, all);
  }
}

std::string Interpreter::step(Warp &w, int cta, int grid, const void *params) {
  while (!w.joins.empty() && w.joins.back().first == w.pc) {
    w.mask = w.joins.back().second;
    w.joins.pop_back();
  }
  const Instr &in = p_.code[w.pc];
  ++executed_;
  if (in.op != Op::kWgmma) {  // a product may chain on the accumulator of the one before it
    auto busy = [&](Reg r) { return r.valid() && w.wgmma_busy[size_t(r.id)] != 0; };
    for (Reg r : in.dst)
      if (busy(r)) return "writes %" + p_.regs.name(r) + " while a wgmma product that uses it is in flight";
    for (const Operand &o : in.src)
      if (o.kind == Operand::Kind::kReg && busy(o.reg))
        return "reads %" + p_.regs.name(o.reg) + " while a wgmma product that uses it is in flight";
    if (busy(in.guard)) return "a guard a wgmma product in flight uses";
  }
  if (in.op == Op::kBarSync || in.op == Op::kBarArrive || in.op == Op::kMbarArrive || in.op == Op::kMbarExpectTx)
    for (int lane = 0; lane < kWarpSize; ++lane)
      if (w.active(in, lane)) hand_over_unfenced(w.thread(lane));
  switch (in.op) {
    case Op::kBarSync:
      if (in.src.empty()) break;  // the CTA's barrier 0, below
      [[fallthrough]];
    case Op::kBarArrive:
    case Op::kParamAddress:
    case Op::kPrefetchTensormap:
    case Op::kSetmaxnreg:
    case Op::kGridDependencyWait:
    case Op::kFenceProxyAsync:
    case Op::kFenceMbarrierInit:
    case Op::kMbarInit:
    case Op::kMbarArrive:
    case Op::kMbarExpectTx:
    case Op::kMbarWait:
    case Op::kTmaLoad4d:
    case Op::kWgmma:
    case Op::kWgmmaFence:
    case Op::kWgmmaCommit:
    case Op::kWgmmaWait: return step_hopper(w, params);
    default: moved_ = true; break;
  }
  auto active = [&](int lane) { return w.active(in, lane); };
  auto val = [&](const Operand &o, Type t, int lane) -> uint64_t {
    switch (o.kind) {
      case Operand::Kind::kReg: return w.r(o.reg, lane) & width_mask(t);
      case Operand::Kind::kInt: return uint64_t(o.i) & width_mask(t);
      case Operand::Kind::kF32: return of_f32(o.f);
    }
    return 0;
  };
  auto fval = [&](const Operand &o, int lane) { return as_f32(val(o, Type::kF32, lane)); };
  auto set = [&](Reg d, int lane, uint64_t v) { w.r(d, lane) = v & width_mask(p_.regs.type(d)); };
  const Type t = in.type;
  const bool f = t == Type::kF32;
  const bool collective = in.op == Op::kShflBfly || in.op == Op::kShflIdx || in.op == Op::kVoteAny || in.op == Op::kLdmatrixX4 ||
                          in.op == Op::kStmatrixX4 ||
                          in.op == Op::kMmaF16 || in.op == Op::kBarSync;
  if (collective && in.guard.valid()) return "a warp-collective instruction is predicated";
  if (collective && w.mask != ~0u) return "a warp-collective instruction in divergent code";

  switch (in.op) {
    case Op::kLabel: break;
    case Op::kBra: {
      uint32_t taken = 0;
      for (int lane = 0; lane < kWarpSize; ++lane)
        if (active(lane)) taken |= 1u << lane;
      const size_t target = label_at_[size_t(in.label)];
      if (target == SIZE_MAX) return "branch to a label never placed";
      if (!w.joins.empty() && taken != 0 && target > w.joins.back().first)
        return "a branch out of a divergent region";
      if (taken == w.mask) {
        w.pc = target;
        return "";
      }
      if (taken != 0) {  // divergent: the taking lanes wait at the target
        if (target <= w.pc) return "divergent backward branch";
        w.joins.push_back({target, w.mask});
        w.mask &= ~taken;
      }
      break;
    }
    case Op::kExit:
      if (w.mask != ~0u) return "an exit in divergent code";
      for (int lane = 0; lane < kWarpSize; ++lane)
        if (!active(lane)) return "a partial exit";
      w.state = Warp::State::kExited;
      return "";
    case Op::kBarSync:
      if (in.aux != 0) return "bar.sync without a thread count on a barrier other than 0";
      w.state = Warp::State::kBarrier;
      return "";
    case Op::kCpAsync: {
      const auto issued = std::make_shared<const SharedRaces::Clocks>(races_.clocks(w.index));
      for (int lane = 0; lane < kWarpSize; ++lane) {
        if (!active(lane)) continue;
        const uint32_t dst = uint32_t(w.r(in.src[0].reg, lane)) + uint32_t(in.offset);
        const uintptr_t src = uintptr_t(w.r(in.src[1].reg, lane));
        const uint32_t bytes = uint32_t(val(in.src[2], Type::kU32, lane));
        if (bytes != 0 && bytes != 16) return "cp.async source size other than 0 or 16";
        if (dst % 16 != 0 || size_t(dst) + 16 > smem_.size()) return "cp.async destination outside shared memory";
        if (bytes != 0 && (src % 16 != 0 || !global_ok(src, bytes, false))) return "cp.async source outside every region";
        if (bytes != 0)  // a zero-fill copy reads nothing
          if (std::string e = grid_dependency_ok(src, bytes, w.dependency_waited(lane), "cp.async"); !e.empty())
            return e;
        w.open_group[lane].push_back({dst, src, bytes, issued});
      }
      break;
    }
    case Op::kCpAsyncCommit:
      for (int lane = 0; lane < kWarpSize; ++lane) {
        if (!active(lane)) continue;
        w.committed[lane].push_back(std::move(w.open_group[lane]));
        w.open_group[lane].clear();
      }
      break;
    case Op::kCpAsyncWait:
      for (int lane = 0; lane < kWarpSize; ++lane) {
        if (!active(lane)) continue;
        auto &groups = w.committed[lane];
        while (groups.size() > size_t(in.aux)) {
          for (const Warp::Copy &c : groups.front()) {
            if (std::string e = smem_writable(c.dst, 16, "cp.async"); !e.empty()) return e;
            // Checked against what the warp had seen at the issue (the copy may land any time after it),
            // stamped with the wait's epoch (it may land as late as that).
            const uint32_t now = races_.clocks(w.index)[size_t(w.index)];
            if (std::string e = races_.write_checked(w.index, *c.issued, now, c.dst, 16, "cp.async"); !e.empty())
              return e;
            std::memset(&smem_[c.dst], 0, 16);
            if (c.src_bytes) std::memcpy(&smem_[c.dst], reinterpret_cast<const void *>(c.src), c.src_bytes);
            generic_write(w.thread(lane), c.dst, 16);
          }
          groups.erase(groups.begin());
        }
      }
      break;
    case Op::kShflBfly: {
      uint64_t src[kWarpSize];
      for (int lane = 0; lane < kWarpSize; ++lane) src[lane] = w.r(in.src[0].reg, lane);
      for (int lane = 0; lane < kWarpSize; ++lane) set(in.dst[0], lane, src[lane ^ int(in.aux)]);
      break;
    }
    case Op::kShflIdx: {
      const uint64_t v = w.r(in.src[0].reg, int(in.aux));
      for (int lane = 0; lane < kWarpSize; ++lane) set(in.dst[0], lane, v);
      break;
    }
    case Op::kVoteAny: {
      bool any = false;
      for (int lane = 0; lane < kWarpSize; ++lane) any = any || w.r(in.src[0].reg, lane) != 0;
      for (int lane = 0; lane < kWarpSize; ++lane) set(in.dst[0], lane, any ? 1 : 0);
      break;
    }
    case Op::kLdmatrixX4: {
      uint64_t row_addr[kWarpSize];
      for (int lane = 0; lane < kWarpSize; ++lane) {
        row_addr[lane] = (w.r(in.src[0].reg, lane) & 0xffffffffu) + uint64_t(in.offset);
        if (row_addr[lane] % 16 != 0 || row_addr[lane] + 16 > smem_.size()) return "ldmatrix row outside shared memory";
        if (std::string e = smem_landed(size_t(row_addr[lane]), 16, "ldmatrix"); !e.empty()) return e;
        if (std::string e = races_.read(w.index, size_t(row_addr[lane]), 16, "ldmatrix"); !e.empty()) return e;
      }
      auto elem = [&](int matrix, int row, int col) {  // 16-bit element of one 8x8 matrix
        uint16_t v;
        std::memcpy(&v, &smem_[size_t(row_addr[8 * matrix + row]) + size_t(2 * col)], 2);
        return uint64_t(v);
      };
      for (int lane = 0; lane < kWarpSize; ++lane)
        for (int m = 0; m < 4; ++m) {
          const int g = lane / 4, c = 2 * (lane % 4);
          const uint64_t lo = in.transpose ? elem(m, c, g) : elem(m, g, c);
          const uint64_t hi = in.transpose ? elem(m, c + 1, g) : elem(m, g, c + 1);
          set(in.dst[size_t(m)], lane, lo | hi << 16);
        }
      break;
    }
    case Op::kStmatrixX4: {
      uint64_t row_addr[kWarpSize];
      for (int lane = 0; lane < kWarpSize; ++lane) {
        row_addr[lane] = (w.r(in.src[0].reg, lane) & 0xffffffffu) + uint64_t(in.offset);
        if (row_addr[lane] % 16 != 0 || row_addr[lane] + 16 > smem_.size()) return "stmatrix row outside shared memory";
        if (std::string e = smem_writable(size_t(row_addr[lane]), 16, "stmatrix"); !e.empty()) return e;
        if (std::string e = races_.write(w.index, size_t(row_addr[lane]), 16, "stmatrix"); !e.empty()) return e;
      }
      for (int lane = 0; lane < kWarpSize; ++lane)
        for (int m = 0; m < 4; ++m) {
          const uint32_t v = uint32_t(w.r(in.src[size_t(1 + m)].reg, lane));
          std::memcpy(&smem_[size_t(row_addr[8 * m + lane / 4]) + size_t(4 * (lane % 4))], &v, 4);
        }
      for (int lane = 0; lane < kWarpSize; ++lane)
        generic_write(w.thread(lane), size_t(row_addr[lane]), 16);
      break;
    }
    case Op::kMmaF16: {
      // m16n8k16 fragments: A a0 (g, 2t..), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..); B b0 (k 2t.., n g),
      // b1 (k 2t+8.., n g); C/D c0 c1 (g, 2t, 2t+1), c2 c3 (g+8, 2t, 2t+1).
      double A[16][16], B[16][8], C[16][8];
      auto half = [](uint64_t reg, int h) { return double(f16_value(uint16_t(reg >> (16 * h)))); };
      for (int lane = 0; lane < kWarpSize; ++lane) {
        const int g = lane / 4, tq = lane % 4;
        for (int h = 0; h < 2; ++h) {
          A[g][2 * tq + h] = half(w.r(in.src[0].reg, lane), h);
          A[g + 8][2 * tq + h] = half(w.r(in.src[1].reg, lane), h);
          A[g][2 * tq + 8 + h] = half(w.r(in.src[2].reg, lane), h);
          A[g + 8][2 * tq + 8 + h] = half(w.r(in.src[3].reg, lane), h);
          B[2 * tq + h][g] = half(w.r(in.src[4].reg, lane), h);
          B[2 * tq + 8 + h][g] = half(w.r(in.src[5].reg, lane), h);
          C[g][2 * tq + h] = as_f32(w.r(in.src[6 + size_t(h)].reg, lane));
          C[g + 8][2 * tq + h] = as_f32(w.r(in.src[8 + size_t(h)].reg, lane));
        }
      }
      for (int lane = 0; lane < kWarpSize; ++lane) {
        const int g = lane / 4, tq = lane % 4;
        for (int e = 0; e < 4; ++e) {
          const int row = g + 8 * (e / 2), col = 2 * tq + e % 2;
          double sum = C[row][col];
          for (int k = 0; k < 16; ++k) sum += A[row][k] * B[k][col];  // exact: products of f16 fit a double
          set(in.dst[size_t(e)], lane, of_f32_result(float(sum)));
        }
      }
      break;
    }
    default:
      for (int lane = 0; lane < kWarpSize; ++lane) {
        if (!active(lane)) continue;
        auto a = [&](size_t i) { return val(in.src[i], t, lane); };
        auto sa = [&](size_t i) { return as_signed(a(i), t); };
        const Reg d = in.dst.empty() ? Reg{} : in.dst[0];
        switch (in.op) {
          case Op::kMov: set(d, lane, a(0)); break;
          case Op::kAdd:
            set(d, lane, f ? of_f32_result(fval(in.src[0], lane) + fval(in.src[1], lane)) : a(0) + a(1));
            break;
          case Op::kSub:
            set(d, lane, f ? of_f32_result(fval(in.src[0], lane) - fval(in.src[1], lane)) : a(0) - a(1));
            break;
          case Op::kMul: set(d, lane, of_f32_result(fval(in.src[0], lane) * fval(in.src[1], lane))); break;
          case Op::kMulLo: set(d, lane, a(0) * a(1)); break;
          case Op::kMulWide: {
            const Type st = in.src_type;
            const uint64_t x = val(in.src[0], st, lane), y = val(in.src[1], st, lane);
            set(d, lane, is_signed(st) ? uint64_t(as_signed(x, st) * as_signed(y, st)) : x * y);
            break;
          }
          case Op::kMad: set(d, lane, a(0) * a(1) + a(2)); break;
          case Op::kDiv:
            if (f) {
              set(d, lane, of_f32_result(fval(in.src[0], lane) / fval(in.src[1], lane)));
            } else {
              if (a(1) == 0) return "integer division by zero";
              set(d, lane, is_signed(t) ? uint64_t(sa(0) / sa(1)) : a(0) / a(1));
            }
            break;
          case Op::kMin:
          case Op::kMax: {
            const bool mn = in.op == Op::kMin;
            if (f) {
              const float x = fval(in.src[0], lane), y = fval(in.src[1], lane);
              set(d, lane, of_f32(mn ? std::fmin(x, y) : std::fmax(x, y)));
            } else if (is_signed(t)) {
              set(d, lane, uint64_t(mn ? std::min(sa(0), sa(1)) : std::max(sa(0), sa(1))));
            } else {
              set(d, lane, mn ? std::min(a(0), a(1)) : std::max(a(0), a(1)));
            }
            break;
          }
          case Op::kShl: {
            const uint64_t n = val(in.src[1], Type::kU32, lane);
            set(d, lane, n >= uint64_t(type_bits(t)) ? 0 : a(0) << n);
            break;
          }
          case Op::kShr: {
            const uint64_t n = std::min<uint64_t>(val(in.src[1], Type::kU32, lane), uint64_t(type_bits(t) - 1));
            set(d, lane, is_signed(t) ? uint64_t(sa(0) >> n)
                                      : (val(in.src[1], Type::kU32, lane) >= uint64_t(type_bits(t)) ? 0 : a(0) >> n));
            break;
          }
          case Op::kAnd: set(d, lane, a(0) & a(1)); break;
          case Op::kOr: set(d, lane, a(0) | a(1)); break;
          case Op::kXor: set(d, lane, a(0) ^ a(1)); break;
          case Op::kFma:
            set(d, lane, of_f32_result(std::fma(fval(in.src[0], lane), fval(in.src[1], lane), fval(in.src[2], lane))));
            break;
          case Op::kEx2:
            set(d, lane, of_f32_result(flush(float(std::exp2(double(flush(fval(in.src[0], lane))))))));
            break;
          case Op::kLg2:
            set(d, lane, of_f32_result(flush(float(std::log2(double(flush(fval(in.src[0], lane))))))));
            break;
          case Op::kCvt: {
            const Type st = in.src_type;
            const uint64_t x = val(in.src[0], st, lane);
            if (t == Type::kF32 && st == Type::kF32) {
              const float v = as_f32(x);
              float r = v;
              if (in.round == Round::kRpi) r = std::ceil(v);
              else if (in.round == Round::kRmi) r = std::floor(v);
              else if (in.round == Round::kRzi) r = std::trunc(v);
              else if (in.round == Round::kRni) r = std::nearbyint(v);
              set(d, lane, of_f32(r));
            } else if (t == Type::kF32) {  // from an integer, round to nearest
              set(d, lane, of_f32(is_signed(st) ? float(as_signed(x, st)) : float(x)));
            } else if (st == Type::kF32) {  // to an integer: rzi/rmi/rpi/rni, saturating, NaN -> 0
              const float v = as_f32(x);
              double r = in.round == Round::kRmi ? std::floor(v)
                         : in.round == Round::kRpi ? std::ceil(v)
                         : in.round == Round::kRni ? std::nearbyint(v)
                                                   : std::trunc(v);
              if (in.round == Round::kNone || in.round == Round::kRn) return "cvt to an integer needs an integer rounding";
              if (std::isnan(r)) r = 0;
              // Saturate against the exact powers of two: 2^64 - 1 and 2^63 - 1 are not doubles (they round
              // up, and converting that to the integer type is undefined).
              const int bits = type_bits(t);
              const double lo = is_signed(t) ? -std::ldexp(1.0, bits - 1) : 0.0;
              const double above = std::ldexp(1.0, is_signed(t) ? bits - 1 : bits);  // the first value out
              const uint64_t top = is_signed(t) ? (uint64_t(1) << (bits - 1)) - 1 : ~uint64_t(0) >> (64 - bits);
              if (r >= above) set(d, lane, top);
              else set(d, lane, is_signed(t) ? uint64_t(int64_t(std::max(r, lo))) : uint64_t(std::max(r, lo)));
            } else {  // integer widening or narrowing
              set(d, lane, is_signed(st) ? uint64_t(as_signed(x, st)) : x);
            }
            break;
          }
          case Op::kCvtE4m3x2:
            set(d, lane, uint64_t(numerics::e4m3_code(fval(in.src[0], lane))) << 8 |
                             numerics::e4m3_code(fval(in.src[1], lane)));
            break;
          case Op::kCvtF16x2E4m3x2: {
            const uint64_t x = val(in.src[0], Type::kB16, lane);
            const uint64_t lo = f16_bits(numerics::e4m3_value(uint8_t(x & 0xff)));
            const uint64_t hi = f16_bits(numerics::e4m3_value(uint8_t(x >> 8)));
            set(d, lane, lo | hi << 16);
            break;
          }
          case Op::kCvtF16x2F32:
            set(d, lane, uint64_t(f16_bits(fval(in.src[0], lane))) << 16 | f16_bits(fval(in.src[1], lane)));
            break;
          case Op::kSubF16x2: {
            const uint64_t x = val(in.src[0], Type::kB32, lane), y = val(in.src[1], Type::kB32, lane);
            uint64_t r = 0;
            for (int h = 0; h < 2; ++h)  // exact in f32 for the operands split P gives it, then rounded once
              r |= uint64_t(f16_bits(f16_value(uint16_t(x >> (16 * h))) - f16_value(uint16_t(y >> (16 * h)))))
                   << (16 * h);
            set(d, lane, r);
            break;
          }
          case Op::kCvtE4m3x2F16x2: {
            const uint64_t x = val(in.src[0], Type::kB32, lane);
            set(d, lane, uint64_t(numerics::e4m3_code(f16_value(uint16_t(x >> 16)))) << 8 |
                             numerics::e4m3_code(f16_value(uint16_t(x))));
            break;
          }
          case Op::kCvtBf16x2:
            set(d, lane, uint64_t(numerics::bf16_bits(fval(in.src[0], lane))) << 16 |
                             numerics::bf16_bits(fval(in.src[1], lane)));
            break;
          case Op::kPack16x2:
            set(d, lane, val(in.src[0], Type::kB16, lane) | val(in.src[1], Type::kB16, lane) << 16);
            break;
          case Op::kUnpack16x2: {
            const uint64_t x = val(in.src[0], Type::kB32, lane);
            set(in.dst[0], lane, x & 0xffff);
            set(in.dst[1], lane, x >> 16);
            break;
          }
          case Op::kPrmt: {
            const uint64_t bytes = a(0) | a(1) << 32, sel = a(2);
            uint64_t r = 0;
            for (int i = 0; i < 4; ++i) {
              const uint64_t s = (sel >> (4 * i)) & 0xf;
              uint64_t byte = (bytes >> (8 * (s & 7))) & 0xff;
              if (s & 8) byte = (byte & 0x80) ? 0xff : 0;  // sign replication
              r |= byte << (8 * i);
            }
            set(d, lane, r);
            break;
          }
          case Op::kMaxS16x2: {
            const uint64_t x = val(in.src[0], Type::kB32, lane), y = val(in.src[1], Type::kB32, lane);
            uint64_t r = 0;
            for (int h = 0; h < 2; ++h) {
              const int16_t xh = int16_t(uint16_t(x >> (16 * h))), yh = int16_t(uint16_t(y >> (16 * h)));
              r |= uint64_t(uint16_t(xh > yh ? xh : yh)) << (16 * h);
            }
            set(d, lane, r);
            break;
          }
          case Op::kSetp: {
            bool r;
            if (f) {
              const float x = fval(in.src[0], lane), y = fval(in.src[1], lane);
              switch (in.cmp) {
                case Cmp::kLt: r = x < y; break;
                case Cmp::kLe: r = x <= y; break;
                case Cmp::kGt: r = x > y; break;
                case Cmp::kGe: r = x >= y; break;
                case Cmp::kEq: r = x == y; break;
                default: r = x != y && !std::isnan(x) && !std::isnan(y); break;
              }
            } else {
              const bool sgn = is_signed(t);
              const int c = sgn ? (sa(0) < sa(1) ? -1 : sa(0) > sa(1)) : (a(0) < a(1) ? -1 : a(0) > a(1));
              switch (in.cmp) {
                case Cmp::kLt: r = c < 0; break;
                case Cmp::kLe: r = c <= 0; break;
                case Cmp::kGt: r = c > 0; break;
                case Cmp::kGe: r = c >= 0; break;
                case Cmp::kEq: r = c == 0; break;
                default: r = c != 0; break;
              }
            }
            set(d, lane, r ? 1 : 0);
            break;
          }
          case Op::kSelp: set(d, lane, w.r(in.src[2].reg, lane) ? a(0) : a(1)); break;
          case Op::kLdParam:
            if (in.offset < 0 || in.offset + type_bits(t) / 8 > p_.param_bytes) return "ld.param outside the block";
            {
              uint64_t v = 0;
              std::memcpy(&v, static_cast<const uint8_t *>(params) + in.offset, size_t(type_bits(t) / 8));
              set(d, lane, v);
            }
            break;
          case Op::kLdGlobal:
          case Op::kStGlobal:
          case Op::kLdShared:
          case Op::kStShared: {
            const bool global = in.op == Op::kLdGlobal || in.op == Op::kStGlobal;
            const bool store = in.op == Op::kStGlobal || in.op == Op::kStShared;
            const size_t n = store ? in.src.size() - 1 : in.dst.size();
            const size_t elem = size_t(type_bits(t) / 8);
            const uint64_t addr = (global ? w.r(in.src[0].reg, lane) : (w.r(in.src[0].reg, lane) & 0xffffffffu)) +
                                  uint64_t(in.offset);
            if (addr % (n * elem) != 0) return "misaligned access";
            uint8_t *mem;
            if (global) {
              if (!global_ok(uintptr_t(addr), n * elem, store)) return "global access outside every region";
              const char *access = store ? "st.global" : "ld.global";
              if (std::string e = grid_dependency_ok(uintptr_t(addr), n * elem, w.dependency_waited(lane), access);
                  !e.empty())
                return e;
              mem = reinterpret_cast<uint8_t *>(uintptr_t(addr));
            } else {
              if (addr + n * elem > smem_.size()) return "shared access outside the allocation";
              if (store) {
                if (std::string e = smem_writable(size_t(addr), n * elem, "st.shared"); !e.empty()) return e;
                if (std::string e = races_.write(w.index, size_t(addr), n * elem, "st.shared"); !e.empty()) return e;
                generic_write(w.thread(lane), size_t(addr), n * elem);
              } else {
                if (std::string e = smem_landed(size_t(addr), n * elem, "ld.shared"); !e.empty()) return e;
                if (std::string e = races_.read(w.index, size_t(addr), n * elem, "ld.shared"); !e.empty()) return e;
              }
              mem = &smem_[size_t(addr)];
            }
            for (size_t i = 0; i < n; ++i) {
              uint64_t v = 0;
              if (store) {
                v = val(in.src[1 + i], t, lane);
                std::memcpy(mem + i * elem, &v, elem);
              } else {
                std::memcpy(&v, mem + i * elem, elem);
                set(in.dst[i], lane, v);
              }
            }
            break;
          }
          case Op::kReadSpecial: {
            uint64_t v = 0;
            switch (in.special) {
              case Special::kTidX: v = uint64_t(w.thread(lane)); break;
              case Special::kCtaidX: v = uint64_t(cta); break;
              case Special::kNctaidX: v = uint64_t(grid); break;
              case Special::kSmemBase: v = 0; break;
            }
            set(d, lane, v);
            break;
          }
          default: return "the interpreter does not model this instruction";
        }
      }
      break;
  }
  ++w.pc;
  return "";
}

}  // namespace zyfa::asmgen
