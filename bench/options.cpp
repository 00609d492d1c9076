#include "options.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "kernel.hpp"

namespace zyfa::bench {
namespace {

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) if (!item.empty()) out.push_back(item);
  return out;
}

int64_t parse_int(const std::string &flag, const std::string &v) {
  size_t used = 0;
  int64_t x = 0;
  try { x = std::stoll(v, &used); } catch (const std::exception &) { used = 0; }
  if (used != v.size()) throw std::invalid_argument(flag + ": not an integer: '" + v + "'");
  return x;
}

double parse_double(const std::string &flag, const std::string &v) {
  size_t used = 0;
  double x = 0;
  try { x = std::stod(v, &used); } catch (const std::exception &) { used = 0; }
  if (used != v.size()) throw std::invalid_argument(flag + ": not a number: '" + v + "'");
  return x;
}

}  // namespace

std::string join(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string usage() {
  return R"(zyfa_bench: zyfa and cuDNN SDPA side by side (Google Benchmark), accuracy against fp64.
  --mode=kernel|sustained|isolated|accuracy|dump|dry   (default kernel; isolated: NVIDIA's protocol)
  --impls=zyfa,cudnn  --dtypes=bf16,fp8  --families=mha-d128,gqa-d128,mha-d192,gqa-d192,llama3.1-8b
  --seqlens=2048,...  --inputs=gaussian,outlier,structured
  --p-rounding=default,lean,exact,split   (FP8: zyfa's default run, plus one zyfa run per other value; its
                                     records carry p_rounding)
  --repeats=3  --idle-s=5  --idle-from=16384  --min-time-s=0.25  --max-calls=100  --warmup-s=0.2
  --sustained-idle-s=2  --sustained-warmup-s=1  --sustained-time-s=3
  --rows-per-head=64  --purpose=timing|accuracy (dump)  --input-std=0.1|1 (Gaussian)  --dump-dir=DIR  --json=FILE
Google Benchmark's own --benchmark_* flags are passed through (kernel and sustained modes).
)";
}

Options parse_options(int *argc, char **argv) {
  Options o;
  o.impls = kernel_impls();
  o.families = protocol_families();
  for (int i = 0; i < *argc; ++i) o.argv.push_back(argv[i]);
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || arg.rfind("--benchmark_", 0) == 0 || eq == std::string::npos) {
      if (arg == "--help" || arg == "-h") throw std::invalid_argument(usage());
      argv[kept++] = argv[i];
      continue;
    }
    const std::string flag = arg.substr(0, eq), v = arg.substr(eq + 1);
    if (flag == "--mode") o.mode = v;
    else if (flag == "--impls") {
      o.impls = split(v);
      const std::vector<std::string> known = kernel_impls();
      for (const auto &impl : o.impls) {
        if (impl.find('@') != std::string::npos)
          throw std::invalid_argument("--impls: '" + impl + "': a P rounding is chosen with --p-rounding");
        // Refused here rather than written as error records: tools/device/run_bench.sh gives this binary
        // only its own share of a part's --impls and the rest to bench/peers.py.
        if (std::find(known.begin(), known.end(), impl) == known.end())
          throw std::invalid_argument("--impls: '" + impl + "' is not timed by zyfa_bench (it times " +
                                      join(known) + "; bench/peers.py times the Python peers)");
      }
    }
    else if (flag == "--dtypes") {
      o.dtypes.clear();
      for (const auto &d : split(v)) {
        zyfa_dtype t;
        if (!parse_dtype(d, &t)) throw std::invalid_argument("--dtypes: unknown dtype '" + d + "'");
        o.dtypes.push_back(t);
      }
    } else if (flag == "--families") o.families = split(v);
    else if (flag == "--seqlens") {
      o.seqlens.clear();
      for (const auto &s : split(v)) o.seqlens.push_back(parse_int(flag, s));
    } else if (flag == "--inputs") {
      o.inputs.clear();
      for (const auto &s : split(v)) {
        Inputs in;
        if (!parse_inputs(s, &in)) throw std::invalid_argument("--inputs: unknown kind '" + s + "'");
        o.inputs.push_back(in);
      }
    } else if (flag == "--p-rounding") {
      o.p_roundings = {"default"};  // zyfa's default run always happens: every other row is read against it
      for (const auto &s : split(v)) {
        zyfa_p_rounding r;
        if (!parse_p_rounding(s, &r))
          throw std::invalid_argument("--p-rounding: unknown value '" + s + "' (default, lean, exact or split)");
        if (std::find(o.p_roundings.begin(), o.p_roundings.end(), s) == o.p_roundings.end())
          o.p_roundings.push_back(s);
      }
    } else if (flag == "--repeats") o.repeats = int(parse_int(flag, v));
    else if (flag == "--idle-s") o.idle_s = parse_double(flag, v);
    else if (flag == "--idle-from") o.idle_from = parse_int(flag, v);
    else if (flag == "--min-time-s") o.kernel.min_time_s = parse_double(flag, v);
    else if (flag == "--max-calls") o.kernel.max_calls = int(parse_int(flag, v));
    else if (flag == "--warmup-s") o.kernel.warmup_s = parse_double(flag, v);
    else if (flag == "--sustained-idle-s") o.sustained.idle_s = parse_double(flag, v);
    else if (flag == "--sustained-warmup-s") o.sustained.warmup_s = parse_double(flag, v);
    else if (flag == "--sustained-time-s") o.sustained.time_s = parse_double(flag, v);
    else if (flag == "--rows-per-head") o.rows_per_head = parse_int(flag, v);
    else if (flag == "--purpose") o.purpose = v;
    else if (flag == "--input-std") o.input_std = float(parse_double(flag, v));
    else if (flag == "--json") o.json = v;
    else if (flag == "--dump-dir") o.dump_dir = v;
    else throw std::invalid_argument("unknown flag " + flag + "\n" + usage());
  }
  *argc = kept;
  if (o.mode != "kernel" && o.mode != "sustained" && o.mode != "isolated" && o.mode != "accuracy" && o.mode != "dump" &&
      o.mode != "dry")
    throw std::invalid_argument("--mode: unknown mode '" + o.mode + "'");
  if (o.purpose != "timing" && o.purpose != "accuracy") throw std::invalid_argument("--purpose: timing or accuracy");
  if (o.repeats < 1 || o.kernel.max_calls < 1) throw std::invalid_argument("--repeats and --max-calls must be >= 1");
  // The first row, the last row and at least one drawn row standing for those between them.
  if (o.rows_per_head < kMinRowsPerHead)
    throw std::invalid_argument("--rows-per-head=" + std::to_string(o.rows_per_head) + ": must be >= " +
                                std::to_string(kMinRowsPerHead));
  if (o.seqlens.empty()) {
    if (o.mode == "sustained" || o.mode == "isolated") o.seqlens = {16384};
    else if (o.mode == "accuracy") o.seqlens = {4096, 16384};
    else o.seqlens = protocol_seqlens();
  }
  if (o.inputs.empty()) {
    if (o.mode == "accuracy") o.inputs = {Inputs::kGaussian, Inputs::kOutlier, Inputs::kStructured};
    else o.inputs = {Inputs::kGaussian};
  }
  for (const auto &f : o.families) family_shape(f, 4096);  // throws for an unknown family
  return o;
}

std::vector<Case> expand_cases(const Options &o) {
  std::vector<Case> cases;
  for (const auto &family : o.families)
    for (int64_t s : o.seqlens)
      for (Inputs in : o.inputs)
        for (zyfa_dtype dt : o.dtypes) cases.push_back({family_shape(family, s), dt, in});
  return cases;
}

std::vector<std::string> case_runs(const Options &o, const Case &c) {
  std::vector<std::string> runs = o.impls;
  if (c.dtype != ZYFA_DTYPE_FP8_E4M3 || std::find(o.impls.begin(), o.impls.end(), "zyfa") == o.impls.end())
    return runs;
  for (const std::string &r : o.p_roundings) {
    if (r == "default") continue;
    runs.push_back(run_name("zyfa", r));
  }
  return runs;
}

}  // namespace zyfa::bench
