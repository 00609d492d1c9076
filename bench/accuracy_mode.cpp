// The accuracy study: one call of each implementation on the case's quantized inputs, compared with the
// fp64 oracle on sampled rows (relative RMS of the output, each row weighted by the rows it stands for, so
// that it estimates the whole output's; max abs error of the output and of the LSE),
// then one call with V = all ones, whose outputs must all be 1 (rows of P sum to one). Outputs are
// poisoned before each call, so an unwritten element counts as non-finite.
#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>

#include "case_context.hpp"
#include "modes.hpp"
#include "results.hpp"
#include "sampled_reference.hpp"
#include "support/error_norms.hpp"

namespace zyfa::bench {
namespace {

int64_t count_nonfinite(const std::vector<float> &x) {
  int64_t n = 0;
  for (float v : x) n += !std::isfinite(v);
  return n;
}

double max_deviation_from_one(const std::vector<float> &x) {
  double worst = 0.0;
  for (float v : x) worst = std::isfinite(v) ? std::max(worst, std::fabs(double(v) - 1.0)) : INFINITY;
  return worst;
}

KernelOutputs one_call(Kernel &k, cudaStream_t stream) {
  k.poison_outputs();
  k.run(stream);
  ZYFA_BENCH_CUDA(cudaStreamSynchronize(stream));
  ZYFA_BENCH_CUDA(cudaGetLastError());
  return k.read_outputs();
}

}  // namespace

int run_accuracy_mode(const Options &o) {
  if (!cuda_device_present()) {
    std::fprintf(stderr, "zyfa_bench: no CUDA device: the accuracy mode needs a GPU (try --mode=dry)\n");
    return 2;
  }
  cudaStream_t stream;
  ZYFA_BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ActivationCache activations;
  std::vector<Record> records;
  for (const Case &c : expand_cases(o)) {
    const test::ActivationSpec spec = activation_spec(c.inputs, Purpose::kAccuracy, o.input_std);
    const std::vector<std::string> runs = case_runs(o, c);  // implementations, then zyfa@<rounding>
    CaseContext ctx(c, activations.get(c.shape, c.inputs, spec), runs, stream);
    const std::vector<RowId> rows = sample_rows(c.shape, o.rows_per_head, case_seed(c.shape, c.inputs));
    const SampledReference ref = reference_rows(ctx.host().problem(), rows);
    const std::vector<double> out_weights = value_weights(rows, c.shape.d_v);
    std::map<std::string, Record> by_impl;
    for (const std::string &impl : runs) {
      Record r = base_record(impl, c, "accuracy");
      r.set("input_std", double(spec.std)).set_null("tflops")
          .set("rows_checked", int64_t(rows.size())).set("rows_weighted", true);
      Kernel *k = ctx.kernel(impl);
      if (!k) {
        r.set_null("rel_rms_err").set("error", ctx.why_not(impl));
        by_impl[impl] = r;
        continue;
      }
      r.set("plan", k->plan()).set("out_dtype", k->out_dtype());
      try {
        const KernelOutputs got = one_call(*k, stream);
        std::vector<double> out_rows, lse_rows;
        gather_rows(c.shape, rows, got.out, got.lse, &out_rows, &lse_rows);
        const test::ErrorStats out_err = test::compare_to_reference(out_rows, ref.out, out_weights);
        const test::ErrorStats lse_err = test::compare_to_reference(lse_rows, ref.lse);
        r.set("rel_rms_err", out_err.rel_rms).set("max_abs_err", out_err.max_abs)
            .set("lse_max_abs_err", lse_err.max_abs).set("nonfinite_out", count_nonfinite(got.out))
            .set("nonfinite_lse", count_nonfinite(got.lse));
        // A NaN or infinity makes the errors infinite, which JSON writes as null: say why, so that the
        // record reads as a failure, not as "not measured".
        if (out_err.nonfinite > 0 || lse_err.nonfinite > 0) {
          r.set("error", "non-finite output or reference: " + std::to_string(out_err.nonfinite) + " out, " +
                             std::to_string(lse_err.nonfinite) + " LSE values among the sampled rows (nonfinite_out and "
                             "nonfinite_lse count the output's alone)");
        }
      } catch (const std::exception &e) {
        r.set_null("rel_rms_err").set("error", e.what());
      }
      by_impl[impl] = r;
    }
    // Rows sum to one: V = ones on the same q and k.
    make_v_ones(ctx.host());
    ctx.device().reload_v(ctx.host());
    for (const std::string &impl : runs) {
      Kernel *k = ctx.kernel(impl);
      if (!k) continue;
      try {
        by_impl[impl].set("rows_sum_max_err", max_deviation_from_one(one_call(*k, stream).out));
      } catch (const std::exception &e) {
        by_impl[impl].set("rows_sum_error", e.what());
      }
    }
    for (const std::string &impl : runs) {
      std::printf("%s\n", by_impl[impl].json().c_str());
      std::fflush(stdout);
      records.push_back(by_impl[impl]);
    }
    if (!o.json.empty()) write_records(o.json, o.argv, records);  // after every case: a timeout keeps them
  }
  cudaStreamDestroy(stream);
  if (!o.json.empty()) write_records(o.json, o.argv, records);
  return 0;
}

}  // namespace zyfa::bench
