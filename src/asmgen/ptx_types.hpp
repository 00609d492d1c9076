// PTX register types and the instruction set the emitter knows: one enum for each, so the printer
// (ptx_printer.cpp) and the CPU interpreter (interpreter.cpp) cover exactly the same ground.
#ifndef ZYFA_ASMGEN_PTX_TYPES_HPP_
#define ZYFA_ASMGEN_PTX_TYPES_HPP_

#include <cstdint>

namespace zyfa::asmgen {

enum class Type : uint8_t { kPred, kB16, kB32, kB64, kU32, kU64, kS32, kS64, kF32 };

// "pred", "b16", ... as PTX spells the type suffix.
const char *type_name(Type t);
int type_bits(Type t);
bool is_signed(Type t);

enum class Op : uint8_t {
  // data movement and integer arithmetic
  kMov, kAdd, kSub, kMulLo, kMulWide, kMad, kDiv, kMin, kMax, kShl, kShr, kAnd, kOr, kXor,
  // fp32 arithmetic (every rounding explicit, so ptxas never contracts a mul and an add)
  kFma, kMul, kEx2, kLg2,
  // conversions and byte work
  kCvt, kCvtE4m3x2, kCvtF16x2E4m3x2, kCvtBf16x2, kPack16x2, kUnpack16x2, kPrmt, kMaxS16x2,
  // f16x2 work (split P's residual)
  kCvtF16x2F32, kSubF16x2, kCvtE4m3x2F16x2,
  // predicates
  kSetp, kSelp, kVoteAny,
  // memory
  kLdParam, kLdGlobal, kStGlobal, kLdShared, kStShared, kLdmatrixX4, kStmatrixX4, kCpAsync, kCpAsyncCommit,
  kCpAsyncWait,
  // warp and CTA collectives
  kShflBfly, kShflIdx, kBarSync, kBarArrive, kMmaF16,
  // Hopper's asynchronous machinery (the wgmma kernels; the CPU interpreter models them, interpreter.hpp)
  kParamAddress, kPrefetchTensormap, kSetmaxnreg, kGridDependencyWait, kFenceProxyAsync, kFenceMbarrierInit, kMbarInit, kMbarArrive,
  kMbarExpectTx, kMbarWait, kTmaLoad4d, kWgmma, kWgmmaFence, kWgmmaCommit, kWgmmaWait,
  // special registers and control flow
  kReadSpecial, kLabel, kBra, kExit,
};

enum class Cmp : uint8_t { kLt, kLe, kGt, kGe, kEq, kNe };
const char *cmp_name(Cmp c);

// Rounding of a cvt or of fp32 arithmetic: kNone where PTX takes none (integer widening).
enum class Round : uint8_t { kNone, kRn, kRni, kRzi, kRmi, kRpi };
const char *round_name(Round r);

// kSmemBase: the shared-window address of the dynamic shared memory array.
enum class Special : uint8_t { kTidX, kCtaidX, kNctaidX, kSmemBase };
const char *special_name(Special s);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_PTX_TYPES_HPP_
