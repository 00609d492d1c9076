#include "asmgen/ptx_printer.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace zyfa::asmgen {
namespace {

// PTX ISA 8.7 (CUDA 12.8+): the e4m3 conversions, wgmma, setmaxnreg.
constexpr const char *kPtxVersion = "8.7";
constexpr const char *kTarget = "sm_90a";

class Printer {
 public:
  explicit Printer(const Program &p) : p_(p) {}

  std::string run() {
    out_ << "// Written by zyfa_asmgen (src/asmgen); do not edit.\n"
         << ".version " << kPtxVersion << "\n.target " << kTarget << "\n.address_size 64\n\n"
         << ".extern .shared .align 16 .b8 " << kSmemName << "[];\n\n"
         << ".visible .entry " << p_.entry << "(\n  .param .align 128 .b8 " << kParamName << "["
         << p_.param_bytes << "]\n)\n.maxntid " << p_.threads << ", 1, 1\n.minnctapersm 1\n{\n";
    for (int r = 0; r < p_.regs.count(); ++r)
      out_ << "  .reg ." << type_name(p_.regs.type(Reg{r})) << " %" << p_.regs.name(Reg{r}) << ";\n";
    out_ << "\n";
    for (const Instr &in : p_.code) line(in);
    out_ << "}\n";
    return out_.str();
  }

 private:
  std::string reg(Reg r) const { return "%" + p_.regs.name(r); }

  std::string operand(const Operand &o, Type t) const {
    switch (o.kind) {
      case Operand::Kind::kReg: return reg(o.reg);
      case Operand::Kind::kF32: {
        uint32_t bits;
        std::memcpy(&bits, &o.f, 4);
        char buf[16];
        std::snprintf(buf, sizeof buf, "0f%08X", bits);
        return buf;
      }
      case Operand::Kind::kInt:
        if (t == Type::kF32) throw std::logic_error("integer immediate for an f32 operand");
        return std::to_string(o.i);
    }
    return "?";
  }

  std::string list(const std::vector<Reg> &regs) const {
    std::string s = "{";
    for (size_t i = 0; i < regs.size(); ++i) s += (i ? ", " : "") + reg(regs[i]);
    return s + "}";
  }
  std::string values(const std::vector<Operand> &ops, size_t first, Type t) const {
    if (ops.size() - first == 1) return operand(ops[first], t);
    std::string s = "{";
    for (size_t i = first; i < ops.size(); ++i) s += (i > first ? ", " : "") + operand(ops[i], t);
    return s + "}";
  }
  static std::string vec(size_t n) { return n == 1 ? "" : ".v" + std::to_string(n); }
  std::string address(const Instr &in) const {
    std::string s = "[" + reg(in.src[0].reg);
    if (in.offset < 0) throw std::logic_error("negative address offset");
    if (in.offset > 0) s += "+" + std::to_string(in.offset);
    return s + "]";
  }
  std::string dst_or_list(const Instr &in) const {
    return in.dst.size() == 1 ? reg(in.dst[0]) : list(in.dst);
  }
  std::string args(const Instr &in) const {
    std::string s = reg(in.dst[0]);
    for (const Operand &o : in.src) s += ", " + operand(o, in.type);
    return s;
  }
  // add/sub/min/max take .s32/.u32 etc.; bit operations take .b32/.b64.
  static const char *bit_type(Type t) {
    if (t == Type::kPred) return "pred";
    return type_bits(t) == 64 ? "b64" : (type_bits(t) == 16 ? "b16" : "b32");
  }

  void line(const Instr &in) {
    if (in.op == Op::kLabel) {
      out_ << p_.labels[size_t(in.label)] << ":\n";
      return;
    }
    out_ << "  ";
    if (in.guard.valid()) out_ << "@" << (in.guard_negated ? "!" : "") << reg(in.guard) << " ";
    const char *t = type_name(in.type);
    const bool f = in.type == Type::kF32;
    switch (in.op) {
      case Op::kMov: out_ << "mov." << (in.type == Type::kPred ? "pred" : t) << " " << args(in); break;
      case Op::kAdd: out_ << (f ? "add.rn." : "add.") << t << " " << args(in); break;
      case Op::kSub: out_ << (f ? "sub.rn." : "sub.") << t << " " << args(in); break;
      case Op::kMulLo: out_ << "mul.lo." << t << " " << args(in); break;
      case Op::kMulWide:
        out_ << "mul.wide." << type_name(in.src_type) << " " << reg(in.dst[0]) << ", "
             << operand(in.src[0], in.src_type) << ", " << operand(in.src[1], in.src_type);
        break;
      case Op::kMad: out_ << "mad.lo." << t << " " << args(in); break;
      case Op::kDiv: out_ << (f ? "div.rn." : "div.") << t << " " << args(in); break;
      case Op::kMin: out_ << "min." << t << " " << args(in); break;
      case Op::kMax: out_ << "max." << t << " " << args(in); break;
      case Op::kShl: out_ << "shl." << bit_type(in.type) << " " << args(in); break;
      case Op::kShr: out_ << "shr." << t << " " << args(in); break;
      case Op::kAnd: out_ << "and." << bit_type(in.type) << " " << args(in); break;
      case Op::kOr: out_ << "or." << bit_type(in.type) << " " << args(in); break;
      case Op::kXor: out_ << "xor." << bit_type(in.type) << " " << args(in); break;
      case Op::kMul: out_ << "mul.rn.f32 " << args(in); break;
      case Op::kFma: out_ << "fma.rn.f32 " << args(in); break;
      case Op::kEx2: out_ << "ex2.approx.ftz.f32 " << args(in); break;
      case Op::kLg2: out_ << "lg2.approx.ftz.f32 " << args(in); break;
      case Op::kCvt: {
        out_ << "cvt.";
        if (in.round != Round::kNone) out_ << round_name(in.round) << ".";
        out_ << t << "." << type_name(in.src_type) << " " << reg(in.dst[0]) << ", "
             << operand(in.src[0], in.src_type);
        break;
      }
      case Op::kCvtE4m3x2: out_ << "cvt.rn.satfinite.e4m3x2.f32 " << args(in); break;
      case Op::kCvtF16x2E4m3x2: out_ << "cvt.rn.f16x2.e4m3x2 " << args(in); break;
      case Op::kCvtBf16x2: out_ << "cvt.rn.bf16x2.f32 " << args(in); break;
      case Op::kCvtF16x2F32: out_ << "cvt.rn.f16x2.f32 " << args(in); break;
      case Op::kSubF16x2: out_ << "sub.rn.f16x2 " << args(in); break;
      case Op::kCvtE4m3x2F16x2: out_ << "cvt.rn.satfinite.e4m3x2.f16x2 " << args(in); break;
      case Op::kPack16x2:
        out_ << "mov.b32 " << reg(in.dst[0]) << ", {" << reg(in.src[0].reg) << ", " << reg(in.src[1].reg) << "}";
        break;
      case Op::kUnpack16x2:
        out_ << "mov.b32 {" << reg(in.dst[0]) << ", " << reg(in.dst[1]) << "}, " << reg(in.src[0].reg);
        break;
      case Op::kPrmt: out_ << "prmt.b32 " << args(in); break;
      case Op::kMaxS16x2: out_ << "max.s16x2 " << args(in); break;
      case Op::kSetp:
        out_ << "setp." << cmp_name(in.cmp) << "." << t << " " << reg(in.dst[0]) << ", "
             << operand(in.src[0], in.type) << ", " << operand(in.src[1], in.type);
        break;
      case Op::kSelp:
        out_ << "selp." << t << " " << reg(in.dst[0]) << ", " << operand(in.src[0], in.type) << ", "
             << operand(in.src[1], in.type) << ", " << reg(in.src[2].reg);
        break;
      case Op::kVoteAny: out_ << "vote.sync.any.pred " << reg(in.dst[0]) << ", " << reg(in.src[0].reg) << ", 0xffffffff"; break;
      case Op::kLdParam:
        out_ << "ld.param." << t << " " << reg(in.dst[0]) << ", [" << kParamName << "+" << in.offset << "]";
        break;
      case Op::kLdGlobal:
        out_ << "ld.global" << (in.non_coherent ? ".nc" : "") << vec(in.dst.size()) << "." << t << " "
             << dst_or_list(in) << ", " << address(in);
        break;
      case Op::kStGlobal:
        out_ << "st.global" << vec(in.src.size() - 1) << "." << t << " " << address(in) << ", "
             << values(in.src, 1, in.type);
        break;
      case Op::kLdShared:
        out_ << "ld.shared" << vec(in.dst.size()) << "." << t << " " << dst_or_list(in) << ", " << address(in);
        break;
      case Op::kStShared:
        out_ << "st.shared" << vec(in.src.size() - 1) << "." << t << " " << address(in) << ", "
             << values(in.src, 1, in.type);
        break;
      case Op::kLdmatrixX4:
        out_ << "ldmatrix.sync.aligned.m8n8.x4" << (in.transpose ? ".trans" : "") << ".shared.b16 " << list(in.dst)
             << ", " << address(in);
        break;
      case Op::kStmatrixX4:
        out_ << "stmatrix.sync.aligned.m8n8.x4.shared.b16 " << address(in) << ", " << values(in.src, 1, in.type);
        break;
      case Op::kCpAsync:
        out_ << "cp.async.cg.shared.global [" << reg(in.src[0].reg) << (in.offset ? "+" + std::to_string(in.offset) : "")
             << "], [" << reg(in.src[1].reg) << "], 16, " << operand(in.src[2], Type::kU32);
        break;
      case Op::kCpAsyncCommit: out_ << "cp.async.commit_group"; break;
      case Op::kCpAsyncWait: out_ << "cp.async.wait_group " << in.aux; break;
      case Op::kShflIdx:
        out_ << "shfl.sync.idx.b32 " << reg(in.dst[0]) << ", " << reg(in.src[0].reg) << ", " << in.aux << ", 31, 0xffffffff";
        break;
      case Op::kShflBfly:
        out_ << "shfl.sync.bfly.b32 " << reg(in.dst[0]) << ", " << reg(in.src[0].reg) << ", " << in.aux << ", 31, 0xffffffff";
        break;
      case Op::kBarSync:
        // bar_sync: the CTA (aux); bar_sync_count: an id operand and a thread count.
        if (in.offset) out_ << "bar.sync " << operand(in.src[0], Type::kU32) << ", " << in.offset;
        else out_ << "bar.sync " << in.aux;
        break;
      case Op::kBarArrive: out_ << "bar.arrive " << operand(in.src[0], Type::kU32) << ", " << in.offset; break;
      case Op::kParamAddress:
        out_ << "mov.b64 " << reg(in.dst[0]) << ", " << kParamName << ";\n  add.s64 " << reg(in.dst[0]) << ", "
             << reg(in.dst[0]) << ", " << in.offset << ";\n  cvta.param.u64 " << reg(in.dst[0]) << ", "
             << reg(in.dst[0]);
        break;
      case Op::kPrefetchTensormap: out_ << "prefetch.tensormap [" << reg(in.src[0].reg) << "]"; break;
      case Op::kSetmaxnreg:
        out_ << "setmaxnreg." << (in.grow ? "inc" : "dec") << ".sync.aligned.u32 " << in.aux;
        break;
      case Op::kGridDependencyWait: out_ << "griddepcontrol.wait"; break;
      case Op::kFenceProxyAsync: out_ << "fence.proxy.async.shared::cta"; break;
      case Op::kFenceMbarrierInit: out_ << "fence.mbarrier_init.release.cluster"; break;
      case Op::kMbarInit:
        out_ << "mbarrier.init.shared::cta.b64 [" << reg(in.src[0].reg) << "], " << operand(in.src[1], Type::kU32);
        break;
      case Op::kMbarArrive: out_ << "mbarrier.arrive.shared::cta.b64 _, [" << reg(in.src[0].reg) << "]"; break;
      case Op::kMbarExpectTx:
        out_ << "mbarrier.arrive.expect_tx.shared::cta.b64 _, [" << reg(in.src[0].reg) << "], "
             << operand(in.src[1], Type::kU32);
        break;
      case Op::kMbarWait: {
        // A scoped block: its predicate and label are local, so the loop can be written many times.
        const std::string label = p_.labels[size_t(in.label)];
        out_ << "{\n  .reg .pred %mbar_done;\n" << label << ":\n  mbarrier.try_wait.parity.shared::cta.b64 %mbar_done, ["
             << reg(in.src[0].reg) << "], " << operand(in.src[1], Type::kU32) << ";\n  @!%mbar_done bra " << label
             << ";\n  }";
        break;
      }
      case Op::kTmaLoad4d:
        out_ << "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint ["
             << reg(in.src[0].reg) << "], [" << reg(in.src[1].reg) << ", {" << operand(in.src[2], Type::kS32) << ", "
             << operand(in.src[3], Type::kS32) << ", " << operand(in.src[4], Type::kS32) << ", "
             << operand(in.src[5], Type::kS32) << "}], [" << reg(in.src[6].reg) << "], "
             << operand(in.src[7], Type::kU64);
        break;
      case Op::kWgmma: {
        const bool a_in_registers = in.src.size() == 6;
        out_ << "wgmma.mma_async.sync.aligned.m64n" << in.aux << "k32.f32.e4m3.e4m3 " << list(in.dst) << ", ";
        if (a_in_registers) {
          out_ << "{" << reg(in.src[0].reg) << ", " << reg(in.src[1].reg) << ", " << reg(in.src[2].reg) << ", "
               << reg(in.src[3].reg) << "}, " << reg(in.src[4].reg) << ", " << reg(in.src[5].reg);
        } else {
          out_ << reg(in.src[0].reg) << ", " << reg(in.src[1].reg) << ", " << reg(in.src[2].reg);
        }
        out_ << ", 1, 1";
        break;
      }
      case Op::kWgmmaFence: out_ << "wgmma.fence.sync.aligned"; break;
      case Op::kWgmmaCommit: out_ << "wgmma.commit_group.sync.aligned"; break;
      case Op::kWgmmaWait: out_ << "wgmma.wait_group.sync.aligned " << in.aux; break;
      case Op::kMmaF16: {
        std::vector<Reg> a, b, c;
        for (size_t i = 0; i < 4; ++i) a.push_back(in.src[i].reg);
        for (size_t i = 4; i < 6; ++i) b.push_back(in.src[i].reg);
        for (size_t i = 6; i < 10; ++i) c.push_back(in.src[i].reg);
        out_ << "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 " << list(in.dst) << ", " << list(a) << ", "
             << list(b) << ", " << list(c);
        break;
      }
      case Op::kReadSpecial:
        out_ << "mov.u32 " << reg(in.dst[0]) << ", " << (in.special == Special::kSmemBase ? kSmemName : special_name(in.special));
        break;
      case Op::kBra: out_ << (in.guard.valid() ? "bra " : "bra.uni ") << p_.labels[size_t(in.label)]; break;
      case Op::kExit: out_ << "exit"; break;
      case Op::kLabel: break;
    }
    out_ << (in.op == Op::kMbarWait ? "\n" : ";\n");  // a scoped block ends in its brace
  }

  const Program &p_;
  std::ostringstream out_;
};

}  // namespace

std::string print_ptx(const Program &program) { return Printer(program).run(); }

}  // namespace zyfa::asmgen
