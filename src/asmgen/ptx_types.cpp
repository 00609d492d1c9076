#include "asmgen/ptx_types.hpp"

namespace zyfa::asmgen {

const char *type_name(Type t) {
  switch (t) {
    case Type::kPred: return "pred";
    case Type::kB16: return "b16";
    case Type::kB32: return "b32";
    case Type::kB64: return "b64";
    case Type::kU32: return "u32";
    case Type::kU64: return "u64";
    case Type::kS32: return "s32";
    case Type::kS64: return "s64";
    case Type::kF32: return "f32";
  }
  return "?";
}

int type_bits(Type t) {
  switch (t) {
    case Type::kPred: return 1;
    case Type::kB16: return 16;
    case Type::kB64:
    case Type::kU64:
    case Type::kS64: return 64;
    default: return 32;
  }
}

bool is_signed(Type t) { return t == Type::kS32 || t == Type::kS64; }

const char *cmp_name(Cmp c) {
  switch (c) {
    case Cmp::kLt: return "lt";
    case Cmp::kLe: return "le";
    case Cmp::kGt: return "gt";
    case Cmp::kGe: return "ge";
    case Cmp::kEq: return "eq";
    case Cmp::kNe: return "ne";
  }
  return "?";
}

const char *round_name(Round r) {
  switch (r) {
    case Round::kNone: return "";
    case Round::kRn: return "rn";
    case Round::kRni: return "rni";
    case Round::kRzi: return "rzi";
    case Round::kRmi: return "rmi";
    case Round::kRpi: return "rpi";
  }
  return "?";
}

const char *special_name(Special s) {
  switch (s) {
    case Special::kTidX: return "%tid.x";
    case Special::kCtaidX: return "%ctaid.x";
    case Special::kNctaidX: return "%nctaid.x";
    case Special::kSmemBase: return "smem";
  }
  return "?";
}

}  // namespace zyfa::asmgen
