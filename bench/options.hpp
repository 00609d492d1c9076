// zyfa_bench's own command line (Google Benchmark's --benchmark_* flags pass through untouched).
#ifndef ZYFA_BENCH_OPTIONS_HPP_
#define ZYFA_BENCH_OPTIONS_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "shapes.hpp"
#include "timing.hpp"

namespace zyfa::bench {

// --rows-per-head's least value: the first row, the last row and one drawn row that stands for those between
// (sample_rows; with fewer, the rows between would have no weight in the estimate).
constexpr int64_t kMinRowsPerHead = 3;

struct Options {
  std::string mode = "kernel";  // kernel | sustained | isolated | accuracy | dump | dry
  std::vector<std::string> impls;
  std::vector<zyfa_dtype> dtypes = {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3};
  std::vector<std::string> families;
  std::vector<int64_t> seqlens;  // default: the protocol's (kernel), {16K} (sustained), {4K, 16K} (accuracy)
  std::vector<Inputs> inputs;    // default: gaussian, or all three kinds for accuracy
  // FP8 P roundings zyfa runs with: "default" (always run) and, where the library takes them, "lean"
  // (d_qk = 128) and "exact", each one more zyfa run of the case (see case_runs).
  std::vector<std::string> p_roundings = {"default"};
  int repeats = 3;               // kernel mode: the kernel order rotates by one between repeats
  double idle_s = 5.0;           // before each case with seqlen >= idle_from (the seed's 5 s)
  int64_t idle_from = 16384;
  KernelProtocol kernel;
  SustainedProtocol sustained;
  int64_t rows_per_head = 64;    // accuracy and dump: query rows per head checked against fp64 (>= kMinRowsPerHead)
  float input_std = 0.0f;        // > 0: the Gaussian std instead of the purpose's (0.1 timing, 1 accuracy)
  std::string purpose = "timing";  // dump: the Gaussian std of timing (0.1) or accuracy (1)
  std::string json;              // where the records go
  std::string dump_dir;
  std::vector<std::string> argv;  // the whole command line, for the results file
};

// Takes zyfa_bench's flags out of argv (leaving argv[0] and Google Benchmark's). Throws
// std::invalid_argument with a message on a bad flag.
Options parse_options(int *argc, char **argv);
std::string usage();
std::string join(const std::vector<std::string> &items);  // "a,b,c", as the flags take lists

// The cases of a run, ordered shape by shape (inputs generated once serve both dtypes).
std::vector<Case> expand_cases(const Options &o);

// The runs of one case, in the order the protocol rotates from: o.impls, then, when zyfa is among them and
// the case is FP8, one "zyfa@<rounding>" run per non-default value of --p-rounding (the library takes each at
// either head dim). BF16 cases and the peers run with the default only.
std::vector<std::string> case_runs(const Options &o, const Case &c);

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_OPTIONS_HPP_
