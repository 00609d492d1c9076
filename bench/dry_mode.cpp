// The dry mode runs anywhere, GPU or not (CI's host CTest runs it): it lists the protocol's cases with
// their FLOP counts and input sizes, prints the generators' statistics, and checks the harness's own
// host-side parts against independent computations. Exit status 1 if any check fails.
#include <cmath>
#include <cstdio>
#include <string>

#include "inputs.hpp"
#include "modes.hpp"
#include "ref/reference.hpp"
#include "results.hpp"
#include "sampled_reference.hpp"

namespace zyfa::bench {
namespace {

// Small enough for CI, large enough for several key blocks, GQA and an odd length.
constexpr int64_t kCheckSeqlen = 300;
constexpr int64_t kStatsSeqlen = 1024;
constexpr double kReferenceTolerance = 1e-12;

int g_failures = 0;
void check(bool ok, const std::string &what) {
  std::printf("  [%s] %s\n", ok ? "ok" : "FAILED", what.c_str());
  g_failures += !ok;
}

void list_cases(const Options &o) {
  std::printf("cases of the kernel protocol (B = 1, BSHD, causal; TFLOP = B*H*S^2*(d_qk+d_v)/1e12):\n");
  std::printf("  %-40s %10s %12s\n", "case", "TFLOP", "q+k+v MiB");
  for (const Case &c : expand_cases(o)) {
    const Shape &s = c.shape;
    const double elem = c.dtype == ZYFA_DTYPE_FP8_E4M3 ? 1.0 : 2.0;
    const double bytes = elem * double(s.batch * s.seqlen) * double(s.nheads * s.d_qk + s.nheads_k * (s.d_qk + s.d_v));
    std::printf("  %-40s %10.3f %12.1f\n", c.name().c_str(), s.flops() / 1e12, bytes / (1 << 20));
  }
}

void check_protocol() {
  std::printf("protocol checks:\n");
  check(protocol_heads(2048) == 128 && protocol_heads(4096) == 64 && protocol_heads(16384) == 32 &&
            protocol_heads(32768) == 32, "H = max(32, 262144 / S)");
  const Shape llama = family_shape("llama3.1-8b", 16384);
  check(llama.nheads == 64 && llama.nheads_k == 8 && llama.flops() == 64.0 * 16384.0 * 16384.0 * 256.0,
        "Llama-3.1-8B at 16K: 64/8 heads, 4.398e12 FLOP per call");
  // NVIDIA counts 2*(d_qk + d_v) FLOP per unmasked score, S(S+1)/2 of them: the same up to 1 + 1/S.
  const double nvidia = 2.0 * 256.0 * 64.0 * (16384.0 * 16385.0 / 2.0);
  check(std::fabs(nvidia / llama.flops() - (1.0 + 1.0 / 16384.0)) < 1e-12, "NVIDIA's convention = ours * (1 + 1/S)");
  const Shape gqa = family_shape("gqa-d192", 8192);
  check(gqa.nheads == 32 && gqa.nheads_k == 8 && gqa.d_qk == 192 && gqa.d_v == 128, "gqa-d192 at 8K: 32/8 heads, 192/128");
}

void check_sampled_reference() {
  std::printf("sampled fp64 rows against zyfa::ref::attention_fp64 (S = %lld):\n", (long long)kCheckSeqlen);
  for (zyfa_dtype dtype : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    for (const char *family : {"gqa-d128", "mha-d192"}) {
      Shape s = family_shape(family, kCheckSeqlen);
      s.nheads = 4;
      s.nheads_k = s.family == "gqa-d128" ? 2 : 4;
      const Case c{s, dtype, Inputs::kStructured};
      const auto host = make_host_inputs(c, make_activations(s, c.inputs, activation_spec(c.inputs, Purpose::kAccuracy)));
      const auto full = ref::attention_fp64(host->problem());
      const std::vector<RowId> rows = sample_rows(s, 16, case_seed(s, c.inputs));
      const SampledReference sampled = reference_rows(host->problem(), rows);
      double worst = 0.0;
      bool firsts_and_lasts = true;
      for (size_t i = 0; i < rows.size(); ++i) {
        const RowId &r = rows[i];
        for (int64_t d = 0; d < s.d_v; ++d) {
          const double e = full.out[size_t(((r.b * s.seqlen + r.s) * s.nheads + r.h) * s.d_v + d)];
          worst = std::max(worst, std::fabs(sampled.out[i * size_t(s.d_v) + size_t(d)] - e) / std::max(1.0, std::fabs(e)));
        }
        worst = std::max(worst, std::fabs(sampled.lse[i] - full.lse[size_t((r.b * s.nheads + r.h) * s.seqlen + r.s)]));
      }
      for (int64_t h = 0; h < s.nheads; ++h)
        firsts_and_lasts &= rows[size_t(h * 16)].s == 0 && rows[size_t(h * 16 + 15)].s == s.seqlen - 1;
      char worst_text[32];
      std::snprintf(worst_text, sizeof(worst_text), "%.3g", worst);
      check(rows.size() == size_t(16 * s.nheads) && firsts_and_lasts && worst < kReferenceTolerance,
            c.name() + ": " + std::to_string(rows.size()) + " rows, worst difference " + worst_text);
    }
  }
}

void check_json() {
  std::printf("results schema:\n");
  Record r = base_record("zyfa", Case{family_shape("mha-d128", 2048), ZYFA_DTYPE_FP8_E4M3, Inputs::kOutlier}, "kernel");
  r.set("tflops", NAN).set("note", "a \"quoted\"\nline");
  const std::string j = r.json();
  check(j.find("\"impl\": \"zyfa\"") != std::string::npos && j.find("\"dtype\": \"fp8\"") != std::string::npos &&
            j.find("\"nheads\": 128") != std::string::npos && j.find("\"inputs\": \"outlier\"") != std::string::npos &&
            j.find("\"tflops\": null") != std::string::npos && j.find("a \\\"quoted\\\"\\nline") != std::string::npos,
        "record fields, null for NaN, escaped strings");
}

void print_generator_stats() {
  std::printf("generator statistics (S = %lld, 8 query / 2 kv heads):\n", (long long)kStatsSeqlen);
  for (Inputs in : {Inputs::kGaussian, Inputs::kOutlier, Inputs::kStructured}) {
    for (Purpose p : {Purpose::kTiming, Purpose::kAccuracy}) {
      if (in != Inputs::kGaussian && p == Purpose::kTiming) continue;  // only Gaussian std differs
      for (int64_t d_qk : {128, 192}) {
        Shape s = family_shape(d_qk == 128 ? "gqa-d128" : "gqa-d192", kStatsSeqlen);
        s.nheads = 8;
        s.nheads_k = 2;
        const test::ActivationSpec spec = activation_spec(in, p);
        const test::ActivationStats st = test::activation_stats(make_activations(s, in, spec));
        std::printf("%s, std %g, d_qk %lld:\n%s\n", inputs_name(in), double(spec.std), (long long)d_qk,
                    test::format_stats(st).c_str());
        check(std::isfinite(st.q.std) && st.q.std > 0 && std::isfinite(st.logit_std) && st.sampled_rows > 0,
              std::string(inputs_name(in)) + " statistics finite");
      }
    }
  }
}

}  // namespace

int run_dry_mode(const Options &o) {
  list_cases(o);
  check_protocol();
  check_json();
  check_sampled_reference();
  print_generator_stats();
  std::printf("dry mode: %d check(s) failed; cuDNN peer %s; GPU %s\n", g_failures,
#ifdef ZYFA_BENCH_HAVE_CUDNN
              "built",
#else
              "NOT built",
#endif
              cuda_device_present() ? "present" : "absent");
  return g_failures == 0 ? 0 : 1;
}

}  // namespace zyfa::bench
