#include "asmgen/builder.hpp"

#include <stdexcept>

namespace zyfa::asmgen {

Builder::Guard::Guard(Builder &b, Reg pred, bool negated)
    : b_(b), saved_(b.guard_), saved_negated_(b.guard_negated_) {
  if (b.guard_.valid()) throw std::logic_error("nested guards are not supported");
  b.expect(pred, Type::kPred, "guard");
  b.guard_ = pred;
  b.guard_negated_ = negated;
}

Builder::Guard::~Guard() {
  b_.guard_ = saved_;
  b_.guard_negated_ = saved_negated_;
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
    if (!is_integer(type(d)) && !(op == Op::kAnd || op == Op::kOr))                            \
      throw std::logic_error(#name ": integer destination expected");                          \
    expect_same_width(a, type(d), #name);                                                      \
    Instr &in = push(op, type(d));                                                             \
    in.dst = {d};                                                                              \
    in.src = {a, b};                                                                           \
  }
ZYFA_INTEGER_BINARY(mul_lo, Op::kMulLo)
ZYFA_INTEGER_BINARY(shl, Op::kShl)
ZYFA_INTEGER_BINARY(shr, Op::kShr)
ZYFA_INTEGER_BINARY(and_, Op::kAnd)
ZYFA_INTEGER_BINARY(or_, Op::kOr)
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

void Builder::cvt_e4m3x2(Reg d, Operand hi, Operand lo) {
  expect(d, Type::kB16, "cvt_e4m3x2");
  expect_same_width(hi, Type::kF32, "cvt_e4m3x2");
  expect_same_width(lo, Type::kF32, "cvt_e4m3x2");
  Instr &in = push(Op::kCvtE4m3x2, Type::kB16);
  in.dst = {d};
  in.src = {hi, lo};
}

void Builder::cvt_f16x2_e4m3x2(Reg d, Reg a) {
  expect(d, Type::kB32, "cvt_f16x2_e4m3x2");
  expect(a, Type::kB16, "cvt_f16x2_e4m3x2");
  Instr &in = push(Op::kCvtF16x2E4m3x2, Type::kB32);
  in.dst = {d};
  in.src = {a};
}

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
  expect(addr, Type::kU32, "ldmatrix address");
  for (Reg r : d) expect(r, Type::kB32, "ldmatrix");
  Instr &in = push(Op::kLdmatrixX4, Type::kB32);
  in.dst.assign(d.begin(), d.end());
  in.src = {addr};
  in.offset = offset;
  in.transpose = transpose;
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

void Builder::shfl_bfly(Reg d, Reg a, int lane_mask) {
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
  p_.labels.push_back(name);
  return int(p_.labels.size()) - 1;
}

void Builder::place(int label) {
  if (guard_.valid()) throw std::logic_error("a label cannot be predicated");
  push(Op::kLabel, Type::kB32).label = label;
}

void Builder::bra(int label) { push(Op::kBra, Type::kB32).label = label; }

void Builder::exit() { push(Op::kExit, Type::kB32); }

}  // namespace zyfa::asmgen
