// The Hopper part of the interpreter: mbarriers, named barriers, TMA, wgmma, and the generic/async proxy
// bookkeeping that checks the wgmma schedule's fences and hand-overs.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "asmgen/interpreter.hpp"
#include "asmgen/interpreter_internal.hpp"
#include "kernels/numerics.h"
#include "ref/tensor_core_sums.hpp"

namespace zyfa::asmgen {

using interp::as_f32;
using interp::as_signed;
using interp::kWarpSize;
using interp::of_f32_result;

namespace {

// A shared-memory address under a `width`-byte swizzle (TMA and wgmma alike): 16-byte chunk c of the
// 128-byte line holding `a` moves to c ^ (line % (width / 16)).
uint64_t swizzled(uint64_t a, uint64_t width) { return a ^ (((a >> 7) & (width / 16 - 1)) << 4); }

}  // namespace

Interpreter::Mbarrier *Interpreter::mbarrier(uint64_t addr) {
  addr &= 0xffffffffu;
  if (addr % 8 != 0 || addr + 8 > smem_.size() || !mbar_valid_[size_t(addr / 8)]) return nullptr;
  return &mbars_[size_t(addr / 8)];
}

// `arrivals` arrive and the transaction count moves by `tx`; the phase completes when both are done.
std::string Interpreter::mbar_update(uint64_t addr, int64_t arrivals, int64_t tx, const SharedRaces::Clocks &release) {
  Mbarrier *m = mbarrier(addr);
  if (m == nullptr) return "an mbarrier operation on an address no mbarrier.init made";
  m->tx += tx;
  m->pending -= arrivals;
  if (m->pending < 0) return "more arrivals on an mbarrier than its phase expects";
  SharedRaces::join(&m->released, release);
  if (m->pending == 0 && m->tx == 0) {
    ++m->phase;
    m->pending = m->count;
    SharedRaces::join(&m->completed, m->released);
    m->released.clear();
  }
  return "";
}

bool Interpreter::named_arrive(Warp &w, int id, int64_t count, bool waits) {
  NamedBarrier &n = named_[id];
  n.arrived += kWarpSize;
  races_.release(w.index, &n.released);
  if (n.arrived < count) return false;
  n.arrived -= count;
  if (waits) races_.acquire(w.index, n.released);
  for (Warp &o : *warps_)
    if (o.state == Warp::State::kNamed && o.named_id == id) {
      races_.acquire(o.index, n.released);
      o.state = Warp::State::kRunning;
      o.named_id = -1;
      ++o.pc;
    }
  n.released.clear();
  return true;
}

bool Interpreter::smem_at_desc(uint64_t desc, int row, int k, size_t *addr) const {
  const uint64_t start = (desc & 0x3FFF) << 4, stride = ((desc >> 32) & 0x3FFF) << 4;
  const uint64_t mode = desc >> 62;
  if (mode == 0) return false;  // the interleaved (unswizzled) layouts are not modelled
  const uint64_t width = mode == 1 ? 128 : mode == 2 ? 64 : 32;
  const uint64_t a = swizzled(start + uint64_t(row / 8) * stride + uint64_t(row % 8) * width + uint64_t(k), width);
  if (a >= smem_.size()) return false;
  *addr = size_t(a);
  return true;
}

std::string Interpreter::tma_load(const Warp &issuer, uint32_t dst, const InterpretedTensorMap &map,
                                  const int64_t coords[4], uint64_t mbar, bool grid_dependency_waited) {
  const uint32_t swz = map.swizzle_bytes;
  if (swz != 0 && swz != 32 && swz != 64 && swz != 128) return "TMA: a swizzle other than 0, 32, 64 or 128 bytes";
  if (swz != 0 && (dst % (8 * swz) != 0 || map.box[0] != swz)) return "TMA: a swizzled box not on its swizzle atom";
  const uint64_t bytes = uint64_t(map.box[0]) * map.box[1];
  if (size_t(dst) + bytes > smem_.size()) return "TMA: destination outside shared memory";
  PendingTma copy;
  copy.mbar = mbar;
  copy.issuer = issuer.index;
  copy.issuer_clocks = races_.tma_issue(issuer.index);
  copy.bytes.reserve(size_t(bytes));
  for (uint32_t r = 0; r < map.box[1]; ++r)
    for (uint32_t c = 0; c < map.box[0]; ++c) {
      const int64_t x[4] = {coords[0] + int64_t(c), coords[1] + int64_t(r), coords[2], coords[3]};
      uint8_t v = 0;
      bool inside = true;
      for (int i = 0; i < 4; ++i) inside = inside && x[i] >= 0 && uint64_t(x[i]) < map.dims[i];
      if (inside) {
        const uintptr_t src = uintptr_t(map.base + uint64_t(x[0]) + uint64_t(x[1]) * map.strides[0] +
                                        uint64_t(x[2]) * map.strides[1] + uint64_t(x[3]) * map.strides[2]);
        if (!global_ok(src, 1, false)) return "TMA: a source element outside every region";
        if (std::string e = grid_dependency_ok(src, 1, grid_dependency_waited, "TMA"); !e.empty()) return e;
        v = *reinterpret_cast<const uint8_t *>(src);
      }
      uint64_t a = uint64_t(dst) + uint64_t(r) * map.box[0] + c;
      if (swz != 0) a = swizzled(a, swz);
      copy.bytes.emplace_back(uint32_t(a), v);
      ++smem_landing_[size_t(a)];
    }
  pending_tma_.push_back(std::move(copy));
  return "";
}

std::string Interpreter::land_tma_copies(uint64_t mbar) {
  // Every lane of every spinning warp asks on each try: most asks find nothing to land.
  const auto lands = [mbar](const PendingTma &copy) { return mbar == UINT64_MAX || copy.mbar == mbar; };
  if (std::none_of(pending_tma_.begin(), pending_tma_.end(), lands)) return "";
  std::vector<PendingTma> copies, later;
  for (PendingTma &copy : pending_tma_) (lands(copy) ? copies : later).push_back(std::move(copy));
  pending_tma_ = std::move(later);
  for (const PendingTma &copy : copies) {
    for (const auto &[a, v] : copy.bytes) {
      if (std::string e = smem_writable(a, 1, "a TMA copy"); !e.empty()) return e;
      if (std::string e = races_.write_as(races_.agent(copy.issuer), copy.issuer_clocks, a, 1, "a write"); !e.empty())
        return e;
      smem_[a] = v;
      smem_unfenced_[a] = kFenced;  // written by the async proxy itself
      --smem_landing_[a];
    }
    // The copy completes its transactions with what its issuer had seen: a wait on the mbarrier sees the bytes.
    if (std::string e = mbar_update(copy.mbar, 0, -int64_t(copy.bytes.size()), copy.issuer_clocks); !e.empty())
      return e;
  }
  return "";
}

namespace {
// The first byte of [addr, addr + bytes) whose count is above 0, or SIZE_MAX.
size_t first_counted(const std::vector<uint16_t> &counts, size_t addr, size_t bytes) {
  for (size_t a = addr; a < addr + bytes && a < counts.size(); ++a)
    if (counts[a] != 0) return a;
  return SIZE_MAX;
}
}  // namespace

std::string Interpreter::smem_landed(size_t addr, size_t bytes, const char *what) const {
  const size_t a = first_counted(smem_landing_, addr, bytes);
  if (a == SIZE_MAX) return "";
  return std::string(what) + " reads shared byte " + std::to_string(a) +
         " before the TMA copy that writes it has landed (no wait on its mbarrier)";
}

std::string Interpreter::smem_writable(size_t addr, size_t bytes, const char *what) const {
  const size_t a = first_counted(smem_wgmma_readers_, addr, bytes);
  if (a == SIZE_MAX) return "";
  return std::string(what) + " writes shared byte " + std::to_string(a) +
         " while a wgmma product that reads it is in flight";
}

void Interpreter::read_by_product(Warp &w, size_t addr) {
  ++smem_wgmma_readers_[addr];
  w.wgmma_open_smem.push_back(uint32_t(addr));
}

void Interpreter::generic_write(int thread, size_t addr, size_t bytes) {
  for (size_t a = addr; a < addr + bytes; ++a) {
    smem_unfenced_[a] = thread;
    unfenced_by_thread_[size_t(thread)].push_back(uint32_t(a));
  }
}

void Interpreter::fence_proxy_async(int thread) {
  for (uint32_t a : unfenced_by_thread_[size_t(thread)])
    if (smem_unfenced_[a] == thread) smem_unfenced_[a] = kFenced;
  unfenced_by_thread_[size_t(thread)].clear();
}

// A barrier or arrive makes the thread's earlier writes visible to other threads, but not to the async proxy
// unless its fence came first: the bytes it hands over unfenced stay so whatever the thread does next.
void Interpreter::hand_over_unfenced(int thread) {
  for (uint32_t a : unfenced_by_thread_[size_t(thread)])
    if (smem_unfenced_[a] == thread) smem_unfenced_[a] = kHandedOverUnfenced;
  unfenced_by_thread_[size_t(thread)].clear();
}

std::string Interpreter::async_proxy_reads(size_t addr, const char *what) const {
  const int32_t writer = smem_unfenced_[addr];
  if (writer == kFenced) return "";
  if (writer == kHandedOverUnfenced)
    return std::string(what) + " reads shared byte " + std::to_string(addr) +
           ", written by a thread that reached its barrier or arrive before its fence.proxy.async";
  return std::string(what) + " reads shared byte " + std::to_string(addr) + ", written by thread " +
         std::to_string(writer) + " with no fence.proxy.async since";
}

// D (64 x N, this warp's 16 rows) = scale-d ? D : 0, + A B^T, both K-major, k = 32 e4m3 per row; A from a
// descriptor or from the warp's registers (byte j of register 2 kh + h of lane 4 g + t: row g + 8 h, k 16
// kh + 4 t + j); D's register 4 i + 2 h + e of lane 4 g + t: row g + 8 h, column 8 i + 2 t + e.
std::string Interpreter::wgmma(Warp &w, const Instr &in) {
  const bool a_regs = in.src.size() == 6;
  const int n = int(in.aux), rows0 = 16 * (w.index % 4);
  const Reg b_desc_reg = in.src[a_regs ? 4 : 1].reg, scale_reg = in.src[a_regs ? 5 : 2].reg;
  const uint64_t b_desc = w.r(b_desc_reg, 0), a_desc = a_regs ? 0 : w.r(in.src[0].reg, 0);
  const bool scale_d = w.r(scale_reg, 0) != 0;
  for (int lane = 1; lane < kWarpSize; ++lane)
    if (w.r(b_desc_reg, lane) != b_desc || (w.r(scale_reg, lane) != 0) != scale_d ||
        (!a_regs && w.r(in.src[0].reg, lane) != a_desc))
      return "wgmma: operands that differ between lanes";
  float a[16][32];
  int16_t a_exp[16][32];
  for (int m = 0; m < 16; ++m)
    for (int k = 0; k < 32; ++k) {
      uint8_t code;
      if (a_regs) {
        const int g = m % 8, h = m / 8, t = (k % 16) / 4, reg = 2 * (k / 16) + h;
        code = uint8_t(w.r(in.src[size_t(reg)].reg, 4 * g + t) >> (8 * (k % 4)));
      } else {
        size_t addr;
        if (!smem_at_desc(a_desc, rows0 + m, k, &addr)) return "wgmma: A outside shared memory or unmodelled";
        if (std::string e = smem_landed(addr, 1, "wgmma"); !e.empty()) return e;
        if (std::string e = async_proxy_reads(addr, "wgmma"); !e.empty()) return e;
        if (std::string e = races_.read(w.index, addr, 1, "wgmma"); !e.empty()) return e;
        code = smem_[addr];
        read_by_product(w, addr);
      }
      a[m][k] = numerics::e4m3_value(code);
      a_exp[m][k] = ref::fp8_exponent(code);
    }
  // B as K x N (k-major rows of all columns), the layout ref::qgmma_columns reads.
  std::vector<float> b(size_t(n) * 32);
  std::vector<int16_t> b_exp(b.size());
  for (int col = 0; col < n; ++col)
    for (int k = 0; k < 32; ++k) {
      size_t addr;
      if (!smem_at_desc(b_desc, col, k, &addr)) return "wgmma: B outside shared memory or unmodelled";
      if (std::string e = smem_landed(addr, 1, "wgmma"); !e.empty()) return e;
      if (std::string e = async_proxy_reads(addr, "wgmma"); !e.empty()) return e;
      if (std::string e = races_.read(w.index, addr, 1, "wgmma"); !e.empty()) return e;
      read_by_product(w, addr);
      b[size_t(k) * size_t(n) + size_t(col)] = numerics::e4m3_value(smem_[addr]);
      b_exp[size_t(k) * size_t(n) + size_t(col)] = ref::fp8_exponent(smem_[addr]);
    }
  // D's rows, summed as the H200's tensor cores sum them. Accumulator register q of `lane` holds D's row
  // lane / 4 + 8 h and column 8 i + 2 (lane % 4) + e (the PTX ISA's m64nNk32 fragment, this warp's 16 rows).
  std::vector<float> d(size_t(16) * size_t(n));
  auto element = [&](int lane, size_t q) -> float & {
    const int i = int(q / 4), h = int(q / 2) % 2, e = int(q % 2);
    return d[size_t(lane / 4 + 8 * h) * size_t(n) + size_t(8 * i + 2 * (lane % 4) + e)];
  };
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (size_t q = 0; q < in.dst.size(); ++q) element(lane, q) = scale_d ? as_f32(w.r(in.dst[q], lane)) : 0.0f;
  for (int m = 0; m < 16; ++m)
    ref::qgmma_columns(&d[size_t(m) * size_t(n)], a[m], a_exp[m], b.data(), b_exp.data(), n, n, ref::kQgmmaK);
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (size_t q = 0; q < in.dst.size(); ++q) w.r(in.dst[q], lane) = of_f32_result(element(lane, q));
  return "";
}

std::string Interpreter::step_hopper(Warp &w, const void *params) {
  const Instr &in = p_.code[w.pc];
  auto active = [&](int lane) { return w.active(in, lane); };
  auto u32 = [&](const Operand &o, int lane) -> uint64_t {
    return o.kind == Operand::Kind::kReg ? (w.r(o.reg, lane) & 0xffffffffu) : uint64_t(o.i) & 0xffffffffu;
  };
  int actives = 0;
  for (int lane = 0; lane < kWarpSize; ++lane) actives += active(lane) ? 1 : 0;
  switch (in.op) {
    case Op::kBarSync:
    case Op::kBarArrive: {
      if (w.mask != ~0u || (actives != 0 && actives != kWarpSize)) return "a named barrier reached by part of a warp";
      if (actives == 0) break;
      const uint64_t id = u32(in.src[0], 0);
      for (int lane = 1; lane < kWarpSize; ++lane)
        if (u32(in.src[0], lane) != id) return "a named barrier id that differs between lanes";
      if (id >= 16) return "a named barrier id past 15";
      moved_ = true;
      const bool done = named_arrive(w, int(id), in.offset, in.op == Op::kBarSync);
      if (in.op == Op::kBarSync && !done) {
        w.state = Warp::State::kNamed;
        w.named_id = int(id);
        return "";  // pc moves on when the barrier completes
      }
      break;
    }
    case Op::kParamAddress:
      for (int lane = 0; lane < kWarpSize; ++lane)
        if (active(lane)) w.r(in.dst[0], lane) = uint64_t(reinterpret_cast<uintptr_t>(params)) + uint64_t(in.offset);
      break;
    case Op::kPrefetchTensormap:
    case Op::kSetmaxnreg:
    case Op::kFenceMbarrierInit:
    case Op::kWgmmaFence: break;
    case Op::kGridDependencyWait:
      for (int lane = 0; lane < kWarpSize; ++lane)
        if (active(lane)) w.grid_dependency_waited |= 1u << lane;
      break;
    case Op::kFenceProxyAsync:
      for (int lane = 0; lane < kWarpSize; ++lane)
        if (active(lane)) fence_proxy_async(w.thread(lane));
      break;
    case Op::kWgmmaCommit:  // a group, empty or not, as PTX counts them
      w.wgmma_committed.push_back(std::move(w.wgmma_open));
      w.wgmma_open.clear();
      w.wgmma_committed_smem.push_back(std::move(w.wgmma_open_smem));
      w.wgmma_open_smem.clear();
      break;
    case Op::kWgmmaWait:  // the products were computed when issued; their registers and bytes are free again
      while (int64_t(w.wgmma_committed.size()) > in.aux) {
        for (Reg r : w.wgmma_committed.front()) --w.wgmma_busy[size_t(r.id)];
        w.wgmma_committed.pop_front();
        for (uint32_t a : w.wgmma_committed_smem.front()) {
          --smem_wgmma_readers_[a];
          races_.extend_read(w.index, a);
        }
        w.wgmma_committed_smem.pop_front();
      }
      break;
    case Op::kMbarInit:
      for (int lane = 0; lane < kWarpSize; ++lane) {
        if (!active(lane)) continue;
        const uint64_t addr = u32(in.src[0], lane);
        if (addr % 8 != 0 || addr + 8 > smem_.size()) return "mbarrier.init outside shared memory";
        mbar_valid_[size_t(addr / 8)] = true;
        mbars_[size_t(addr / 8)] = Mbarrier{in.src[1].i, in.src[1].i, 0, 0, {}, {}};
      }
      break;
    case Op::kMbarArrive:
    case Op::kMbarExpectTx:
      for (int lane = 0; lane < kWarpSize; ++lane) {
        if (!active(lane)) continue;
        const int64_t tx = in.op == Op::kMbarExpectTx ? in.src[1].i : 0;
        const std::string e = mbar_update(u32(in.src[0], lane), 1, tx, races_.clocks(w.index));
        if (!e.empty()) return e;
      }
      if (actives != 0) races_.next_epoch(w.index);
      // An arrive may hand a stage to another warp: let the others run now, before this warp goes on (to its
      // wgmma wait, say), the order that shows a stage released while products still read it.
      if (in.op == Op::kMbarArrive) {
        moved_ = true;
        ++w.pc;
        w.state = Warp::State::kSpin;
        return "";
      }
      break;
    case Op::kMbarWait: {
      bool done = true;
      for (int lane = 0; lane < kWarpSize; ++lane) {
        if (!active(lane)) continue;
        // The copies that complete this barrier's transactions land when someone waits on it (or when
        // nothing else can move): a reader that skips the wait finds its bytes not there yet.
        if (std::string e = land_tma_copies(u32(in.src[0], lane)); !e.empty()) return e;
        const Mbarrier *m = mbarrier(u32(in.src[0], lane));
        if (m == nullptr) return "mbarrier wait on an address no mbarrier.init made";
        done = done && (m->phase & 1) != (u32(in.src[1], lane) & 1);
      }
      if (!done) {
        --executed_;
        w.state = Warp::State::kSpin;
        return "";
      }
      for (int lane = 0; lane < kWarpSize; ++lane)
        if (active(lane)) races_.acquire(w.index, mbarrier(u32(in.src[0], lane))->completed);
      break;
    }
    case Op::kTmaLoad4d:
      for (int lane = 0; lane < kWarpSize; ++lane) {
        if (!active(lane)) continue;
        const uintptr_t map_addr = uintptr_t(w.r(in.src[1].reg, lane));
        const uintptr_t block = reinterpret_cast<uintptr_t>(params);
        if (map_addr < block || map_addr + sizeof(InterpretedTensorMap) > block + size_t(p_.param_bytes))
          return "TMA: a tensor map outside the parameter block";
        InterpretedTensorMap map;
        std::memcpy(&map, reinterpret_cast<const void *>(map_addr), sizeof map);
        int64_t coords[4];
        for (int i = 0; i < 4; ++i) coords[i] = as_signed(u32(in.src[size_t(2 + i)], lane), Type::kS32);
        const std::string e = tma_load(w, uint32_t(u32(in.src[0], lane)), map, coords, u32(in.src[6], lane),
                                       w.dependency_waited(lane));
        if (!e.empty()) return e;
      }
      break;
    case Op::kWgmma: {
      if (actives != kWarpSize) return "a predicated wgmma, or one in divergent code";
      const std::string e = wgmma(w, in);
      if (!e.empty()) return e;
      // Its accumulator, and A's fragments where A comes from registers, until its group is waited for; its
      // shared operands' bytes (wgmma() listed them in wgmma_open_smem) likewise.
      std::vector<Reg> used = in.dst;
      if (in.src.size() == 6)
        for (size_t i = 0; i < 4; ++i) used.push_back(in.src[i].reg);
      for (Reg r : used) {
        ++w.wgmma_busy[size_t(r.id)];
        w.wgmma_open.push_back(r);
      }
      break;
    }
    default: return "the interpreter does not model this instruction";
  }
  if (in.op != Op::kBarSync && in.op != Op::kBarArrive) moved_ = true;
  ++w.pc;
  return "";
}

}  // namespace zyfa::asmgen
