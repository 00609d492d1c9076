#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "cuda_util.hpp"

namespace zyfa::bench {
namespace {

int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

double time_calls(const Launch &launch, cudaStream_t stream, int calls, TimedWindow *window) {
  if (window != nullptr) window->start_unix_ms = unix_ms_now();
  Event start, stop;
  ZYFA_BENCH_CUDA(cudaEventRecord(start.get(), stream));
  for (int i = 0; i < calls; ++i) launch();
  ZYFA_BENCH_CUDA(cudaEventRecord(stop.get(), stream));
  ZYFA_BENCH_CUDA(cudaEventSynchronize(stop.get()));
  if (window != nullptr) window->end_unix_ms = unix_ms_now();
  ZYFA_BENCH_CUDA(cudaGetLastError());
  float ms = 0.0f;
  ZYFA_BENCH_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return double(ms) / calls;
}

double warm_up(const Launch &launch, cudaStream_t stream, double seconds, int min_calls) {
  // Doubling batches: a slow kernel is not launched a hundred times just to learn that it is slow.
  double total_ms = 0.0;
  int total_calls = 0, batch = 1;
  while (total_calls < min_calls || total_ms < seconds * 1e3) {
    total_ms += time_calls(launch, stream, batch) * batch;
    total_calls += batch;
    batch = std::min(batch * 2, 64);
  }
  return total_ms / total_calls;
}

int whole_rotation_rounds(int repeats, size_t implementations) {
  const int n = int(std::max<size_t>(implementations, 1));
  return (std::max(repeats, 1) + n - 1) / n * n;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

int calls_per_repeat(const KernelProtocol &p, double ms_per_call) {
  const double wanted = std::ceil(p.min_time_s * 1e3 / std::max(ms_per_call, 1e-6));
  return int(std::clamp(wanted, double(p.min_calls), double(p.max_calls)));
}

SustainedResult time_sustained(const Launch &launch, cudaStream_t stream, const SustainedProtocol &p) {
  idle_for(p.idle_s);
  const double ms = warm_up(launch, stream, p.warmup_s, 1);
  // One event pair around all timed calls: sized from the warm-up so that they last >= time_s.
  // 10% spare, so that a clock that rises after the warm-up still leaves >= time_s timed.
  const int calls = std::max(1, int(std::ceil(1.1 * p.time_s * 1e3 / std::max(ms, 1e-6))));
  SustainedResult r;
  r.ms_per_call = time_calls(launch, stream, calls, &r.window);
  r.calls = calls;
  r.timed_s = r.ms_per_call * calls / 1e3;
  return r;
}

double time_isolated(const Launch &launch, cudaStream_t stream, const IsolatedProtocol &p) {
  DeviceBuffer flush(p.flush_bytes);
  std::vector<double> ms;
  for (int i = 0; i < p.calls; ++i) {
    idle_for(p.pause_s);
    ZYFA_BENCH_CUDA(cudaMemsetAsync(flush.get(), i & 0xff, flush.bytes(), stream));
    ms.push_back(time_calls(launch, stream, 1));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void idle_for(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace zyfa::bench
