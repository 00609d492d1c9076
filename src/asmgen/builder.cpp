#include "asmgen/builder.hpp"

#include <stdexcept>

namespace zyfa::asmgen {

Builder::Guard::Guard(Builder &b, Reg pred, bool negated, bool uniform)
    : b_(b), saved_(b.guard_), saved_negated_(b.guard_negated_), saved_uniform_(b.guard_uniform_) {
  if (b.guard_.valid()) throw std::logic_error("nested guards are not supported");
  b.expect(pred, Type::kPred, "guard");
  b.guard_ = pred;
  b.guard_negated_ = negated;
  b.guard_uniform_ = uniform;
}

Builder::Guard::~Guard() {
  b_.guard_ = saved_;
  b_.guard_negated_ = saved_negated_;
  b_.guard_uniform_ = saved_uniform_;
}

void Builder::expect_converged(const char *what) const {
  if (guard_.valid() && !guard_uniform_)
    throw std::logic_error(std::string(what) + ": an .aligned instruction under a per-thread guard (use when_uniform)");
}

Instr &Builder::push(Op op, Type type) {
  Instr in;
  in.op = op;
  in.type = type;
  in.guard = guard_;
  in.guard_negated = guard_negated_;
  p_.code.push_back(std::move(in));
  return p_.code.back();
}

void Builder::expect(Reg r, Type t, const char *what) const {
  if (!r.valid()) throw std::logic_error(std::string(what) + ": invalid register");
  if (type(r) != t)
    throw std::logic_error(std::string(what) + ": %" + p_.regs.name(r) + " is ." + type_name(type(r)) +
                           ", expected ." + type_name(t));
}

void Builder::expect_same_width(Operand o, Type t, const char *what) const {
  if (o.kind != Operand::Kind::kReg) return;
  // Bit-size types (.b16/.b32/.b64) are compatible with every type of their width, as PTX allows.
  const auto is_bits = [](Type x) { return x == Type::kB16 || x == Type::kB32 || x == Type::kB64; };
  const bool bits_only = is_bits(t) || is_bits(type(o.reg));
  if (type_bits(type(o.reg)) != type_bits(t) || (!bits_only && (type(o.reg) == Type::kF32) != (t == Type::kF32)))
    throw std::logic_error(std::string(what) + ": operand %" + p_.regs.name(o.reg) + " is ." +
                           type_name(type(o.reg)) + ", instruction is ." + type_name(t));
}

namespace {
bool is_integer(Type t) { return t != Type::kF32 && t != Type::kPred; }
}  // namespace

void Builder::mov(Reg d, Operand a) {
  expect_same_width(a, type(d), "mov");
  push(Op::kMov, type(d)).dst = {d};
  p_.code.back().src = {a};
}

#define ZYFA_BINARY(name, op)                                  \
  void Builder::name(Reg d, Operand a, Operand b) {            \
    expect_same_width(a, type(d), #name);                      \
    expect_same_width(b, type(d), #name);                      \
    Instr &in = push(op, type(d));                             \
    in.dst = {d};                                              \
    in.src = {a, b};                                           \
  }
ZYFA_BINARY(add, Op::kAdd)
ZYFA_BINARY(sub, Op::kSub)
ZYFA_BINARY(div, Op::kDiv)
ZYFA_BINARY(min, Op::kMin)
ZYFA_BINARY(max, Op::kMax)
#undef ZYFA_BINARY

#define ZYFA_INTEGER_BINARY(name, op)                                                          \
  void Builder::name(Reg d, Operand a, Operand b) {                                            \
    if (!is_integer(type(d)) && !(op == Op::kAnd || op == Op::kOr || op == Op::kXor))                            \
      throw std::logic_error(#name ": integer destination expected");                          \
    expect_same_width(a, type(d), #name);                                                      \
    expect_same_width(b, (op == Op::kShl || op == Op::kShr) ? Type::kU32 : type(d), #name);    \
    Instr &in = push(op, type(d));                                                             \
    in.dst = {d};                                                                              \
    in.src = {a, b};                                                                           \
  }
ZYFA_INTEGER_BINARY(mul_lo, Op::kMulLo)
ZYFA_INTEGER_BINARY(shl, Op::kShl)
ZYFA_INTEGER_BINARY(shr, Op::kShr)
ZYFA_INTEGER_BINARY(and_, Op::kAnd)
ZYFA_INTEGER_BINARY(or_, Op::kOr)
ZYFA_INTEGER_BINARY(xor_, Op::kXor)
#undef ZYFA_INTEGER_BINARY

void Builder::mul_wide(Reg d, Operand a, Operand b) {
  const Type dt = type(d);
  if (dt != Type::kS64 && dt != Type::kU64) throw std::logic_error("mul_wide: 64-bit destination expected");
  const Type st = dt == Type::kS64 ? Type::kS32 : Type::kU32;
  expect_same_width(a, st, "mul_wide");
  expect_same_width(b, st, "mul_wide");
  Instr &in = push(Op::kMulWide, dt);
  in.src_type = st;
  in.dst = {d};
  in.src = {a, b};
}

void Builder::mad_lo(Reg d, Operand a, Operand b, Operand c) {
  if (!is_integer(type(d))) throw std::logic_error("mad_lo: integer destination expected");
  for (const Operand &o : {a, b, c}) expect_same_width(o, type(d), "mad_lo");
  Instr &in = push(Op::kMad, type(d));
  in.dst = {d};
  in.src = {a, b, c};
}

void Builder::mul(Reg d, Operand a, Operand b) {
  expect(d, Type::kF32, "mul");
  expect_same_width(a, Type::kF32, "mul");
  expect_same_width(b, Type::kF32, "mul");
  Instr &in = push(Op::kMul, Type::kF32);
  in.dst = {d};
  in.src = {a, b};
}

void Builder::fma(Reg d, Operand a, Operand b, Operand c) {
  expect(d, Type::kF32, "fma");
  for (const Operand &o : {a, b, c}) expect_same_width(o, Type::kF32, "fma");
  Instr &in = push(Op::kFma, Type::kF32);
  in.dst = {d};
  in.src = {a, b, c};
}

void Builder::ex2(Reg d, Operand a) {
  expect(d, Type::kF32, "ex2");
  expect_same_width(a, Type::kF32, "ex2");
  Instr &in = push(Op::kEx2, Type::kF32);
  in.dst = {d};
  in.src = {a};
}

void Builder::lg2(Reg d, Operand a) {
  expect(d, Type::kF32, "lg2");
  expect_same_width(a, Type::kF32, "lg2");
  Instr &in = push(Op::kLg2, Type::kF32);
  in.dst = {d};
  in.src = {a};
}

void Builder::cvt(Reg d, Operand a, Type src_type, Round round) {
  expect_same_width(a, src_type, "cvt");
  Instr &in = push(Op::kCvt, type(d));
  in.src_type = src_type;
  in.round = round;
  in.dst = {d};
  in.src = {a};
}

void Builder::pack_f32_pair(Op op, Type type, Reg d, Operand hi, Operand lo, const char *what) {
  expect(d, type, what);
  expect_same_width(hi, Type::kF32, what);
  expect_same_width(lo, Type::kF32, what);
  Instr &in = push(op, type);
  in.dst = {d};
  in.src = {hi, lo};
}

void Builder::convert_packed(Op op, Type type, Reg d, Type src_type, Reg a, const char *what) {
  expect(d, type, what);
  expect(a, src_type, what);
  Instr &in = push(op, type);
  in.dst = {d};
  in.src = {a};
}

void Builder::cvt_e4m3x2(Reg d, Operand hi, Operand lo) { pack_f32_pair(Op::kCvtE4m3x2, Type::kB16, d, hi, lo, "cvt_e4m3x2"); }

void Builder::cvt_f16x2_e4m3x2(Reg d, Reg a) { convert_packed(Op::kCvtF16x2E4m3x2, Type::kB32, d, Type::kB16, a, "cvt_f16x2_e4m3x2"); }

void Builder::cvt_f16x2_f32(Reg d, Operand hi, Operand lo) { pack_f32_pair(Op::kCvtF16x2F32, Type::kB32, d, hi, lo, "cvt_f16x2_f32"); }

void Builder::sub_f16x2(Reg d, Reg a, Reg b) {
  for (Reg r : {d, a, b}) expect(r, Type::kB32, "sub_f16x2");
  Instr &in = push(Op::kSubF16x2, Type::kB32);
  in.dst = {d};
  in.src = {a, b};
}

void Builder::cvt_e4m3x2_f16x2(Reg d, Reg a) { convert_packed(Op::kCvtE4m3x2F16x2, Type::kB16, d, Type::kB32, a, "cvt_e4m3x2_f16x2"); }

void Builder::cvt_bf16x2(Reg d, Operand hi, Operand lo) {
  expect(d, Type::kB32, "cvt_bf16x2");
  expect_same_width(hi, Type::kF32, "cvt_bf16x2");
  expect_same_width(lo, Type::kF32, "cvt_bf16x2");
  Instr &in = push(Op::kCvtBf16x2, Type::kB32);
  in.dst = {d};
  in.src = {hi, lo};
}

void Builder::pack16x2(Reg d, Reg lo, Reg hi) {
  expect(d, Type::kB32, "pack16x2");
  expect(lo, Type::kB16, "pack16x2");
  expect(hi, Type::kB16, "pack16x2");
  Instr &in = push(Op::kPack16x2, Type::kB32);
  in.dst = {d};
  in.src = {lo, hi};
}

void Builder::unpack16x2(Reg lo, Reg hi, Reg a) {
  expect(lo, Type::kB16, "unpack16x2");
  expect(hi, Type::kB16, "unpack16x2");
  expect_same_width(a, Type::kB32, "unpack16x2");
  Instr &in = push(Op::kUnpack16x2, Type::kB32);
  in.dst = {lo, hi};
  in.src = {a};
}

void Builder::prmt(Reg d, Operand a, Operand b, Operand selector) {
  expect(d, Type::kB32, "prmt");
  for (const Operand &o : {a, b, selector}) expect_same_width(o, Type::kB32, "prmt");
  Instr &in = push(Op::kPrmt, Type::kB32);
  in.dst = {d};
  in.src = {a, b, selector};
}

void Builder::max_s16x2(Reg d, Reg a, Reg b) {
  for (Reg r : {d, a, b}) expect(r, Type::kB32, "max_s16x2");
  Instr &in = push(Op::kMaxS16x2, Type::kB32);
  in.dst = {d};
  in.src = {a, b};
}

void Builder::setp(Reg p, Cmp cmp, Type t, Operand a, Operand b) {
  expect(p, Type::kPred, "setp");
  expect_same_width(a, t, "setp");
  expect_same_width(b, t, "setp");
  Instr &in = push(Op::kSetp, t);
  in.cmp = cmp;
  in.dst = {p};
  in.src = {a, b};
}

void Builder::selp(Reg d, Operand a, Operand b, Reg p) {
  expect(p, Type::kPred, "selp");
  expect_same_width(a, type(d), "selp");
  expect_same_width(b, type(d), "selp");
  Instr &in = push(Op::kSelp, type(d));
  in.dst = {d};
  in.src = {a, b, p};
}

void Builder::vote_any(Reg d, Reg p) {
  expect_converged("vote");
  expect(d, Type::kPred, "vote_any");
  expect(p, Type::kPred, "vote_any");
  Instr &in = push(Op::kVoteAny, Type::kPred);
  in.dst = {d};
  in.src = {p};
}

void Builder::ld_param(Reg d, int offset) {
  Instr &in = push(Op::kLdParam, type(d));
  in.dst = {d};
  in.offset = offset;
}

namespace {
void check_vector(size_t n, const char *what) {
  if (n != 1 && n != 2 && n != 4) throw std::logic_error(std::string(what) + ": vector of 1, 2 or 4 expected");
}
}  // namespace

void Builder::ld_global(const std::vector<Reg> &d, Reg addr, int64_t offset, bool non_coherent) {
  check_vector(d.size(), "ld_global");
  expect(addr, Type::kU64, "ld_global address");
  for (Reg r : d) expect(r, type(d[0]), "ld_global vector");
  Instr &in = push(Op::kLdGlobal, type(d[0]));
  in.dst = d;
  in.src = {addr};
  in.offset = offset;
  in.non_coherent = non_coherent;
}

void Builder::st_global(Type t, Reg addr, int64_t offset, const std::vector<Operand> &values) {
  check_vector(values.size(), "st_global");
  expect(addr, Type::kU64, "st_global address");
  for (const Operand &v : values) expect_same_width(v, t, "st_global");
  Instr &in = push(Op::kStGlobal, t);
  in.src = {addr};
  in.src.insert(in.src.end(), values.begin(), values.end());
  in.offset = offset;
}

void Builder::ld_shared(const std::vector<Reg> &d, Reg addr, int64_t offset) {
  check_vector(d.size(), "ld_shared");
  expect(addr, Type::kU32, "ld_shared address");
  for (Reg r : d) expect(r, type(d[0]), "ld_shared vector");
  Instr &in = push(Op::kLdShared, type(d[0]));
  in.dst = d;
  in.src = {addr};
  in.offset = offset;
}

void Builder::st_shared(Type t, Reg addr, int64_t offset, const std::vector<Operand> &values) {
  check_vector(values.size(), "st_shared");
  expect(addr, Type::kU32, "st_shared address");
  for (const Operand &v : values) expect_same_width(v, t, "st_shared");
  Instr &in = push(Op::kStShared, t);
  in.src = {addr};
  in.src.insert(in.src.end(), values.begin(), values.end());
  in.offset = offset;
}

void Builder::ldmatrix_x4(const std::array<Reg, 4> &d, Reg addr, int64_t offset, bool transpose) {
  expect_converged("ldmatrix");
  expect(addr, Type::kU32, "ldmatrix address");
  for (Reg r : d) expect(r, Type::kB32, "ldmatrix");
  Instr &in = push(Op::kLdmatrixX4, Type::kB32);
  in.dst.assign(d.begin(), d.end());
  in.src = {addr};
  in.offset = offset;
  in.transpose = transpose;
}

void Builder::stmatrix_x4(Reg addr, int64_t offset, const std::array<Reg, 4> &values) {
  expect_converged("stmatrix");
  expect(addr, Type::kU32, "stmatrix address");
  for (Reg r : values) expect(r, Type::kB32, "stmatrix");
  Instr &in = push(Op::kStmatrixX4, Type::kB32);
  in.src = {addr};
  in.src.insert(in.src.end(), values.begin(), values.end());
  in.offset = offset;
}

void Builder::cp_async_16(Reg smem_addr, int64_t smem_offset, Reg global_addr, Operand src_bytes) {
  expect(smem_addr, Type::kU32, "cp.async shared address");
  expect(global_addr, Type::kU64, "cp.async global address");
  expect_same_width(src_bytes, Type::kU32, "cp.async source size");
  Instr &in = push(Op::kCpAsync, Type::kB32);
  in.src = {smem_addr, global_addr, src_bytes};
  in.offset = smem_offset;
}

void Builder::cp_async_commit() { push(Op::kCpAsyncCommit, Type::kB32); }

void Builder::cp_async_wait(int pending_groups) { push(Op::kCpAsyncWait, Type::kB32).aux = pending_groups; }

void Builder::shfl_idx(Reg d, Reg a, int src_lane) {
  expect_converged("shfl");
  expect_same_width(d, Type::kB32, "shfl_idx");
  expect(a, type(d), "shfl_idx");
  if (src_lane < 0 || src_lane > 31) throw std::logic_error("shfl_idx: source lane outside the warp");
  Instr &in = push(Op::kShflIdx, Type::kB32);
  in.dst = {d};
  in.src = {a};
  in.aux = src_lane;
}

void Builder::shfl_bfly(Reg d, Reg a, int lane_mask) {
  expect_converged("shfl");
  expect_same_width(d, Type::kB32, "shfl_bfly");
  expect(a, type(d), "shfl_bfly");
  Instr &in = push(Op::kShflBfly, Type::kB32);
  in.dst = {d};
  in.src = {a};
  in.aux = lane_mask;
}

void Builder::bar_sync(int barrier) {
  if (guard_.valid()) throw std::logic_error("bar.sync must not be predicated");
  push(Op::kBarSync, Type::kB32).aux = barrier;
}

void Builder::mma_f16(const std::array<Reg, 4> &d, const std::array<Reg, 4> &a, const std::array<Reg, 2> &b,
                      const std::array<Reg, 4> &c) {
  for (Reg r : d) expect(r, Type::kF32, "mma d");
  for (Reg r : c) expect(r, Type::kF32, "mma c");
  for (Reg r : a) expect(r, Type::kB32, "mma a");
  for (Reg r : b) expect(r, Type::kB32, "mma b");
  Instr &in = push(Op::kMmaF16, Type::kF32);
  in.dst.assign(d.begin(), d.end());
  in.src.assign(a.begin(), a.end());
  in.src.insert(in.src.end(), b.begin(), b.end());
  in.src.insert(in.src.end(), c.begin(), c.end());
}

void Builder::read_special(Reg d, Special s) {
  expect(d, Type::kU32, "read_special");
  Instr &in = push(Op::kReadSpecial, Type::kU32);
  in.dst = {d};
  in.special = s;
}

int Builder::new_label(const std::string &name) {
  // Stages that emit the same construct many times (waits, if-blocks) share a name: number those.
  bool taken = false;
  for (const std::string &l : p_.labels) taken = taken || l == name;
  p_.labels.push_back(taken ? name + "_" + std::to_string(p_.labels.size()) : name);
  return int(p_.labels.size()) - 1;
}

void Builder::place(int label) {
  if (guard_.valid()) throw std::logic_error("a label cannot be predicated");
  push(Op::kLabel, Type::kB32).label = label;
}

void Builder::bra(int label) { push(Op::kBra, Type::kB32).label = label; }

void Builder::bra_if(Cmp cmp, Type type, Operand a, Operand b, int label, const char *pred_name) {
  const Reg taken = temp(Type::kPred, pred_name);
  setp(taken, cmp, type, a, b);
  auto g = when(taken);
  bra(label);
}

void Builder::exit() { push(Op::kExit, Type::kB32); }

// ---- Hopper
namespace {
void check_barrier_threads(int threads) {
  if (threads <= 0 || threads % 32 != 0) throw std::logic_error("named barrier: thread count must be a multiple of 32");
}
}  // namespace

void Builder::named_barrier(Op op, const char *what, Operand barrier, int threads) {
  expect_converged(what);
  check_barrier_threads(threads);
  expect_same_width(barrier, Type::kU32, what);
  Instr &in = push(op, Type::kB32);
  in.src = {barrier};
  in.offset = threads;
}

void Builder::bar_sync_count(Operand barrier, int threads) { named_barrier(Op::kBarSync, "bar.sync", barrier, threads); }

void Builder::bar_arrive(Operand barrier, int threads) { named_barrier(Op::kBarArrive, "bar.arrive", barrier, threads); }

void Builder::param_address(Reg d, int offset) {
  expect(d, Type::kU64, "param_address");
  if (guard_.valid()) throw std::logic_error("param_address: prints as three instructions, only the first predicated");
  Instr &in = push(Op::kParamAddress, Type::kU64);
  in.dst = {d};
  in.offset = offset;
}

void Builder::prefetch_tensormap(Reg generic_addr) {
  expect(generic_addr, Type::kU64, "prefetch_tensormap");
  push(Op::kPrefetchTensormap, Type::kU64).src = {generic_addr};
}

void Builder::setmaxnreg(bool grow, int registers) {
  expect_converged("setmaxnreg");
  if (registers < 24 || registers > 256 || registers % 8 != 0)
    throw std::logic_error("setmaxnreg: a multiple of 8 in [24, 256] expected");
  Instr &in = push(Op::kSetmaxnreg, Type::kU32);
  in.aux = registers;
  in.grow = grow;
}

void Builder::grid_dependency_wait() { push(Op::kGridDependencyWait, Type::kB32); }
void Builder::fence_proxy_async() { push(Op::kFenceProxyAsync, Type::kB32); }
void Builder::fence_mbarrier_init() { push(Op::kFenceMbarrierInit, Type::kB32); }

void Builder::mbar_init(Reg addr, int arrivals) {
  expect(addr, Type::kU32, "mbar_init address");
  Instr &in = push(Op::kMbarInit, Type::kB64);
  in.src = {addr, imm(arrivals)};
}

void Builder::mbar_arrive(Reg addr) {
  expect(addr, Type::kU32, "mbar_arrive address");
  push(Op::kMbarArrive, Type::kB64).src = {addr};
}

void Builder::mbar_arrive_expect_tx(Reg addr, int bytes) {
  expect(addr, Type::kU32, "mbar_arrive_expect_tx address");
  Instr &in = push(Op::kMbarExpectTx, Type::kB64);
  in.src = {addr, imm(bytes)};
}

void Builder::mbar_wait(Reg addr, Operand parity) {
  expect(addr, Type::kU32, "mbar_wait address");
  expect_same_width(parity, Type::kU32, "mbar_wait parity");
  if (guard_.valid()) throw std::logic_error("mbar_wait: a spin loop cannot be predicated");
  Instr &in = push(Op::kMbarWait, Type::kB64);
  in.src = {addr, parity};
  in.label = new_label("MBAR_WAIT");
}

void Builder::tma_load_4d(Reg smem_addr, Reg tensor_map, const std::array<Operand, 4> &coords, Reg mbar,
                          Operand cache_hint) {
  expect(smem_addr, Type::kU32, "tma_load_4d destination");
  expect(tensor_map, Type::kU64, "tma_load_4d tensor map");
  expect(mbar, Type::kU32, "tma_load_4d mbarrier");
  for (const Operand &c : coords) expect_same_width(c, Type::kS32, "tma_load_4d coordinate");
  expect_same_width(cache_hint, Type::kU64, "tma_load_4d cache hint");
  Instr &in = push(Op::kTmaLoad4d, Type::kB32);
  in.src = {smem_addr, tensor_map, coords[0], coords[1], coords[2], coords[3], mbar, cache_hint};
}

namespace {
// The N of m64nNk32 from the accumulator count (N / 2 fp32 registers per thread); N a multiple of 8.
int wgmma_n(size_t accumulators) {
  if (accumulators == 0 || accumulators % 4 != 0 || accumulators > 128)
    throw std::logic_error("wgmma: N / 2 accumulators expected, N a multiple of 8 up to 256");
  return int(accumulators * 2);
}
}  // namespace

void Builder::wgmma_e4m3(const std::vector<Reg> &d, Reg a_desc, Reg b_desc, Reg accumulate) {
  expect_converged("wgmma");
  for (Reg r : d) expect(r, Type::kF32, "wgmma accumulator");
  expect(a_desc, Type::kU64, "wgmma A descriptor");
  expect(b_desc, Type::kU64, "wgmma B descriptor");
  expect(accumulate, Type::kPred, "wgmma scale-d");
  Instr &in = push(Op::kWgmma, Type::kF32);
  in.aux = wgmma_n(d.size());
  in.dst = d;
  in.src = {a_desc, b_desc, accumulate};
}

void Builder::wgmma_e4m3(const std::vector<Reg> &d, const std::array<Reg, 4> &a_regs, Reg b_desc, Reg accumulate) {
  expect_converged("wgmma");
  for (Reg r : d) expect(r, Type::kF32, "wgmma accumulator");
  for (Reg r : a_regs) expect(r, Type::kB32, "wgmma A registers");
  expect(b_desc, Type::kU64, "wgmma B descriptor");
  expect(accumulate, Type::kPred, "wgmma scale-d");
  Instr &in = push(Op::kWgmma, Type::kF32);
  in.aux = wgmma_n(d.size());
  in.dst = d;
  in.src = {a_regs[0], a_regs[1], a_regs[2], a_regs[3], b_desc, accumulate};
}

void Builder::wgmma_fence() {
  expect_converged("wgmma.fence");
  push(Op::kWgmmaFence, Type::kB32);
}
void Builder::wgmma_commit() {
  expect_converged("wgmma.commit_group");
  push(Op::kWgmmaCommit, Type::kB32);
}
void Builder::wgmma_wait(int pending_groups) {
  expect_converged("wgmma.wait_group");
  push(Op::kWgmmaWait, Type::kB32).aux = pending_groups;
}

}  // namespace zyfa::asmgen
