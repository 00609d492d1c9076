// The shared input generators, the FP8 quantization rule and the host buffers every test relies on:
// determinism, the documented statistics, RoPE, the descale rule, layouts and the poison checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/numerics.h"
#include "support/support.hpp"

namespace zyfa::test {
namespace {

QkvShape small_shape(int64_t seqlen = 256) { return {1, seqlen, 4, 2, 128, 128}; }

TEST(Activations, SameSeedSameTensorsOtherSeedOthers) {
  for (ActivationKind kind : {ActivationKind::kGaussian, ActivationKind::kOutlier, ActivationKind::kStructured}) {
    ActivationSpec spec;
    spec.kind = kind;
    const Activations a = generate_activations(small_shape(), spec, 1), b = generate_activations(small_shape(), spec, 1);
    const Activations c = generate_activations(small_shape(), spec, 2);
    EXPECT_EQ(a.q, b.q) << activation_kind_name(kind);
    EXPECT_EQ(a.k, b.k) << activation_kind_name(kind);
    EXPECT_EQ(a.v, b.v) << activation_kind_name(kind);
    EXPECT_NE(a.q, c.q) << activation_kind_name(kind);
    EXPECT_NE(a.q, a.k) << activation_kind_name(kind);
  }
}

TEST(Activations, KindNamesRoundTrip) {
  for (ActivationKind kind : {ActivationKind::kGaussian, ActivationKind::kOutlier, ActivationKind::kStructured}) {
    ActivationKind parsed = ActivationKind::kGaussian;
    ASSERT_TRUE(parse_activation_kind(activation_kind_name(kind), &parsed));
    EXPECT_EQ(parsed, kind);
  }
  ActivationKind untouched = ActivationKind::kOutlier;
  EXPECT_FALSE(parse_activation_kind("uniform", &untouched));
  EXPECT_EQ(untouched, ActivationKind::kOutlier);
}

TEST(Activations, GaussianHasTheRequestedStd) {
  ActivationSpec spec;
  spec.std = 0.1f;
  const ActivationStats st = activation_stats(generate_activations(small_shape(512), spec, 4));
  for (const TensorStats *t : {&st.q, &st.k, &st.v}) {
    EXPECT_NEAR(t->std, 0.1, 0.002);
    EXPECT_NEAR(t->mean, 0.0, 0.002);
    EXPECT_NEAR(t->excess_kurtosis, 0.0, 0.1);
  }
}

// N(0,1) + N(0,100) Bernoulli(0.001): variance 1.1, excess kurtosis 3 (1 + 0.001 (101^2 - 1)) / 1.21 - 3 = 24.8.
TEST(Activations, OutlierMixtureHasItsVarianceAndTails) {
  ActivationSpec spec;
  spec.kind = ActivationKind::kOutlier;
  const ActivationStats st = activation_stats(generate_activations({1, 1024, 8, 8, 128, 128}, spec, 6));
  for (const TensorStats *t : {&st.q, &st.k, &st.v}) {
    EXPECT_NEAR(t->std, std::sqrt(1.1), 0.03);
    EXPECT_GT(t->excess_kurtosis, 15.0);
    EXPECT_LT(t->excess_kurtosis, 40.0);
    EXPECT_GT(t->amax, 20.0);
  }
}

TEST(Activations, StructuredHasSinksMassiveChannelsAndHeavyTails) {
  ActivationSpec spec;
  spec.kind = ActivationKind::kStructured;
  for (int64_t d_qk : {128, 192}) {
    const ActivationStats st = activation_stats(generate_activations({1, 1024, 4, 2, d_qk, 128}, spec, 9));
    SCOPED_TRACE(format_stats(st));
    EXPECT_GT(st.early_key_mass, 0.1);   // sinks draw a large share at every sampled row
    EXPECT_GT(st.q.channel_ratio, 4.0);  // massive channels stand out from the median channel
    EXPECT_GT(st.k.channel_ratio, 4.0);
    EXPECT_GT(st.v.excess_kurtosis, 1.0);
    EXPECT_GT(st.logit_std, 1.0);
  }
  // Gaussian inputs have none of it.
  const ActivationStats g = activation_stats(generate_activations({1, 1024, 4, 2, 128, 128}, ActivationSpec(), 9));
  EXPECT_LT(g.early_key_mass, 0.05);
  EXPECT_LT(g.q.channel_ratio, 1.5);
}

// RoPE rotates pairs (c, c + 64) at d = 128: each pair keeps its length, and position 0 is not rotated.
TEST(Activations, RopeRotatesPairsWithoutChangingTheirLength) {
  ActivationSpec spec;
  spec.kind = ActivationKind::kStructured;
  const QkvShape shape = small_shape(64);
  const Activations rotated = generate_activations(shape, spec, 12);
  spec.structured.rope_base = 0.0f;
  const Activations plain = generate_activations(shape, spec, 12);
  EXPECT_NE(rotated.q, plain.q);
  for (int64_t row = 0; row < shape.seqlen * shape.nheads; ++row) {
    const float *r = &rotated.q[size_t(row * shape.d_qk)], *p = &plain.q[size_t(row * shape.d_qk)];
    for (int64_t c = 0; c < shape.d_qk / 2; ++c) {
      const double len_r = std::hypot(r[c], r[c + shape.d_qk / 2]), len_p = std::hypot(p[c], p[c + shape.d_qk / 2]);
      ASSERT_NEAR(len_r, len_p, 1e-5 * (1 + len_p)) << "row " << row << " pair " << c;
      if (row < shape.nheads) {
        ASSERT_EQ(r[c], p[c]);  // position 0
      }
    }
  }
}

TEST(Quantize, DescaleIsThePowerOfTwoThatFitsAmaxIn448) {
  EXPECT_EQ(fp8_descale_for_amax(448.0f), 1.0f);
  EXPECT_EQ(fp8_descale_for_amax(std::nextafter(448.0f, 1e9f)), 2.0f);
  EXPECT_EQ(fp8_descale_for_amax(224.0f), 0.5f);
  EXPECT_EQ(fp8_descale_for_amax(225.0f), 1.0f);
  EXPECT_EQ(fp8_descale_for_amax(1.0f), 0x1.0p-8f);
  EXPECT_EQ(fp8_descale_for_amax(0.0f), 1.0f);
  for (float amax = 1e-6f; amax < 1e6f; amax *= 1.37f) {
    const float d = fp8_descale_for_amax(amax);
    ASSERT_LE(amax / d, 448.0f) << amax;
    ASSERT_GT(amax / d, 224.0f) << amax;
  }
}

TEST(Quantize, Fp8InputsUseTheRangeAndRoundToNearest) {
  AttentionShape shape;
  shape.dtype = ZYFA_DTYPE_FP8_E4M3;
  shape.seqlen = 64;
  shape.nheads = 2;
  HostAttention h(shape);
  const Activations a = generate_activations(shape.qkv(), ActivationSpec(), 21);
  h.set_inputs(a);
  float largest = 0;
  for (int64_t s = 0; s < shape.seqlen; ++s)
    for (int64_t hq = 0; hq < shape.nheads; ++hq)
      for (int64_t d = 0; d < shape.d_qk; ++d) {
        const float x = numerics::round_bf16(a.q[size_t((s * shape.nheads + hq) * shape.d_qk + d)]);
        const float code_value = numerics::e4m3_value(h.q.fp8(h.q.index(0, s, hq, d)));
        largest = std::max(largest, std::fabs(code_value));
        const float back = code_value * h.q_descale[0];
        // Half a step of the 3-bit mantissa in x's own binade (2^(e-4) for |x| / descale in [2^e, 2^(e+1))),
        // or half the subnormal step (e4m3's normal binades start at 2^-6): truncation misses this by up to
        // a whole step near a binade's top.
        const int binade = std::max(std::ilogb(std::fabs(x) / h.q_descale[0]), -6);
        ASSERT_LE(std::fabs(back - x), std::ldexp(h.q_descale[0], binade - 4)) << x;
      }
  EXPECT_GT(largest, 224.0f);
  EXPECT_LE(largest, 448.0f);
}

TEST(HostTensor, LayoutsPlaceEveryElementOnceAndStridedLeavesGaps) {
  for (Layout layout : {Layout::kBSHD, Layout::kBHSD, Layout::kStrided}) {
    const HostTensor t(2, 5, 3, 16, 2, layout);
    std::set<int64_t> seen;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t s = 0; s < 5; ++s)
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t d = 0; d < 16; ++d) {
            const int64_t i = t.index(b, s, h, d);
            ASSERT_LT(i, t.storage_elements());
            ASSERT_TRUE(seen.insert(i).second) << layout_name(layout);
          }
    const std::vector<char> mask = t.logical_mask();
    EXPECT_EQ(std::count(mask.begin(), mask.end(), 1), 2 * 5 * 3 * 16);
    if (layout == Layout::kStrided) {
      EXPECT_GT(t.storage_elements(), 2 * 5 * 3 * 16);
    } else {
      EXPECT_EQ(t.storage_elements(), 2 * 5 * 3 * 16);
    }
  }
}

// The checker every backend test trusts: it must see a missed element, a stray write and a missed LSE.
TEST(HostAttention, OutputCheckSeesMissedAndStrayWrites) {
  AttentionShape shape;
  shape.layout = Layout::kStrided;
  shape.seqlen = 3;
  shape.nheads = 2;
  HostAttention h(shape);
  h.poison_outputs();
  EXPECT_EQ(h.check_outputs().unwritten, 3 * 2 * 128);
  EXPECT_EQ(h.check_outputs().lse_unwritten, 3 * 2);
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t hq = 0; hq < 2; ++hq)
      for (int64_t d = 0; d < 128; ++d) h.out.set_bf16(h.out.index(0, s, hq, d), numerics::bf16_bits(0.5f));
  for (float &x : h.lse) x = 1.0f;
  EXPECT_TRUE(h.check_outputs().ok()) << h.check_outputs().describe();
  h.out.set_bf16(h.out.index(0, 1, 1, 127) + 1, 0);  // the first gap element after a head
  EXPECT_EQ(h.check_outputs().gap_written, 1);
  h.out.set_bf16(h.out.index(0, 1, 1, 127) + 1, kPoisonBf16);
  h.out.set_bf16(h.out.index(0, 2, 0, 3), kPoisonBf16);
  h.lse[4] = numerics::bits_float(kPoisonF32);
  const OutputCheck c = h.check_outputs();
  EXPECT_EQ(c.unwritten, 1);
  EXPECT_EQ(c.lse_unwritten, 1);
  EXPECT_EQ(c.gap_written, 0);
  EXPECT_EQ(c.nonfinite, 0);
  // A written NaN or infinity is not an unwritten element: it counts as non-finite.
  h.out.set_bf16(h.out.index(0, 0, 1, 5), 0x7fc0);
  h.lse[0] = INFINITY;
  EXPECT_EQ(h.check_outputs().nonfinite, 2);
  EXPECT_EQ(h.check_outputs().unwritten, 1);
}

TEST(HostAttention, DescriptorAndProblemDescribeTheSameBuffers) {
  AttentionShape shape;
  shape.dtype = ZYFA_DTYPE_FP8_E4M3;
  shape.layout = Layout::kStrided;
  shape.batch = 2;
  shape.nheads = 4;
  shape.nheads_k = 2;
  shape.d_qk = 192;
  shape.per_head_descale = true;
  HostAttention h(shape);
  const zyfa_attn_desc d = h.desc();
  const Problem p = h.problem();
  EXPECT_EQ(d.layout, ZYFA_LAYOUT_STRIDED);
  EXPECT_EQ(d.q_strides.seq, p.q.seq_stride);
  EXPECT_EQ(d.out_strides.head, p.out.head_stride);
  EXPECT_EQ(d.q, p.q.ptr);
  EXPECT_EQ(d.out, p.out.ptr);
  EXPECT_EQ(d.lse, p.lse);
  EXPECT_EQ(d.k_descale.kind, ZYFA_DESCALE_DEVICE);
  EXPECT_EQ(d.k_descale.ptr, p.k_descale.ptr);
  EXPECT_EQ(d.k_descale.batch_stride, 2);
  EXPECT_EQ(d.k_descale.head_stride, 1);
  EXPECT_FLOAT_EQ(p.softmax_scale, 1.0f / std::sqrt(192.0f));
  EXPECT_EQ(d.softmax_scale, 0.0f);  // left to validation
}

}  // namespace
}  // namespace zyfa::test
