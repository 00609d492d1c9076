// The dry mode runs anywhere, GPU or not (CI's host CTest runs it): it lists the protocol's cases with
// their FLOP counts, input sizes and runs (zyfa@<P rounding> with --p-rounding), prints the generators'
// statistics, and checks the harness's own host-side parts against independent computations (the P rounding
// runs on the CPU backend). Exit status 1 if any check fails.
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "inputs.hpp"
#include "kernel.hpp"
#include "modes.hpp"
#include "ref/cpu_backend.hpp"
#include "ref/reference.hpp"
#include "results.hpp"
#include "sampled_reference.hpp"
#include "support/error_norms.hpp"
#include "timing.hpp"

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
  std::printf("cases of the kernel protocol (B = 1, BSHD, causal; TFLOP = B*H*S^2*(d_qk+d_v)/1e12; runs: the\n"
              "implementations, and zyfa@<P rounding> for --p-rounding=%s):\n", join(o.p_roundings).c_str());
  std::printf("  %-40s %10s %12s  %s\n", "case", "TFLOP", "q+k+v MiB", "runs");
  size_t cases = 0, runs = 0, rounding_runs = 0;
  double run_tflop = 0.0;
  for (const Case &c : expand_cases(o)) {
    const Shape &s = c.shape;
    const double elem = c.dtype == ZYFA_DTYPE_FP8_E4M3 ? 1.0 : 2.0;
    const double bytes = elem * double(s.batch * s.seqlen) * double(s.nheads * s.d_qk + s.nheads_k * (s.d_qk + s.d_v));
    const std::vector<std::string> r = case_runs(o, c);
    std::printf("  %-40s %10.3f %12.1f  %s\n", c.name().c_str(), s.flops() / 1e12, bytes / (1 << 20), join(r).c_str());
    ++cases;
    runs += r.size();
    rounding_runs += r.size() - o.impls.size();
    run_tflop += double(r.size()) * s.flops() / 1e12;
  }
  std::printf("  %zu cases, %zu runs (%zu of zyfa with an explicit P rounding), %.3f TFLOP per call of every run\n",
              cases, runs, rounding_runs, run_tflop);
}

// --p-rounding: which runs a case gets, what their records say, and that the library takes the rounding each
// run asks for (the CPU backend, on the descriptor the GPU run builds the same way: make_kernel's parse).
void check_p_rounding() {
  std::printf("P rounding runs (--p-rounding):\n");
  Options o;
  o.impls = kernel_impls();
  o.p_roundings = {"default", "lean", "exact", "split"};
  const auto runs_of = [&](const char *family, zyfa_dtype dtype) {
    return join(case_runs(o, Case{family_shape(family, 4096), dtype, Inputs::kGaussian}));
  };
  check(runs_of("gqa-d128", ZYFA_DTYPE_FP8_E4M3) == "zyfa,cudnn,zyfa@lean,zyfa@exact,zyfa@split" &&
            runs_of("llama3.1-8b", ZYFA_DTYPE_FP8_E4M3) == "zyfa,cudnn,zyfa@lean,zyfa@exact,zyfa@split",
        "FP8 at d_qk = 128: one more zyfa run per non-default rounding");
  check(runs_of("mha-d192", ZYFA_DTYPE_FP8_E4M3) == "zyfa,cudnn,zyfa@lean,zyfa@exact,zyfa@split",
        "FP8 at d_qk = 192: the same runs (lean P on request there)");
  check(runs_of("gqa-d128", ZYFA_DTYPE_BF16) == "zyfa,cudnn" && runs_of("mha-d192", ZYFA_DTYPE_BF16) == "zyfa,cudnn",
        "BF16: the default only");
  o.impls = {"cudnn"};
  check(runs_of("gqa-d128", ZYFA_DTYPE_FP8_E4M3) == "cudnn", "no zyfa among --impls: no P rounding runs");

  const Case c{family_shape("gqa-d128", 2048), ZYFA_DTYPE_FP8_E4M3, Inputs::kGaussian};
  const std::string exact = base_record("zyfa@exact", c, "accuracy").json();
  const std::string plain = base_record("zyfa", c, "accuracy").json();
  check(exact.find("\"impl\": \"zyfa\"") != std::string::npos &&
            exact.find("\"p_rounding\": \"exact\"") != std::string::npos &&
            plain.find("p_rounding") == std::string::npos,
        "records: impl zyfa with p_rounding \"exact\"; the default run has no p_rounding");

  // One flag parsed: the list it sets, or "refused".
  const auto parsed = [](const char *flag, std::vector<std::string> Options::*list) {
    std::string arg0 = "zyfa_bench", mode = "--mode=dry", f = flag;
    char *argv[] = {arg0.data(), mode.data(), f.data()};
    int argc = 3;
    try {
      return join(parse_options(&argc, argv).*list);
    } catch (const std::invalid_argument &) {
      return std::string("refused");
    }
  };
  const auto roundings = &Options::p_roundings;
  check(parsed("--p-rounding=exact,lean,exact", roundings) == "default,exact,lean" &&
            parsed("--p-rounding=default", roundings) == "default" &&
            parsed("--p-rounding=fast", roundings) == "refused",
        "--p-rounding: default always, each value once, unknown values refused");
  const auto impls = &Options::impls;
  check(parsed("--impls=cudnn,zyfa", impls) == "cudnn,zyfa" && parsed("--impls=zyfa,fa3", impls) == "refused" &&
            parsed("--impls=zyfa@lean", impls) == "refused",
        "--impls: zyfa and cudnn only (the Python peers are bench/peers.py's), no P rounding in a name");

  // The CPU backend at S = 300 (std-1 Gaussians): the rounding each run asks for reaches the library.
  for (const char *family : {"gqa-d128", "mha-d192"}) {
    Shape s = family_shape(family, kCheckSeqlen);
    s.nheads = 4;
    s.nheads_k = s.family == "gqa-d128" ? 2 : 4;
    const Case fc{s, ZYFA_DTYPE_FP8_E4M3, Inputs::kGaussian};
    const test::ActivationSpec spec = activation_spec(fc.inputs, Purpose::kAccuracy);
    const auto host = make_host_inputs(fc, make_activations(s, fc.inputs, spec));
    const std::vector<double> ref = ref::attention_fp64(host->problem()).out;
    std::map<std::string, std::vector<double>> outs;
    std::string errors;
    o.impls = {"zyfa"};
    for (const std::string &run : case_runs(o, fc)) {
      const RunName name = split_run_name(run);
      zyfa_attn_desc d = host->desc();
      const bool known = parse_p_rounding(name.p_rounding.empty() ? "default" : name.p_rounding, &d.p_rounding);
      const zyfa_status st = known ? zyfa_attn_fwd_host(&d) : ZYFA_STATUS_BAD_ARGUMENT;
      check(st == ZYFA_STATUS_SUCCESS, fc.name() + " " + run + ": zyfa_attn_fwd_host succeeds" +
                                           (st == ZYFA_STATUS_SUCCESS ? "" : std::string(": ") + zyfa_last_error()));
      outs[run] = host->out_values();
      char text[64];
      std::snprintf(text, sizeof(text), "%s%s %.3g", errors.empty() ? "" : ", ", run.c_str(),
                    test::compare_to_reference(outs[run], ref).rel_rms);
      errors += text;
    }
    std::printf("  %s, relative RMS against fp64 (CPU backend): %s\n", fc.name().c_str(), errors.c_str());
    check(outs["zyfa@split"] != outs["zyfa@exact"], fc.name() + ": split P differs from exact P");
    if (s.d_qk == 128) {
      check(outs["zyfa@lean"] == outs["zyfa"] && outs["zyfa@exact"] != outs["zyfa"],
            fc.name() + ": lean P equals the default bitwise, exact P differs");
    } else {
      check(outs["zyfa@exact"] == outs["zyfa"] && outs["zyfa@lean"] != outs["zyfa"],
            fc.name() + ": exact P equals the default bitwise, lean P differs");
    }
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
  check(whole_rotation_rounds(3, 2) == 4 && whole_rotation_rounds(3, 1) == 3 && whole_rotation_rounds(3, 5) == 5 &&
            whole_rotation_rounds(4, 2) == 4,
        "whole rotations: 3 repeats of two implementations are 4 rounds, each leading twice");
  check(median_of({4, 1, 3, 2}) == 2.5 && median_of({3, 1, 2}) == 2, "the median of an even count: the middle two's mean");
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
          const double e = full.out[out_row_offset(s, r) + size_t(d)];
          worst = std::max(worst, std::fabs(sampled.out[i * size_t(s.d_v) + size_t(d)] - e) / std::max(1.0, std::fabs(e)));
        }
        worst = std::max(worst, std::fabs(sampled.lse[i] - full.lse[lse_offset(s, r)]));
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

// The accuracy mode's sampled rows, weighted by the rows each stands for, estimate the whole output's relative
// RMS. Unweighted, the same rows read 0.73x (Gaussian), 1.35x (outlier) and 2.16x (structured) the whole
// output's here: the first row and the short rows, overrepresented, err differently from the rest. Here on
// the CPU backend's FP8 output at S = kWeightCheckSeqlen, the accuracy mode's 64 rows per head.
constexpr int64_t kWeightCheckSeqlen = 2048;
constexpr int64_t kWeightCheckHeads = 8;
constexpr double kWeightedEstimateTolerance = 0.15;  // relative, for 8 heads of 62 drawn rows each

void check_row_weights() {
  std::printf("sampled rows' weighted error against the whole output's (S = %lld):\n", (long long)kWeightCheckSeqlen);
  Shape s = family_shape("gqa-d128", kWeightCheckSeqlen);
  s.nheads = kWeightCheckHeads;
  s.nheads_k = kWeightCheckHeads / 4;
  for (Inputs inputs : {Inputs::kGaussian, Inputs::kOutlier, Inputs::kStructured}) {
    const Case c{s, ZYFA_DTYPE_FP8_E4M3, inputs};
    const auto host = make_host_inputs(c, make_activations(s, c.inputs, activation_spec(c.inputs, Purpose::kAccuracy)));
    ref::attention_cpu_backend(host->problem());
    const std::vector<double> got = host->out_values();
    const auto full = ref::attention_fp64(host->problem());
    const double whole = test::compare_to_reference(got, full.out).rel_rms;
    const std::vector<RowId> rows = sample_rows(s, 64, case_seed(s, c.inputs));
    std::vector<double> got_rows, ref_rows;
    for (const RowId &r : rows) {
      const size_t at = out_row_offset(s, r);
      got_rows.insert(got_rows.end(), got.begin() + at, got.begin() + at + s.d_v);
      ref_rows.insert(ref_rows.end(), full.out.begin() + at, full.out.begin() + at + s.d_v);
    }
    const double weighted = test::compare_to_reference(got_rows, ref_rows, value_weights(rows, s.d_v)).rel_rms;
    const double plain = test::compare_to_reference(got_rows, ref_rows).rel_rms;
    char text[160];
    std::snprintf(text, sizeof text, "whole %.4g, weighted sample %.4g, unweighted sample %.4g", whole, weighted, plain);
    check(std::fabs(weighted / whole - 1.0) < kWeightedEstimateTolerance, c.name() + ": " + text);
  }
}

// Every head's sampled rows are distinct, min(per_head, seqlen) of them, and their weights sum to seqlen, also
// where per_head leaves fewer draws than strata (the lowest strata merge) and at odd and tiny lengths.
void check_row_weight_sums() {
  std::printf("sampled rows' weights sum to the rows they stand for:\n");
  Shape s = family_shape("gqa-d128", 1);
  s.nheads = 2;
  s.nheads_k = 1;
  bool ok = true;
  std::string worst;
  for (int64_t seqlen : {1, 2, 3, 7, 64, 65, 4096, 16384, 32767}) {
    for (int64_t per_head : {kMinRowsPerHead, int64_t(4), int64_t(8), int64_t(16), int64_t(64)}) {
      s.seqlen = seqlen;
      const std::vector<RowId> rows = sample_rows(s, per_head, case_seed(s, Inputs::kGaussian));
      for (int64_t h = 0; h < s.nheads; ++h) {
        double sum = 0.0;
        int64_t count = 0, previous = -1;
        bool distinct = true;
        for (const RowId &r : rows) {
          if (r.h != h) continue;
          sum += r.weight;
          ++count;
          distinct &= r.s > previous;
          previous = r.s;
        }
        if (!distinct || count != std::min(per_head, seqlen) || std::fabs(sum - double(seqlen)) > 1e-9 * double(seqlen)) {
          ok = false;
          worst = "S " + std::to_string(seqlen) + ", " + std::to_string(per_head) + " a head: " + std::to_string(count) +
                  " rows" + (distinct ? "" : " (repeated)") + ", weights sum to " + std::to_string(sum);
        }
      }
    }
  }
  check(ok, ok ? "S 1 to 32767, 3 to 64 rows a head" : worst);
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
  Record w = base_record("zyfa", Case{family_shape("mha-d128", 2048), ZYFA_DTYPE_BF16, Inputs::kGaussian}, "kernel");
  w.set("windows_unix_ms", std::vector<std::pair<int64_t, int64_t>>{{1796032239082, 1796032239391}, {7, 8}});
  check(w.json().find("\"windows_unix_ms\": [[1796032239082, 1796032239391], [7, 8]]") != std::string::npos,
        "timed windows as exact integer pairs");
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
  check_p_rounding();
  check_sampled_reference();
  check_row_weights();
  check_row_weight_sums();
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
