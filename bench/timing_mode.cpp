// Kernel mode: for each case, every implementation is warmed up, then timed in at least `repeats` rounds
// (whole rotations) whose kernel order rotates by one each round; the record keeps the median round.
// Sustained mode: after an idle pause each implementation runs back to back for a warm-up and then for the
// timed seconds.
// Google Benchmark drives the runs (manual time = device time per call from CUDA events) and prints them.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "case_context.hpp"
#include "modes.hpp"
#include "results.hpp"

namespace zyfa::bench {
namespace {

struct Slot {  // one (case, impl) across its repeats
  bool warmed = false;
  int calls = 0;
  std::vector<double> ms;
  std::string error;
  double sustained_s = 0.0;
  std::vector<std::pair<int64_t, int64_t>> windows;  // each timed repeat's wall-clock bounds, Unix ms
};

class TimingRun {
 public:
  explicit TimingRun(const Options &o) : o_(o), cases_(expand_cases(o)) {
    ZYFA_BENCH_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~TimingRun() { cudaStreamDestroy(stream_); }

  void register_benchmarks() {
    // Sustained and isolated runs are long or many-in-one: one round each, rotated by case instead.
    const bool sustained = o_.mode != "kernel";
    const int repeats = sustained ? 1 : o_.repeats;
    for (size_t ci = 0; ci < cases_.size(); ++ci) {
      const std::vector<std::string> runs = case_runs(o_, cases_[ci]);  // implementations, zyfa@<rounding>
      const size_t n = runs.size();
      const int rounds = sustained ? 1 : whole_rotation_rounds(repeats, n);
      for (int r = 0; r < rounds; ++r) {
        // Rotation by repeat (kernel mode) or by case (sustained): no implementation always goes first.
        const size_t shift = sustained ? ci : size_t(r);
        for (size_t j = 0; j < n; ++j) {
          const std::string impl = runs[(j + shift) % n];
          const std::string name = o_.mode + "/" + cases_[ci].name() + "/" + impl + "/rep" + std::to_string(r);
          benchmark::RegisterBenchmark(name.c_str(), [this, ci, impl, sustained](benchmark::State &st) {
            run_one(st, ci, impl, sustained);
          })->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
        }
      }
    }
  }

  std::vector<Record> records() const {
    std::vector<Record> out;
    for (size_t ci = 0; ci < cases_.size(); ++ci) {
      for (const auto &impl : case_runs(o_, cases_[ci])) {
        auto it = slots_.find({ci, impl});
        if (it == slots_.end()) continue;  // filtered out
        const Slot &s = it->second;
        Record r = base_record(impl, cases_[ci], o_.mode);
        r.set("input_std", double(activation_spec(cases_[ci].inputs, Purpose::kTiming, o_.input_std).std));
        auto info = info_.find({ci, impl});
        if (info != info_.end()) {
          r.set("plan", info->second[0]).set("out_dtype", info->second[1]);
          if (!info->second[2].empty()) r.set("notes", info->second[2]);
        }
        const double flops = cases_[ci].shape.flops();
        std::vector<double> per_repeat;
        for (double ms : s.ms) per_repeat.push_back(flops / (ms * 1e-3) / 1e12);
        // A run that failed at any repeat has no time: the repeats before the failure are kept for the record
        // (tflops_partial), never published as a measurement.
        if (s.ms.empty() || !s.error.empty()) {
          r.set_null("tflops").set("error", s.error.empty() ? std::string("not run") : s.error);
          if (!per_repeat.empty()) r.set("tflops_partial", per_repeat);
          out.push_back(r);
          continue;
        }
        const double median_ms = median_of(s.ms);
        r.set("tflops", flops / (median_ms * 1e-3) / 1e12).set("time_ms", median_ms)
            .set("tflops_repeats", per_repeat).set("calls", s.calls).set("repeats", int(s.ms.size()));
        if (!s.windows.empty()) r.set("windows_unix_ms", s.windows);
        if (o_.mode == "sustained") r.set("timed_s", s.sustained_s);
        out.push_back(r);
      }
    }
    return out;
  }

 private:
  CaseContext *context(size_t ci) {
    if (ctx_index_ != ci) {
      // The records so far go to disk before each new case: a crash or a timeout keeps them.
      if (!o_.json.empty() && ctx_) write_records(o_.json, o_.argv, records());
      ctx_.reset();  // one case on the GPU at a time
      ctx_index_ = ci;
      const Case &c = cases_[ci];
      const test::ActivationSpec spec = activation_spec(c.inputs, Purpose::kTiming, o_.input_std);
      const std::vector<std::string> runs = case_runs(o_, c);
      ctx_ = std::make_unique<CaseContext>(c, activations_.get(c.shape, c.inputs, spec), runs, stream_);
      for (const auto &impl : runs) {
        if (Kernel *k = ctx_->kernel(impl)) info_[{ci, impl}] = {k->plan(), k->out_dtype(), k->notes()};
        else slots_[{ci, impl}].error = ctx_->why_not(impl);
      }
      // Idle after the setup (cuDNN's autotuning heats the GPU) and before a long case, as the seed does.
      if (c.shape.seqlen >= o_.idle_from) idle_for(o_.idle_s);
    }
    return ctx_.get();
  }

  void run_one(benchmark::State &st, size_t ci, const std::string &impl, bool sustained) {
    Slot &slot = slots_[{ci, impl}];
    try {
      CaseContext *ctx = context(ci);
      Kernel *k = ctx->kernel(impl);
      if (!k) {
        st.SkipWithError(("unavailable: " + ctx->why_not(impl)).c_str());
        return;
      }
      const Launch launch = [&] { k->run(stream_); };
      double ms = 0.0;
      TimedWindow window;  // isolated calls, each a few milliseconds after a pause, get none
      if (o_.mode == "isolated") {
        warm_up(launch, stream_, o_.kernel.warmup_s, 3);
        IsolatedProtocol iso;
        ms = time_isolated(launch, stream_, iso);
        slot.calls = iso.calls;
      } else if (sustained) {
        const SustainedResult r = time_sustained(launch, stream_, o_.sustained);
        ms = r.ms_per_call;
        slot.calls = r.calls;
        slot.sustained_s = r.timed_s;
        window = r.window;
      } else {
        if (!slot.warmed) {
          slot.calls = calls_per_repeat(o_.kernel, warm_up(launch, stream_, o_.kernel.warmup_s, 3));
          slot.warmed = true;
        }
        ms = time_calls(launch, stream_, slot.calls, &window);
      }
      for (auto _ : st) st.SetIterationTime(ms * 1e-3);
      slot.ms.push_back(ms);
      if (window.end_unix_ms > 0) slot.windows.emplace_back(window.start_unix_ms, window.end_unix_ms);
      st.counters["TFLOPS"] = cases_[ci].shape.flops() / (ms * 1e-3) / 1e12;
      st.counters["calls"] = slot.calls;
    } catch (const std::exception &e) {
      slot.error = e.what();
      st.SkipWithError(e.what());
    }
  }

  const Options &o_;
  std::vector<Case> cases_;
  cudaStream_t stream_ = nullptr;
  ActivationCache activations_;
  std::unique_ptr<CaseContext> ctx_;
  size_t ctx_index_ = size_t(-1);
  std::map<std::pair<size_t, std::string>, Slot> slots_;
  std::map<std::pair<size_t, std::string>, std::vector<std::string>> info_;
};

}  // namespace

int run_timing_mode(const Options &o) {
  if (!cuda_device_present()) {
    std::fprintf(stderr, "zyfa_bench: no CUDA device: the %s mode needs a GPU (try --mode=dry)\n", o.mode.c_str());
    return 2;
  }
  TimingRun run(o);
  run.register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const std::vector<Record> records = run.records();
  if (!o.json.empty()) write_records(o.json, o.argv, records);
  int failures = 0;
  for (const auto &r : records) failures += r.json().find("\"tflops\": null") != std::string::npos;
  std::fprintf(stderr, "zyfa_bench: %zu records, %d without a time\n", records.size(), failures);
  return 0;
}

}  // namespace zyfa::bench
