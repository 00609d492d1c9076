// zyfa_bench: the benchmark and accuracy harness (see bench/NOTES.md for the protocol and the schema).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>

#include "cuda_util.hpp"
#include "modes.hpp"

namespace zyfa::bench {
bool cuda_device_present() {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();  // clear "no device" so it does not linger as the last error
  return ok;
}
}  // namespace zyfa::bench

int main(int argc, char **argv) {
  using namespace zyfa::bench;
  try {
    const Options o = parse_options(&argc, argv);
    if (o.mode == "dry") return run_dry_mode(o);
    if (o.mode == "dump") return run_dump_mode(o);
    if (o.mode == "accuracy") return run_accuracy_mode(o);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    return run_timing_mode(o);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "zyfa_bench: %s\n", e.what());
    return 2;
  }
}
