// Device time of back-to-back calls, by CUDA events around many calls: the protocol's kernel mode and
// its sustained mode (the clock after seconds of load, which the seed shows can differ by kernel).
#ifndef ZYFA_BENCH_TIMING_HPP_
#define ZYFA_BENCH_TIMING_HPP_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstddef>
#include <functional>
#include <vector>

namespace zyfa::bench {

using Launch = std::function<void()>;  // enqueues one call on the stream the timer is given

// Wall-clock bounds of timed calls (Unix milliseconds), for matching them to the clock and power samples
// that tools/device/run_bench.sh takes while a part runs.
struct TimedWindow {
  int64_t start_unix_ms = 0;
  int64_t end_unix_ms = 0;
};

// Milliseconds per call over `calls` back-to-back calls (events recorded around all of them); their
// wall-clock bounds into *window when it is given.
double time_calls(const Launch &launch, cudaStream_t stream, int calls, TimedWindow *window = nullptr);

// Runs calls for at least `seconds` (and at least `min_calls`), waits for them, and returns the
// measured milliseconds per call: the warm-up that also sizes the timed runs.
double warm_up(const Launch &launch, cudaStream_t stream, double seconds, int min_calls);

struct KernelProtocol {
  double warmup_s = 0.2;     // before the first repeat of each kernel
  double min_time_s = 0.25;  // timed device time per repeat
  int min_calls = 10;
  int max_calls = 100;       // the seed's "mean of 100 calls"
};
// Calls per repeat for a kernel that takes `ms_per_call`.
int calls_per_repeat(const KernelProtocol &p, double ms_per_call);
// Rounds of a rotation of `implementations` for at least `repeats` timings each: whole rotations, so that each
// implementation takes each place in the order equally often (3 repeats of two made the first one lead twice;
// on a card at its power cap the place moves a repeat by 10%).
int whole_rotation_rounds(int repeats, size_t implementations);
// The median of the repeats: of an even count, the mean of the middle two.
double median_of(std::vector<double> values);

struct SustainedProtocol {
  double idle_s = 2.0;    // the GPU idles first, so every kernel starts from the same clock
  double warmup_s = 1.0;  // back to back, untimed
  double time_s = 3.0;    // back to back, timed (at least)
};
struct SustainedResult {
  double ms_per_call = 0.0;
  int calls = 0;
  double timed_s = 0.0;
  TimedWindow window;
};
SustainedResult time_sustained(const Launch &launch, cudaStream_t stream, const SustainedProtocol &p);

// NVIDIA's cudnn-frontend benchmark protocol, for reconciling figures: each call runs alone, after a
// pause and an L2 flush (a 256 MiB memset), timed by its own events; the median of `calls` such calls.
struct IsolatedProtocol {
  int calls = 10;
  double pause_s = 0.02;
  size_t flush_bytes = size_t(256) << 20;
};
double time_isolated(const Launch &launch, cudaStream_t stream, const IsolatedProtocol &p);

void idle_for(double seconds);

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_TIMING_HPP_
