// A kernel as data: its registers and a list of typed instructions. The builder (builder.hpp) writes it,
// the printer (ptx_printer.hpp) turns it into PTX text, and the interpreter (interpreter.hpp) runs it on
// the CPU, so the tests check the very instruction list that ptxas assembles.
#ifndef ZYFA_ASMGEN_PROGRAM_HPP_
#define ZYFA_ASMGEN_PROGRAM_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "asmgen/ptx_types.hpp"
#include "asmgen/registers.hpp"

namespace zyfa::asmgen {

struct Operand {
  enum class Kind : uint8_t { kReg, kInt, kF32 };
  Kind kind = Kind::kInt;
  Reg reg;
  int64_t i = 0;
  float f = 0.0f;

  Operand(Reg r) : kind(Kind::kReg), reg(r) {}  // NOLINT: registers are operands
  static Operand imm(int64_t v) {
    Operand o{Reg{}};
    o.kind = Kind::kInt;
    o.i = v;
    return o;
  }
  static Operand f32(float v) {
    Operand o{Reg{}};
    o.kind = Kind::kF32;
    o.f = v;
    return o;
  }
};
inline Operand imm(int64_t v) { return Operand::imm(v); }
inline Operand f32(float v) { return Operand::f32(v); }

// One instruction. Which fields matter depends on `op` (see builder.hpp, where each is made).
struct Instr {
  Op op = Op::kMov;
  Type type = Type::kB32;      // the instruction's type suffix (destination type for cvt)
  Type src_type = Type::kB32;  // cvt's source type, mul.wide's operand type
  Round round = Round::kNone;
  Cmp cmp = Cmp::kEq;
  Special special = Special::kTidX;
  std::vector<Reg> dst;
  std::vector<Operand> src;    // for memory ops: the address register first, then stored values
  int64_t offset = 0;          // memory ops: byte offset added to the address
  int64_t aux = 0;             // shfl lane mask, bar.sync id, cp.async.wait_group depth
  bool non_coherent = false;   // ld.global.nc
  bool transpose = false;      // ldmatrix .trans
  bool grow = false;           // setmaxnreg .inc (else .dec)
  Reg guard;                   // executes only where guard (or !guard) holds
  bool guard_negated = false;
  int label = -1;              // kLabel, kBra
};

struct Program {
  std::string entry;              // the kernel's entry name
  int threads = 0;                // .maxntid, and the launch's block size
  int param_bytes = 0;            // one .param blob of this size: the kernel's parameter struct
  int dynamic_smem_bytes = 0;     // what the launch must ask for
  RegisterFile regs;
  std::vector<Instr> code;
  std::vector<std::string> labels;
};

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_PROGRAM_HPP_
