// The modes of zyfa_bench. Each returns the process exit status.
#ifndef ZYFA_BENCH_MODES_HPP_
#define ZYFA_BENCH_MODES_HPP_

#include "options.hpp"

namespace zyfa::bench {

// kernel, sustained and isolated: Google Benchmark runs, one benchmark per (case, repeat, impl).
int run_timing_mode(const Options &o);
// Relative RMS, max abs and LSE error against fp64 on sampled rows; rows sum to one with V = ones.
int run_accuracy_mode(const Options &o);
// Writes each case's inputs (and, for --purpose=accuracy, the sampled fp64 reference) for bench/peers.py.
int run_dump_mode(const Options &o);
// No GPU: shapes, FLOP counts, generator statistics and self-checks of the harness (a host CTest).
int run_dry_mode(const Options &o);

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_MODES_HPP_
