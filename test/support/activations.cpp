#include "support/activations.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "ref/parallel_for.hpp"
#include "support/quantize.hpp"

namespace zyfa::test {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Streams of the generator: one per tensor and one per head's fixed parameters, so that changing one
// tensor's recipe leaves the others' numbers as they were.
enum Stream : uint64_t { kStreamQ = 1, kStreamK, kStreamV, kStreamQueryHead, kStreamKvHead };

// splitmix64's finalizer: a bijective mix, so distinct counters give distinct, well-spread words.
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Normal and uniform draws from (seed, stream, counter); Box-Muller, both outputs used.
class Random {
 public:
  Random(uint64_t seed, uint64_t stream, uint64_t substream = 0)
      : key_(mix64(mix64(seed ^ mix64(stream)) ^ substream)) {}
  double uniform() { return (double(mix64(key_ + counter_++) >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2.0 * std::log(uniform())), angle = 2.0 * kPi * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  uint64_t key_, counter_ = 0;
  double spare_ = 0;
  bool has_spare_ = false;
};

// One normal of the kind's distribution.
double plain_value(const ActivationSpec &spec, Random &rng) {
  double value = spec.std * rng.normal();
  if (spec.kind == ActivationKind::kOutlier) {
    const double outlier = spec.outlier_std * rng.normal();
    if (rng.uniform() < spec.outlier_rate) value += outlier;
  }
  return value;
}

// ---- structured

constexpr int kSinkChannels = 16;  // the span of u_h
constexpr int kSlowChannels = 32;  // mean key, sink direction and massive channels live here
constexpr int64_t kMlaRopeStart = 128;  // at d_qk = 192 RoPE covers channels 128..191

struct RopeSpan {
  int64_t start, dims;
};
RopeSpan rope_span(int64_t d_qk) {
  if (d_qk > kMlaRopeStart) return {kMlaRopeStart, d_qk - kMlaRopeStart};
  return {0, d_qk - d_qk % 2};
}

// Channels that RoPE leaves nearly still, stillest first: the unrotated channels, else the pairs of
// lowest frequency (c, c + R/2) from the top.
std::vector<int64_t> slow_channels(int64_t d_qk) {
  const RopeSpan rope = rope_span(d_qk);
  const int64_t half = rope.dims / 2;
  std::vector<int64_t> slow;
  for (int64_t c = 0; c < rope.start && int(slow.size()) < kSlowChannels; ++c) slow.push_back(c);
  for (int64_t i = half - 1; i >= 0 && int(slow.size()) < kSlowChannels; --i) {
    slow.push_back(rope.start + i);
    slow.push_back(rope.start + i + half);
  }
  slow.resize(std::min<size_t>(slow.size(), kSlowChannels));
  return slow;
}

// Fixed parameters of one kv head: its sink direction and the sign pattern of its mean key.
struct KvHeadParams {
  std::vector<double> sink_dir;  // d_qk, unit norm, zero outside the first kSinkChannels slow channels
  std::vector<double> key_mean;  // d_qk
  std::vector<double> k_scale, v_scale;
  std::vector<int64_t> massive;  // k's massive channels
  std::vector<double> massive_sign;
};

struct QueryHeadParams {
  std::vector<double> scale;
  std::vector<int64_t> massive;
  std::vector<double> massive_sign;
};

std::vector<double> channel_scales(int64_t n, float spread, Random &rng) {
  std::vector<double> s(static_cast<size_t>(n));
  for (double &e : s) e = std::exp(spread * rng.normal());
  return s;
}

double random_sign(Random &rng) { return rng.uniform() < 0.5 ? -1.0 : 1.0; }

// Massive channels are taken from the slow channels past the sink span: q's first, then k's.
void pick_massive(const std::vector<int64_t> &slow, int count, int first, Random &rng,
                  std::vector<int64_t> *channels, std::vector<double> *signs) {
  for (int i = 0; i < count && first + i < int(slow.size()); ++i) {
    channels->push_back(slow[size_t(first + i)]);
    signs->push_back(random_sign(rng));
  }
}

KvHeadParams kv_head_params(const QkvShape &sh, const StructuredParams &sp, uint64_t seed, int64_t hk,
                            const std::vector<int64_t> &slow) {
  Random rng(seed, kStreamKvHead, uint64_t(hk));
  KvHeadParams p;
  p.k_scale = channel_scales(sh.d_qk, sp.channel_spread, rng);
  p.v_scale = channel_scales(sh.d_v, sp.channel_spread, rng);
  p.sink_dir.assign(size_t(sh.d_qk), 0.0);
  double norm2 = 0;
  for (size_t i = 0; i < slow.size() && i < size_t(kSinkChannels); ++i) {
    const double x = rng.normal();
    p.sink_dir[size_t(slow[i])] = x;
    norm2 += x * x;
  }
  for (double &e : p.sink_dir) e /= std::sqrt(std::max(norm2, 1e-30));
  p.key_mean.assign(size_t(sh.d_qk), 0.0);
  for (int64_t c : slow) p.key_mean[size_t(c)] = random_sign(rng);
  pick_massive(slow, sp.massive_channels, kSinkChannels + sp.massive_channels, rng, &p.massive,
               &p.massive_sign);
  return p;
}

QueryHeadParams query_head_params(const QkvShape &sh, const StructuredParams &sp, uint64_t seed, int64_t h,
                                  const std::vector<int64_t> &slow) {
  Random rng(seed, kStreamQueryHead, uint64_t(h));
  QueryHeadParams p;
  p.scale = channel_scales(sh.d_qk, sp.channel_spread, rng);
  pick_massive(slow, sp.massive_channels, kSinkChannels, rng, &p.massive, &p.massive_sign);
  return p;
}

// Heavy-tailed noise: a Gaussian scale mixture of unit variance.
double tailed_normal(float tail, Random &rng) {
  const double z = rng.normal(), w = rng.normal();
  return z * std::exp(tail * w - double(tail) * tail);
}

// cos and sin of one position's RoPE angles, pos * base^(-2i/R) for the R/2 pairs.
void rope_angles(int64_t pos, const std::vector<double> &inv_freq, std::vector<double> &cs,
                 std::vector<double> &sn) {
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    cs[i] = std::cos(double(pos) * inv_freq[i]);
    sn[i] = std::sin(double(pos) * inv_freq[i]);
  }
}

void apply_rope(float *x, int64_t d_qk, const std::vector<double> &cs, const std::vector<double> &sn) {
  const RopeSpan rope = rope_span(d_qk);
  const int64_t half = int64_t(cs.size());
  for (int64_t i = 0; i < half; ++i) {
    float &a = x[rope.start + i], &b = x[rope.start + i + half];
    const double x1 = a, x2 = b;
    a = float(x1 * cs[size_t(i)] - x2 * sn[size_t(i)]);
    b = float(x1 * sn[size_t(i)] + x2 * cs[size_t(i)]);
  }
}

void generate_structured(Activations &a, const ActivationSpec &spec, uint64_t seed) {
  const QkvShape &sh = a.shape;
  const StructuredParams &sp = spec.structured;
  const double base_std = spec.std;
  const std::vector<int64_t> slow = slow_channels(sh.d_qk);
  std::vector<KvHeadParams> kvp;
  for (int64_t hk = 0; hk < sh.nheads_k; ++hk) kvp.push_back(kv_head_params(sh, sp, seed, hk, slow));
  std::vector<QueryHeadParams> qp;
  for (int64_t h = 0; h < sh.nheads; ++h) qp.push_back(query_head_params(sh, sp, seed, h, slow));
  const int64_t group = sh.nheads / sh.nheads_k;
  // The sink's key rides on u_h with a weight that lifts q.k by sink_logit * sqrt(d_qk) (raw units).
  const double sink_weight = sp.query_mean > 0.0f
                                 ? sp.sink_logit * std::sqrt(double(sh.d_qk)) / (sp.query_mean * base_std)
                                 : 0.0;
  const RopeSpan rope = rope_span(sh.d_qk);
  std::vector<double> inv_freq;
  if (sp.rope_base > 0.0f)
    for (int64_t i = 0; i < rope.dims / 2; ++i)
      inv_freq.push_back(std::pow(double(sp.rope_base), -2.0 * double(i) / double(rope.dims)));
  ref::parallel_for(sh.batch * sh.seqlen, [&](int, int64_t row) {
    const int64_t s = row % sh.seqlen;
    const bool sink = s < sp.sink_tokens;
    Random rq(seed, kStreamQ, uint64_t(row)), rk(seed, kStreamK, uint64_t(row)), rv(seed, kStreamV, uint64_t(row));
    std::vector<double> cs(inv_freq.size()), sn(inv_freq.size());
    rope_angles(s, inv_freq, cs, sn);
    for (int64_t h = 0; h < sh.nheads; ++h) {
      const KvHeadParams &kv = kvp[size_t(h / group)];
      const QueryHeadParams &p = qp[size_t(h)];
      float *x = &a.q[size_t((row * sh.nheads + h) * sh.d_qk)];
      for (int64_t c = 0; c < sh.d_qk; ++c)
        x[c] = float(base_std * (p.scale[size_t(c)] * tailed_normal(sp.tail, rq) + sp.query_mean * kv.sink_dir[size_t(c)]));
      for (size_t i = 0; i < p.massive.size(); ++i)
        x[p.massive[i]] += float(p.massive_sign[i] * sp.massive_scale * base_std);
      apply_rope(x, sh.d_qk, cs, sn);
    }
    for (int64_t hk = 0; hk < sh.nheads_k; ++hk) {
      const KvHeadParams &kv = kvp[size_t(hk)];
      float *x = &a.k[size_t((row * sh.nheads_k + hk) * sh.d_qk)];
      for (int64_t c = 0; c < sh.d_qk; ++c) {
        double value = base_std * (kv.k_scale[size_t(c)] * tailed_normal(sp.tail, rk) + sp.key_mean * kv.key_mean[size_t(c)]);
        if (sink) value += sink_weight * kv.sink_dir[size_t(c)];
        x[c] = float(value);
      }
      for (size_t i = 0; i < kv.massive.size(); ++i)
        x[kv.massive[i]] += float(kv.massive_sign[i] * sp.massive_scale * base_std);
      apply_rope(x, sh.d_qk, cs, sn);
      float *y = &a.v[size_t((row * sh.nheads_k + hk) * sh.d_v)];
      const double v_scale = sink ? sp.sink_value_scale : 1.0;
      for (int64_t c = 0; c < sh.d_v; ++c)
        y[c] = float(base_std * kv.v_scale[size_t(c)] * tailed_normal(sp.tail, rv) * v_scale);
    }
  });
}

// ---- statistics

TensorStats tensor_stats(const std::vector<float> &x, int64_t channels) {
  TensorStats t;
  if (x.empty()) return t;
  const double n = double(x.size());
  double sum = 0, amax = 0;
  for (float e : x) {
    sum += e;
    amax = std::max(amax, std::fabs(double(e)));
  }
  t.mean = sum / n;
  double m2 = 0, m4 = 0;
  std::vector<double> channel_sq(size_t(channels), 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - t.mean, d2 = d * d;
    m2 += d2;
    m4 += d2 * d2;
    channel_sq[i % size_t(channels)] += double(x[i]) * x[i];
  }
  m2 /= n;
  m4 /= n;
  t.std = std::sqrt(m2);
  t.amax = amax;
  t.excess_kurtosis = m2 > 0 ? m4 / (m2 * m2) - 3.0 : 0.0;
  std::vector<double> sorted = channel_sq;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  t.channel_ratio = median > 0 ? std::sqrt(sorted.back() / median) : 0.0;
  t.fp8_descale = fp8_descale_for_amax(bf16_amax(x.data(), int64_t(x.size())));
  return t;
}

constexpr int kStatRows = 16;

// Softmax statistics of (batch 0, head 0) at kStatRows rows spread over the second half of the sequence.
void softmax_stats(const Activations &a, ActivationStats *st) {
  const QkvShape &sh = a.shape;
  const double scale = 1.0 / std::sqrt(double(sh.d_qk));
  const int64_t first = sh.seqlen / 2, count = std::min<int64_t>(kStatRows, sh.seqlen - first);
  std::vector<double> logits(size_t(sh.seqlen));
  double mass_sum = 0, std_sum = 0;
  for (int64_t r = 0; r < count; ++r) {
    const int64_t i = first + (sh.seqlen - 1 - first) * r / std::max<int64_t>(count - 1, 1);
    const float *q = &a.q[size_t(i * sh.nheads * sh.d_qk)];
    double max = -INFINITY, mean = 0;
    for (int64_t j = 0; j <= i; ++j) {
      const float *k = &a.k[size_t(j * sh.nheads_k * sh.d_qk)];
      double dot = 0;
      for (int64_t c = 0; c < sh.d_qk; ++c) dot += double(q[c]) * k[c];
      logits[size_t(j)] = scale * dot;
      max = std::max(max, logits[size_t(j)]);
      mean += logits[size_t(j)];
    }
    mean /= double(i + 1);
    double total = 0, early = 0, var = 0;
    for (int64_t j = 0; j <= i; ++j) {
      const double w = std::exp(logits[size_t(j)] - max);
      total += w;
      if (j < kEarlyKeys) early += w;
      var += (logits[size_t(j)] - mean) * (logits[size_t(j)] - mean);
    }
    mass_sum += early / total;
    std_sum += std::sqrt(var / double(i + 1));
  }
  st->sampled_rows = int(count);
  st->early_key_mass = count > 0 ? mass_sum / double(count) : 0.0;
  st->logit_std = count > 0 ? std_sum / double(count) : 0.0;
}

void append_tensor(std::string &out, const char *name, const TensorStats &t) {
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: mean %.4g std %.4g amax %.4g excess_kurtosis %.3g channel_ratio %.3g fp8_descale %g\n", name,
                t.mean, t.std, t.amax, t.excess_kurtosis, t.channel_ratio, double(t.fp8_descale));
  out += line;
}

}  // namespace

const char *activation_kind_name(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::kGaussian: return "gaussian";
    case ActivationKind::kOutlier: return "outlier";
    case ActivationKind::kStructured: return "structured";
  }
  return "unknown";
}

bool parse_activation_kind(const std::string &name, ActivationKind *kind) {
  for (ActivationKind k : {ActivationKind::kGaussian, ActivationKind::kOutlier, ActivationKind::kStructured}) {
    if (name == activation_kind_name(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

Activations generate_activations(const QkvShape &shape, const ActivationSpec &spec, uint64_t seed) {
  Activations a;
  a.shape = shape;
  a.q.resize(size_t(shape.batch * shape.seqlen * shape.nheads * shape.d_qk));
  a.k.resize(size_t(shape.batch * shape.seqlen * shape.nheads_k * shape.d_qk));
  a.v.resize(size_t(shape.batch * shape.seqlen * shape.nheads_k * shape.d_v));
  if (spec.kind == ActivationKind::kStructured) {
    generate_structured(a, spec, seed);
    return a;
  }
  // One random stream per (tensor, batch, position): rows generate in parallel, the same on any core count.
  const int64_t rows = shape.batch * shape.seqlen;
  ref::parallel_for(rows, [&](int, int64_t row) {
    const Stream streams[3] = {kStreamQ, kStreamK, kStreamV};
    std::vector<float> *tensors[3] = {&a.q, &a.k, &a.v};
    for (int t = 0; t < 3; ++t) {
      Random rng(seed, streams[t], uint64_t(row));
      const size_t row_size = tensors[t]->size() / size_t(rows);
      float *x = tensors[t]->data() + size_t(row) * row_size;
      for (size_t i = 0; i < row_size; ++i) x[i] = float(plain_value(spec, rng));
    }
  });
  return a;
}

ActivationStats activation_stats(const Activations &a) {
  ActivationStats st;
  st.q = tensor_stats(a.q, a.shape.d_qk);
  st.k = tensor_stats(a.k, a.shape.d_qk);
  st.v = tensor_stats(a.v, a.shape.d_v);
  softmax_stats(a, &st);
  return st;
}

std::string format_stats(const ActivationStats &stats) {
  std::string out;
  append_tensor(out, "q", stats.q);
  append_tensor(out, "k", stats.k);
  append_tensor(out, "v", stats.v);
  char line[160];
  std::snprintf(line, sizeof line, "softmax (%d rows of head 0): early_key_mass %.3g logit_std %.3g\n",
                stats.sampled_rows, stats.early_key_mass, stats.logit_std);
  out += line;
  return out;
}

}  // namespace zyfa::test
