// The fp64 oracle against a naive long-double attention written from the definition, at tiny shapes,
// and its handling of layouts, GQA head mapping, descales and the LSE.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/numerics.h"
#include "ref/reference.hpp"
#include "support/support.hpp"

namespace zyfa::test {
namespace {

constexpr double kTolerance = 1e-12;  // relative to max(1, |value|): fp64 against long double

// Decodes one stored input element with its descale from the HostAttention's own buffers.
long double stored_value(const HostAttention &h, const HostTensor &t, const std::vector<float> &descale,
                         int64_t b, int64_t s, int64_t head, int64_t kv_head, int64_t d) {
  const int64_t i = t.index(b, s, head, d);
  if (!h.shape().fp8()) {
    uint32_t bits = uint32_t(t.bf16(i)) << 16;
    float x;
    std::memcpy(&x, &bits, 4);
    return x;
  }
  const float scale = descale.size() == 1 ? descale[0] : descale[size_t(b * h.shape().nheads_k + kv_head)];
  return (long double)numerics::e4m3_value(t.fp8(i)) * scale;
}

// softmax(scale q k^T) v over keys j <= i, straight from the definition.
ref::ReferenceResult naive_attention(const HostAttention &h) {
  const AttentionShape &sh = h.shape();
  const long double scale = h.problem().softmax_scale;
  const int64_t group = sh.nheads / sh.nheads_k;
  ref::ReferenceResult r;
  r.out.assign(size_t(sh.batch * sh.seqlen * sh.nheads * sh.d_v), 0.0);
  r.lse.assign(size_t(sh.batch * sh.nheads * sh.seqlen), 0.0);
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t hq = 0; hq < sh.nheads; ++hq)
      for (int64_t i = 0; i < sh.seqlen; ++i) {
        const int64_t hk = hq / group;
        std::vector<long double> w(size_t(i + 1));
        long double total = 0;
        for (int64_t j = 0; j <= i; ++j) {
          long double dot = 0;
          for (int64_t d = 0; d < sh.d_qk; ++d)
            dot += stored_value(h, h.q, h.q_descale, b, i, hq, hk, d) * stored_value(h, h.k, h.k_descale, b, j, hk, hk, d);
          w[size_t(j)] = std::exp(scale * dot);
          total += w[size_t(j)];
        }
        for (int64_t d = 0; d < sh.d_v; ++d) {
          long double acc = 0;
          for (int64_t j = 0; j <= i; ++j) acc += w[size_t(j)] * stored_value(h, h.v, h.v_descale, b, j, hk, hk, d);
          r.out[size_t(((b * sh.seqlen + i) * sh.nheads + hq) * sh.d_v + d)] = double(acc / total);
        }
        r.lse[size_t((b * sh.nheads + hq) * sh.seqlen + i)] = double(std::log(total));
      }
  return r;
}

void expect_close(const std::vector<double> &actual, const std::vector<double> &expected, const char *what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], kTolerance * std::max(1.0, std::fabs(expected[i]))) << what << " at " << i;
}

std::vector<AttentionShape> reference_cases() {
  std::vector<AttentionShape> cases = {
      attention_shape(ZYFA_DTYPE_BF16, 128, 2, 5, 4, 2, Layout::kBSHD),
      attention_shape(ZYFA_DTYPE_BF16, 192, 1, 9, 3, 1, Layout::kBHSD),
      attention_shape(ZYFA_DTYPE_FP8_E4M3, 128, 1, 7, 2, 2, Layout::kStrided),
      attention_shape(ZYFA_DTYPE_FP8_E4M3, 192, 2, 6, 6, 3, Layout::kBSHD),
  };
  AttentionShape per_head = attention_shape(ZYFA_DTYPE_FP8_E4M3, 128, 2, 4, 4, 2, Layout::kBHSD);
  per_head.per_head_descale = true;
  cases.push_back(per_head);
  AttentionShape scaled = attention_shape(ZYFA_DTYPE_BF16, 128, 1, 8, 2, 1, Layout::kStrided);
  scaled.softmax_scale = 0.05f;
  cases.push_back(scaled);
  return cases;
}

class Reference : public ::testing::TestWithParam<AttentionShape> {};

TEST_P(Reference, MatchesNaiveLongDoubleAttention) {
  const AttentionShape shape = GetParam();
  ZYFA_TRACED_SEED(seed);
  HostAttention h(shape);
  Activations a = generate_activations(shape.qkv(), ActivationSpec(), seed);
  if (shape.per_head_descale) {
    // Magnitudes 16x apart (smaller) per (batch, kv head) slice, so that every slice gets its own power-of-two descale
    // (a random slice's amax varies far less than 16x) and a descale read from the wrong slot shows.
    for (size_t i = 0; i < a.k.size(); ++i) {
      const size_t row = i / size_t(shape.d_qk);  // (batch, position, kv head), BSHD
      const size_t kv_head = row % size_t(shape.nheads_k), b = row / size_t(shape.nheads_k * shape.seqlen);
      a.k[i] *= std::ldexp(1.0f, -4 * int(b * size_t(shape.nheads_k) + kv_head));  // down: no score overflows
    }
  }
  h.set_inputs(a);
  if (shape.per_head_descale) {
    ASSERT_NE(*std::min_element(h.k_descale.begin(), h.k_descale.end()),
              *std::max_element(h.k_descale.begin(), h.k_descale.end()));
  }
  const ref::ReferenceResult got = ref::attention_fp64(h.problem());
  const ref::ReferenceResult want = naive_attention(h);
  expect_close(got.out, want.out, "out");
  expect_close(got.lse, want.lse, "lse");
}

std::string case_name(const ::testing::TestParamInfo<AttentionShape> &info) { return info.param.name(); }
INSTANTIATE_TEST_SUITE_P(TinyShapes, Reference, ::testing::ValuesIn(reference_cases()), case_name);

// The oracle reads logical elements: the same inputs in any layout give the same bits.
TEST(ReferenceLayouts, SameResultInEveryLayout) {
  ZYFA_TRACED_SEED(seed);
  for (zyfa_dtype dtype : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    AttentionShape shape = attention_shape(dtype, 128, 2, 11, 4, 2, Layout::kBSHD);
    const Activations a = generate_activations(shape.qkv(), ActivationSpec(), seed);
    HostAttention bshd(shape);
    bshd.set_inputs(a);
    const ref::ReferenceResult base = ref::attention_fp64(bshd.problem());
    for (Layout layout : {Layout::kBHSD, Layout::kStrided}) {
      shape.layout = layout;
      HostAttention other(shape);
      other.set_inputs(a);
      const ref::ReferenceResult r = ref::attention_fp64(other.problem());
      EXPECT_EQ(r.out, base.out) << shape.name();
      EXPECT_EQ(r.lse, base.lse) << shape.name();
    }
  }
}

// GQA: query head h reads kv head h / group, so changing kv head 1 changes exactly the heads of group 1.
TEST(ReferenceGqa, QueryHeadsReadTheirGroupsKvHead) {
  const AttentionShape shape = attention_shape(ZYFA_DTYPE_BF16, 128, 1, 6, 8, 2, Layout::kBSHD);
  ZYFA_TRACED_SEED(seed);
  Activations a = generate_activations(shape.qkv(), ActivationSpec(), seed);
  HostAttention h(shape);
  h.set_inputs(a);
  const ref::ReferenceResult before = ref::attention_fp64(h.problem());
  for (int64_t s = 0; s < shape.seqlen; ++s)
    for (int64_t d = 0; d < shape.d_v; ++d) a.v[size_t((s * shape.nheads_k + 1) * shape.d_v + d)] += 1.0f;
  h.set_inputs(a);
  const ref::ReferenceResult after = ref::attention_fp64(h.problem());
  for (int64_t s = 0; s < shape.seqlen; ++s)
    for (int64_t hq = 0; hq < shape.nheads; ++hq) {
      const size_t at = size_t((s * shape.nheads + hq) * shape.d_v);
      const bool in_group_1 = hq / (shape.nheads / shape.nheads_k) == 1;
      EXPECT_EQ(before.out[at] != after.out[at], in_group_1) << "row " << s << " head " << hq;
    }
}

// One key: the output is that key's value and the LSE is its scaled score, exactly. The expectation decodes
// the stored inputs itself (stored_value, long double), not through the oracle's own input_value.
TEST(ReferenceSingleKey, FirstRowIsItsValueAndScore) {
  for (zyfa_dtype dtype : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    const AttentionShape shape = attention_shape(dtype, 192, 1, 1, 2, 1, Layout::kBSHD);
    SCOPED_TRACE(shape.name());
    ZYFA_TRACED_SEED(seed);
    HostAttention h(shape);
    h.set_inputs(generate_activations(shape.qkv(), ActivationSpec(), seed));
    const Problem p = h.problem();
    const ref::ReferenceResult r = ref::attention_fp64(p);
    for (int64_t hq = 0; hq < shape.nheads; ++hq) {
      long double dot = 0;
      for (int64_t d = 0; d < shape.d_qk; ++d)
        dot += stored_value(h, h.q, h.q_descale, 0, 0, hq, 0, d) * stored_value(h, h.k, h.k_descale, 0, 0, 0, 0, d);
      EXPECT_NEAR(r.lse[size_t(hq)], double((long double)p.softmax_scale * dot), 1e-12);
      for (int64_t d = 0; d < shape.d_v; ++d)
        EXPECT_EQ(r.out[size_t(hq * shape.d_v + d)], double(stored_value(h, h.v, h.v_descale, 0, 0, 0, 0, d)));
    }
  }
}

// The error norms every accuracy check reads: a NaN or infinity on either side is counted and makes both
// norms infinite wherever it stands, and weights scale each value's square in both sums of rel_rms.
TEST(ErrorNorms, NonFiniteOnEitherSideIsCountedAndNeverHidden) {
  const double nan = std::nan(""), inf = INFINITY;
  for (size_t at : {size_t(0), size_t(1), size_t(2)}) {
    std::vector<double> actual{1.0, 2.0, 3.5}, expected{1.0, 2.5, 3.0};
    actual[at] = nan;
    ErrorStats e = compare_to_reference(actual, expected);
    EXPECT_EQ(e.nonfinite, 1) << "NaN actual at " << at;
    EXPECT_EQ(e.max_abs, inf) << "NaN actual at " << at;
    EXPECT_EQ(e.rel_rms, inf) << "NaN actual at " << at;
    actual[at] = 1.0;
    expected[at] = nan;
    e = compare_to_reference(actual, expected);
    EXPECT_EQ(e.nonfinite, 1) << "NaN expected at " << at;
    EXPECT_EQ(e.max_abs, inf) << "NaN expected at " << at;
  }
}

TEST(ErrorNorms, WeightsScaleBothSums) {
  const std::vector<double> actual{1.0, 2.0}, expected{2.0, 4.0};  // errors 1 and 2, references 2 and 4
  EXPECT_NEAR(compare_to_reference(actual, expected).rel_rms, std::sqrt(5.0 / 20.0), 1e-15);
  EXPECT_NEAR(compare_to_reference(actual, expected, {3.0, 1.0}).rel_rms, std::sqrt(7.0 / 28.0), 1e-15);
  EXPECT_NEAR(compare_to_reference(actual, {2.0, 3.0}, {3.0, 1.0}).rel_rms, std::sqrt(4.0 / 21.0), 1e-15);
  EXPECT_EQ(compare_to_reference(actual, expected).max_abs, 2.0);
  EXPECT_EQ(compare_to_reference(actual, expected, {1.0}).count, -1);  // one weight per value, or none
}

}  // namespace
}  // namespace zyfa::test
