// emit_block_maxes on the emitter's interpreter: several rows reduced together (the wgmma consumers pass a
// thread's two rows at once, so that their shuffle rounds overlap) give, per row, c times the max over the
// thread's scores and the other three lanes of its quad, the same as emit_block_max row by row. Rows of odd
// length keep their last score (the tree carries it up a level).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "asmgen/builder.hpp"
#include "asmgen/fp8_recurrence.hpp"
#include "asmgen/interpreter.hpp"
#include "kernels/numerics.h"
#include "support/seed.hpp"

namespace zyfa::asmgen {
namespace {

constexpr int kLanes = 32;
constexpr int kQuad = 4;
constexpr float kC = 0.180336880f;  // a score scale that rounds: the product must match the host's
// Each thread's scores and results lie at fixed strides (powers of two, so that an address is a shift).
constexpr int kInWordsLog2 = 6;   // up to 64 scores a thread
constexpr int kOutWordsLog2 = 3;  // up to 8 rows
constexpr int kInWords = 1 << kInWordsLog2;
constexpr int kOutWords = 1 << kOutWordsLog2;

// Thread t loads its scores (row lengths `sizes`, one after the other) from word t * kInWords of the input and
// writes one bmax per row from word t * kOutWords of the output; `together` picks emit_block_maxes over all
// rows or emit_block_max per row.
std::vector<float> run(const std::vector<int> &sizes, const std::vector<float> &in, bool together) {
  Program p;
  p.entry = "block_max_test";
  p.threads = kLanes;
  p.param_bytes = 16;
  Builder b(p);
  const Reg src = b.temp(Type::kU64, "src"), dst = b.temp(Type::kU64, "dst");
  b.ld_param(src, 0);
  b.ld_param(dst, 8);
  const Reg tid = b.temp(Type::kU32, "tid");
  b.read_special(tid, Special::kTidX);
  const Reg offset = b.temp(Type::kU64, "offset");
  b.cvt(offset, tid, Type::kU32, Round::kNone);
  b.shl(offset, offset, imm(kInWordsLog2 + 2));
  b.add(src, src, offset);
  b.cvt(offset, tid, Type::kU32, Round::kNone);
  b.shl(offset, offset, imm(kOutWordsLog2 + 2));
  b.add(dst, dst, offset);
  std::vector<std::vector<Reg>> rows;
  int word = 0;
  for (int n : sizes) {
    rows.emplace_back();
    for (int i = 0; i < n; ++i, ++word) {
      const Reg x = b.temp(Type::kF32, "score");
      b.ld_global({x}, src, 4 * word, /*non_coherent=*/true);
      rows.back().push_back(x);
    }
  }
  const Reg c = b.temp(Type::kF32, "c");
  b.mov(c, f32(kC));
  std::vector<Reg> bmax;
  if (together) {
    bmax = emit_block_maxes(b, rows, c);
  } else {
    for (const auto &row : rows) bmax.push_back(emit_block_max(b, row, c));
  }
  for (size_t r = 0; r < bmax.size(); ++r) b.st_global(Type::kB32, dst, int64_t(4 * r), {bmax[r]});
  b.exit();

  std::vector<float> out(size_t(kLanes) * kOutWords, NAN);
  Interpreter interp(p);
  interp.add_region(in.data(), in.size() * 4, false);
  interp.add_region(out.data(), out.size() * 4, true);
  const uint64_t params[2] = {uint64_t(uintptr_t(in.data())), uint64_t(uintptr_t(out.data()))};
  EXPECT_EQ(interp.run(1, params), "");
  std::vector<float> packed;  // the rows' results, thread after thread
  for (int t = 0; t < kLanes; ++t)
    for (size_t r = 0; r < sizes.size(); ++r) packed.push_back(out[size_t(t * kOutWords) + r]);
  return packed;
}

// The host's answer: c times the max over the quad's scores of each row (max.f32 skips a NaN operand).
std::vector<float> expected(const std::vector<int> &sizes, const std::vector<float> &in) {
  std::vector<float> out;
  for (int t = 0; t < kLanes; ++t) {
    int first = 0;
    for (int n : sizes) {
      float mx = -INFINITY;
      for (int lane = t / kQuad * kQuad; lane < t / kQuad * kQuad + kQuad; ++lane)
        for (int i = 0; i < n; ++i) mx = std::fmax(mx, in[size_t(lane * kInWords + first + i)]);
      out.push_back(kC * mx);
      first += n;
    }
  }
  return out;
}

std::vector<float> random_scores(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> in(size_t(kLanes) * kInWords);
  for (float &x : in) x = normal(rng);
  return in;
}

void expect_same_bits(const std::vector<float> &got, const std::vector<float> &want, const char *what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(numerics::float_bits(got[i]), numerics::float_bits(want[i])) << what << ", output " << i;
}

TEST(BlockMax, TwoRowsTogetherMatchTheHostAndTheRowByRowForm) {
  const std::vector<int> sizes = {32, 32};  // a wgmma consumer thread's two rows of an n128 S
  ZYFA_TRACED_SEED(seed);
  const std::vector<float> in = random_scores(seed);
  const std::vector<float> want = expected(sizes, in);
  expect_same_bits(run(sizes, in, /*together=*/true), want, "together");
  expect_same_bits(run(sizes, in, /*together=*/false), want, "row by row");
}

TEST(BlockMax, RowsOfOddAndUnequalLengthsKeepEveryScore) {
  const std::vector<int> sizes = {3, 1, 7, 32};
  ZYFA_TRACED_SEED(seed);
  std::vector<float> in = random_scores(seed);
  // The largest score of each row last in lane 5's list, where a tree that drops an odd level's tail loses it.
  int first = 0;
  for (int n : sizes) {
    in[size_t(5 * kInWords + first + n - 1)] = 1000.0f + float(first);
    first += n;
  }
  expect_same_bits(run(sizes, in, /*together=*/true), expected(sizes, in), "together");
}

TEST(BlockMax, MaskedScoresAndNaNsAreSkipped) {
  const std::vector<int> sizes = {32, 32};
  ZYFA_TRACED_SEED(seed);
  std::vector<float> in = random_scores(seed);
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 32; ++i) in[size_t(lane * kInWords + i)] = -INFINITY;  // row 0 masked in every lane but quad 0's
    in[size_t(lane * kInWords + 40)] = NAN;
  }
  in[size_t(2 * kInWords + 7)] = 0.5f;
  const std::vector<float> got = run(sizes, in, /*together=*/true);
  expect_same_bits(got, expected(sizes, in), "together");
  EXPECT_EQ(got[2 * 2], kC * 0.5f);          // quad 0: the one unmasked score
  EXPECT_EQ(got[8 * 2], -INFINITY);          // quad 2: all masked
}

}  // namespace
}  // namespace zyfa::asmgen
