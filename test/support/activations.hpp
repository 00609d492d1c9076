// Float activations for q, k and v, shared by the tests, the bench and the zyfa command: Gaussian noise,
// FlashAttention-3's outlier distribution and a structured, LLM-like generator. Deterministic from a
// seed: a counter-based generator with one stream per (tensor, batch, position), so rows are generated in
// parallel and the tensors do not depend on the core count (only on libm's last bits, machine to machine).
// Quantize the result with support/quantize.hpp or support/host_attention.hpp.
#ifndef ZYFA_TEST_SUPPORT_ACTIVATIONS_HPP_
#define ZYFA_TEST_SUPPORT_ACTIVATIONS_HPP_

#include <cstdint>
#include <string>
#include <vector>

namespace zyfa::test {

struct QkvShape {
  int64_t batch = 1, seqlen = 1, nheads = 1, nheads_k = 1, d_qk = 128, d_v = 128;
};

// q (batch, seqlen, nheads, d_qk), k (batch, seqlen, nheads_k, d_qk), v (batch, seqlen, nheads_k, d_v),
// each contiguous (BSHD).
struct Activations {
  QkvShape shape;
  std::vector<float> q, k, v;
};

enum class ActivationKind {
  kGaussian,    // N(0, std^2)
  kOutlier,     // N(0, std^2) + N(0, outlier_std^2) * Bernoulli(outlier_rate): FlashAttention-3's test
  kStructured,  // LLM-like: see StructuredParams
};
// "gaussian", "outlier", "structured": the `inputs` field of the bench's results.
const char *activation_kind_name(ActivationKind kind);
// False (and *kind untouched) for an unknown name.
bool parse_activation_kind(const std::string &name, ActivationKind *kind);

// The structured generator, built in this order for each head:
//   x = std * channel_scale[c] * z * exp(tail * w - tail^2)      z, w ~ N(0, 1); variance std^2 * scale^2
//   q += query_mean * std * u_h                u_h: a unit direction per kv head on 16 slow channels
//   q[massive channel] += +-massive_scale * std   (massive_channels of them; k gets as many others)
//   k += +-key_mean * std on 32 slow channels  (one sign pattern per kv head: a large mean key)
//   k at positions < sink_tokens += a * u_h, with a chosen so that the sink's scaled score (softmax scale
//       1/sqrt(d_qk)) sits sink_logit above the row's other scores: attention sinks
//   v at positions < sink_tokens *= sink_value_scale   (sinks carry little value, as in LLMs)
//   then q and k get the rotary position embedding (NeoX pairs c, c + R/2; angle pos * rope_base^(-2c/R))
//       over all channels at d_qk = 128, and over the last 64 at d_qk = 192 (DeepSeek's MLA split).
// channel_scale[c] = exp(channel_spread * n), n ~ N(0, 1), drawn per head. The "slow channels" are those
// RoPE leaves nearly still (the 16 lowest-frequency pairs, or the unrotated channels at d_qk = 192), where
// LLMs keep their sink directions, mean keys and massive values, so they survive the rotation.
struct StructuredParams {
  float rope_base = 500000.0f;    // Llama 3's theta; 0 turns RoPE off
  float channel_spread = 0.3f;
  float tail = 0.3f;              // 0 gives Gaussian tails; excess kurtosis grows as 3(exp(4 tail^2) - 1)
  int massive_channels = 2;       // per head, in q and in k
  float massive_scale = 16.0f;
  float key_mean = 2.0f;
  float query_mean = 4.0f;
  int sink_tokens = 2;
  float sink_logit = 8.0f;        // natural-log units
  float sink_value_scale = 0.1f;
};

struct ActivationSpec {
  ActivationKind kind = ActivationKind::kGaussian;
  float std = 1.0f;               // the Gaussian's std, the outlier's base std, the structured base std
  float outlier_std = 10.0f;
  double outlier_rate = 0.001;
  StructuredParams structured;
};

Activations generate_activations(const QkvShape &shape, const ActivationSpec &spec, uint64_t seed);

// Statistics of one tensor, over all its elements.
struct TensorStats {
  double mean = 0, std = 0, amax = 0;
  double excess_kurtosis = 0;  // 0 for a Gaussian; heavy tails and outliers raise it
  double channel_ratio = 0;    // largest channel RMS / median channel RMS: massive channels show here
  float fp8_descale = 1;       // the per-tensor descale of FP8 quantization
};

// What the bench's dry mode prints, so CI notices when a generator changes character.
struct ActivationStats {
  TensorStats q, k, v;
  // Over sampled rows of (batch 0, head 0), fp64 softmax with scale 1/sqrt(d_qk), causal:
  double early_key_mass = 0;  // mean attention mass on the first kEarlyKeys keys (attention sinks)
  double logit_std = 0;       // mean standard deviation of a row's scaled scores
  int sampled_rows = 0;
};
constexpr int kEarlyKeys = 4;

ActivationStats activation_stats(const Activations &a);
// Three lines (q, k, v) and one for the softmax, human-readable.
std::string format_stats(const ActivationStats &stats);

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_ACTIVATIONS_HPP_
