// The wgmma schedule's V transposition (fp8_vt_transpose.cpp) on the emitter's interpreter: one warpgroup
// copies a V block (random bytes, laid out as TMA's 128-byte swizzle lands it) into shared memory,
// transposes it, and copies V^T out; every byte of V^T must be the V byte that the layout of
// fp8_vt_transpose.hpp puts there (the consumers' wgmma descriptors read exactly that layout).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "asmgen/builder.hpp"
#include "asmgen/fp8_vt_transpose.hpp"
#include "asmgen/interpreter.hpp"
#include "kernels/fp8_vt_layout.h"

namespace zyfa::asmgen::fp8w {
namespace {

constexpr int kThreads = 32 * kVtWarps;
constexpr int kBlockBytes = numerics::kKeyBlock * kVtRowBytes;  // one V block, and the V^T rows it fills
constexpr int kWordsPerThread = kBlockBytes / kThreads / 4;

// Byte offset of element (row, column) in a 128-byte-row tile with the 128-byte swizzle.
size_t swizzled(int row, int column) {
  return size_t(row * kVtRowBytes + ((column / 16) ^ (row % kVtSwizzleRows)) * 16 + column % 16);
}

// Thread t copies words t, t + kThreads, ... between global memory (u64 parameter 0 in, 1 out) and shared
// memory: V in at offset 0, V^T out from offset kBlockBytes.
Program transpose_program() {
  Program p;
  p.entry = "vt_transpose_test";
  p.threads = kThreads;
  p.param_bytes = 16;
  p.dynamic_smem_bytes = 2 * kBlockBytes;
  Builder b(p);
  const Reg in = b.temp(Type::kU64, "in");
  const Reg out = b.temp(Type::kU64, "out");
  b.ld_param(in, 0);
  b.ld_param(out, 8);
  const Reg tid = b.temp(Type::kU32, "tid");
  b.read_special(tid, Special::kTidX);
  const Reg lane = b.temp(Type::kU32, "lane");
  b.and_(lane, tid, imm(31));
  const Reg warp = b.temp(Type::kU32, "warp");
  b.shr(warp, tid, imm(5));
  const Reg byte = b.temp(Type::kU32, "byte");
  b.shl(byte, tid, imm(2));
  const Reg byte64 = b.temp(Type::kU64, "byte64");
  b.cvt(byte64, byte, Type::kU32, Round::kNone);
  b.add(in, in, byte64);
  b.add(out, out, byte64);
  const Reg word = b.temp(Type::kB32, "word");
  for (int i = 0; i < kWordsPerThread; ++i) {
    b.ld_global({word}, in, int64_t(i) * kThreads * 4, /*non_coherent=*/true);
    b.st_shared(Type::kB32, byte, int64_t(i) * kThreads * 4, {word});
  }
  b.bar_sync(0);
  const VtTransposeLanes lanes = emit_vt_transpose_setup(b, lane, warp);
  const Reg v_buf = b.temp(Type::kU32, "v_buf");
  const Reg vt_buf = b.temp(Type::kU32, "vt_buf");
  b.mov(v_buf, imm(0));
  b.mov(vt_buf, imm(kBlockBytes));
  emit_vt_transpose_block(b, lanes, v_buf, vt_buf);
  b.bar_sync(0);
  for (int i = 0; i < kWordsPerThread; ++i) {
    b.ld_shared({word}, byte, kBlockBytes + int64_t(i) * kThreads * 4);
    b.st_global(Type::kB32, out, int64_t(i) * kThreads * 4, {word});
  }
  b.exit();
  return p;
}

// Two runs pin every byte's source exactly: V[key][dim] = key, then = dim (each fits a byte), so a byte
// from the wrong key or the wrong dim shows in one of them (random bytes would hide a misplaced one whenever
// its wrong source held the same value).
TEST(VtTranspose, EveryByteOfVtIsTheVByteItsLayoutNames) {
  const Program prog = transpose_program();
  for (const bool by_key : {true, false}) {
    SCOPED_TRACE(by_key ? "V[key][dim] = key" : "V[key][dim] = dim");
    std::vector<uint8_t> v_smem(kBlockBytes), vt_smem(kBlockBytes, 0xEE);
    for (int key = 0; key < numerics::kKeyBlock; ++key)
      for (int dim = 0; dim < kVtRowBytes; ++dim) v_smem[swizzled(key, dim)] = uint8_t(by_key ? key : dim);
    Interpreter interp(prog);
    interp.add_region(v_smem.data(), v_smem.size(), false);
    interp.add_region(vt_smem.data(), vt_smem.size(), true);
    const uint64_t params[2] = {uint64_t(uintptr_t(v_smem.data())), uint64_t(uintptr_t(vt_smem.data()))};
    ASSERT_EQ(interp.run(1, params), "");
    int mismatches = 0;
    for (int dim = 0; dim < kVtDims; ++dim)            // a V^T row
      for (int group = 0; group < numerics::kKeyBlock / 16; ++group)
        for (int pos = 0; pos < 16; ++pos) {           // the layout the workspace's V^T has too
          const int key = 16 * group + fp8_vt::key_at(pos);
          const uint8_t want = uint8_t(by_key ? key : dim);
          const uint8_t got = vt_smem[swizzled(dim, 16 * group + pos)];
          if (got != want && ++mismatches <= 5) {
            ADD_FAILURE() << "V^T row " << dim << ", key group " << group << ", position " << pos << ": got "
                          << int(got) << ", want V[" << key << "][" << dim << "] = " << int(want);
          }
        }
    EXPECT_EQ(mismatches, 0);
  }
}

}  // namespace
}  // namespace zyfa::asmgen::fp8w
