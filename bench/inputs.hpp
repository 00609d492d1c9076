// The inputs of one benchmark case. They come from the shared activation generators and quantizers of
// test/support (the tensors the tests and the zyfa command use too), in BSHD layout, and are copied to
// the GPU once for every kernel and peer of the case.
#ifndef ZYFA_BENCH_INPUTS_HPP_
#define ZYFA_BENCH_INPUTS_HPP_

#include <cstdint>
#include <memory>

#include "cuda_util.hpp"
#include "shapes.hpp"
#include "support/activations.hpp"
#include "support/host_attention.hpp"

namespace zyfa::bench {

// Gaussian std: the seed's kernel benchmarks use 0.1 (nearly uniform attention, which decides the
// clock); the accuracy study uses 1, the std of issue 2's accuracy targets, where scores spread.
constexpr float kTimingGaussianStd = 0.1f;
constexpr float kAccuracyGaussianStd = 1.0f;

enum class Purpose { kTiming, kAccuracy };

// The generator parameters of an input kind (outlier: FlashAttention-3's N(0,1) + N(0,100)*Bernoulli(0.001);
// structured: test/support/activations.hpp's defaults at std 1).
// `gaussian_std` > 0 replaces the Gaussian std of the purpose (--input-std: e.g. NVIDIA's std-1 inputs).
test::ActivationSpec activation_spec(Inputs inputs, Purpose purpose, float gaussian_std = 0.0f);
// One seed per (shape, input kind): reruns, both dtypes and the Python peers see the same tensors.
uint64_t case_seed(const Shape &shape, Inputs inputs);

test::Activations make_activations(const Shape &shape, Inputs inputs, const test::ActivationSpec &spec);
// BF16, or FP8 with one power-of-two descale per tensor (zyfa_quantize_fp8's rule), BSHD, with LSE.
std::unique_ptr<test::HostAttention> make_host_inputs(const Case &c, const test::Activations &a);
// V = all ones with descale 1: every output row must then be exactly 1, whatever the probabilities.
void make_v_ones(test::HostAttention &host);

// Device copies of one case's inputs, shared by every kernel of the case.
struct DeviceInputs {
  DeviceInputs(const Case &c, const test::HostAttention &host);
  void reload_v(const test::HostAttention &host);  // after make_v_ones

  Case c;
  DeviceBuffer q, k, v;
  // float[4] in device memory: the q, k and v descales and 1 / v descale (cuDNN's FP8 output scale).
  DeviceBuffer scales;
  float host_scales[4] = {1.0f, 1.0f, 1.0f, 1.0f};

 private:
  void load_scales(const test::HostAttention &host);
};

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_INPUTS_HPP_
