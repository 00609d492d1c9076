// zyfa: one causal attention call of a given shape and dtype, on the GPU (or the CPU backend with --cpu,
// and whenever no GPU is present), checked against exact fp64 attention of the same quantized inputs.
// Prints the relative RMS error, the max abs error, the LSE error, the time and TFLOP/s; exits 1 when
// the error is over the tolerance of its dtype and P mode.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "host/validate.hpp"
#include "kernels/numerics.h"
#include "ref/error_norms.hpp"
#include "ref/reference.hpp"
#include "zyfa/zyfa.h"

namespace {

// Tolerances of the relative RMS error against fp64: issue 2's acceptance limits, except lean P (FP8,
// the default at d = 128, or --p-rounding lean), whose Mitchell approximation measures 1.9-2.35e-2 on std-1 Gaussians
// (CPU backend, zyfa.h's p_rounding note), close to 2.5e-2, so it gets 3e-2; exact P (--p-rounding exact, or the default at d_qk = 192) gets issue 2's 2.5e-2.
constexpr double kBf16Tolerance = 3e-3;
constexpr double kFp8Tolerance = 2.5e-2;
constexpr double kFp8LeanPTolerance = 3e-2;
constexpr uint16_t kBf16Poison = 0x7fc1;  // a NaN the kernels never write

struct Options {
  std::string dtype = "bf16";
  int64_t batch = 1, seqlen = 1024, nheads = 8, nheads_k = 0, d_qk = 128, d_v = 128;  // nheads_k 0: = nheads
  std::string layout = "bshd";
  bool cpu = false;
  bool lse = true;
  int iters = 10;
  uint64_t seed = 0;  // 0: a fresh seed from the clock
  double std = 1.0;
  std::string p_rounding = "default";
};

void usage() {
  std::printf(
      "usage: zyfa [--dtype bf16|fp8] [--batch B] [--seqlen S] [--heads H] [--heads-k HK (default H)]\n"
      "            [--d 128|192] [--layout bshd|bhsd] [--iters N] [--std X] [--seed N] [--no-lse] [--cpu]\n"
      "            [--p-rounding default|lean|exact|split]\n"
      "One causal attention call on the GPU (or the CPU backend), checked against fp64.\n"
      "--d 192 means d_qk = 192 with d_v = 128. --p-rounding (FP8): how P is rounded to e4m3; default is\n"
      "lean at d = 128 and exact at d_qk = 192; split adds exact P's e4m3 residual.\n");
}

bool parse(int argc, char **argv, Options *o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
    const char *v = nullptr;
    if (a == "--cpu") o->cpu = true;
    else if (a == "--no-lse") o->lse = false;
    else if (a == "-h" || a == "--help") return false;
    else if ((v = next()) == nullptr) return false;
    else if (a == "--dtype") o->dtype = v;
    else if (a == "--batch") o->batch = std::atoll(v);
    else if (a == "--seqlen") o->seqlen = std::atoll(v);
    else if (a == "--heads") o->nheads = std::atoll(v);
    else if (a == "--heads-k") o->nheads_k = std::atoll(v);
    else if (a == "--d") o->d_qk = std::atoll(v);
    else if (a == "--layout") o->layout = v;
    else if (a == "--iters") o->iters = std::atoi(v);
    else if (a == "--std") o->std = std::atof(v);
    else if (a == "--seed") o->seed = std::strtoull(v, nullptr, 10);
    else if (a == "--p-rounding") o->p_rounding = v;
    else return false;
  }
  return (o->dtype == "bf16" || o->dtype == "fp8") && (o->layout == "bshd" || o->layout == "bhsd") &&
         (o->p_rounding == "default" || o->p_rounding == "lean" || o->p_rounding == "exact" ||
          o->p_rounding == "split") && o->iters >= 1;
}

// Host copies of one input tensor: its stored bytes and the descale that maps them back.
struct HostTensor {
  std::vector<uint8_t> bytes;
  float descale = 1.0f;
};

// Gaussian values, stored as BF16, or quantized to FP8 by zyfa's own host quantizer (one power-of-two
// descale per tensor), so the tool exercises the same path a user would.
bool make_input(int64_t elements, bool fp8, double std, std::mt19937_64 &rng, HostTensor *t) {
  std::normal_distribution<float> normal(0.0f, float(std));
  std::vector<uint16_t> bf16(elements);
  for (auto &x : bf16) x = zyfa::numerics::bf16_bits(normal(rng));
  if (!fp8) {
    t->bytes.resize(elements * 2);
    std::memcpy(t->bytes.data(), bf16.data(), t->bytes.size());
    return true;
  }
  t->bytes.resize(elements);
  zyfa_quantize_desc q = ZYFA_QUANTIZE_DESC_INIT;
  q.src = bf16.data();
  q.dst = t->bytes.data();
  q.descale = &t->descale;
  q.n_rows = elements / 8;  // any row split works without a rotation: 8 divides every head dim
  q.dim = 8;
  if (zyfa_status s = zyfa_quantize_fp8_host(&q)) {
    std::printf("zyfa_quantize_fp8_host: %s: %s\n", zyfa_status_string(s), zyfa_last_error());
    return false;
  }
  return true;
}

// FNV-1a over bytes: a digest of the output and LSE, so that two builds or two runs on the same seed can be
// compared bit for bit from their printouts.
uint64_t fnv1a64(const void *data, size_t bytes, uint64_t h) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * kPrime;
  return h;
}
constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;

bool gpu_present() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

#define CUDA_OK(call)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::printf("%s failed: %s\n", #call, cudaGetErrorString(e_));                          \
      return false;                                                                            \
    }                                                                                          \
  } while (0)

// Runs `iters` calls on the GPU; leaves the last call's output in `desc`'s host buffers. Returns ms/call and
// the workspace bytes the calls were given.
bool run_gpu(const zyfa_attn_desc &host_desc, const HostTensor *in[3], std::vector<uint16_t> *out,
             std::vector<float> *lse, int iters, double *ms_per_call, size_t *workspace_used) {
  zyfa_attn_desc d = host_desc;
  void *buf[3] = {};
  for (int i = 0; i < 3; ++i) {
    CUDA_OK(cudaMalloc(&buf[i], in[i]->bytes.size()));
    CUDA_OK(cudaMemcpy(buf[i], in[i]->bytes.data(), in[i]->bytes.size(), cudaMemcpyHostToDevice));
  }
  void *dout = nullptr;
  float *dlse = nullptr;
  CUDA_OK(cudaMalloc(&dout, out->size() * 2));
  std::vector<uint16_t> poison(out->size(), kBf16Poison);
  CUDA_OK(cudaMemcpy(dout, poison.data(), poison.size() * 2, cudaMemcpyHostToDevice));
  if (lse) {
    CUDA_OK(cudaMalloc(&dlse, lse->size() * 4));
    CUDA_OK(cudaMemset(dlse, 0xff, lse->size() * 4));
  }
  d.q = buf[0];
  d.k = buf[1];
  d.v = buf[2];
  d.out = dout;
  d.lse = dlse;
  // The workspace that makes the call faster where the library can use one (FP8 at long sequences).
  size_t workspace_bytes = 0;
  if (zyfa_status s = zyfa_attn_workspace_size(&d, &workspace_bytes)) {
    std::printf("zyfa_attn_workspace_size: %s: %s\n", zyfa_status_string(s), zyfa_last_error());
    return false;
  }
  void *workspace = nullptr;
  if (workspace_bytes > 0) CUDA_OK(cudaMalloc(&workspace, workspace_bytes));
  d.workspace = workspace;
  d.workspace_bytes = workspace_bytes;
  *workspace_used = workspace_bytes;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  zyfa_status s = zyfa_attn_prepare(&d, stream);
  // The first call is checked on its own: later calls overwrite the same output.
  if (s == ZYFA_STATUS_SUCCESS) s = zyfa_attn_fwd(&d, stream);
  if (s != ZYFA_STATUS_SUCCESS) {
    std::printf("zyfa_attn_fwd: %s: %s\n", zyfa_status_string(s), zyfa_last_error());
    return false;
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaMemcpy(out->data(), dout, out->size() * 2, cudaMemcpyDeviceToHost));
  if (lse) CUDA_OK(cudaMemcpy(lse->data(), dlse, lse->size() * 4, cudaMemcpyDeviceToHost));
  cudaEvent_t start, stop;
  CUDA_OK(cudaEventCreate(&start));
  CUDA_OK(cudaEventCreate(&stop));
  CUDA_OK(cudaEventRecord(start, stream));
  for (int i = 0; i < iters; ++i) {
    if ((s = zyfa_attn_fwd(&d, stream)) != ZYFA_STATUS_SUCCESS) {
      std::printf("zyfa_attn_fwd: %s: %s\n", zyfa_status_string(s), zyfa_last_error());
      return false;
    }
  }
  CUDA_OK(cudaEventRecord(stop, stream));
  CUDA_OK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
  *ms_per_call = ms / iters;
  for (void *p : buf) cudaFree(p);
  cudaFree(dout);
  cudaFree(dlse);
  cudaFree(workspace);
  cudaStreamDestroy(stream);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    usage();
    return 2;
  }
  if (o.d_qk == 192) o.d_v = 128;
  if (o.nheads_k == 0) o.nheads_k = o.nheads;
  const bool fp8 = o.dtype == "fp8";
  if (o.seed == 0) o.seed = std::chrono::steady_clock::now().time_since_epoch().count();
  std::mt19937_64 rng(o.seed);

  const int64_t nq = o.batch * o.seqlen * o.nheads, nk = o.batch * o.seqlen * o.nheads_k;
  HostTensor q, k, v;
  if (!make_input(nq * o.d_qk, fp8, o.std, rng, &q) || !make_input(nk * o.d_qk, fp8, o.std, rng, &k) ||
      !make_input(nk * o.d_v, fp8, o.std, rng, &v)) {
    return 1;
  }
  std::vector<uint16_t> out(nq * o.d_v, kBf16Poison);
  std::vector<float> lse(o.lse ? nq : 0, std::nanf(""));

  zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;
  d.dtype = fp8 ? ZYFA_DTYPE_FP8_E4M3 : ZYFA_DTYPE_BF16;
  d.layout = o.layout == "bhsd" ? ZYFA_LAYOUT_BHSD : ZYFA_LAYOUT_BSHD;
  d.batch = o.batch;
  d.seqlen = o.seqlen;
  d.nheads = o.nheads;
  d.nheads_k = o.nheads_k;
  d.d_qk = o.d_qk;
  d.d_v = o.d_v;
  d.q = q.bytes.data();
  d.k = k.bytes.data();
  d.v = v.bytes.data();
  d.out = out.data();
  d.lse = o.lse ? lse.data() : nullptr;
  // Passed as given, also with BF16: validation refuses a non-default value there, with its message.
  d.p_rounding = o.p_rounding == "lean"    ? ZYFA_P_ROUNDING_LEAN
                 : o.p_rounding == "exact" ? ZYFA_P_ROUNDING_EXACT
                 : o.p_rounding == "split" ? ZYFA_P_ROUNDING_SPLIT
                                           : ZYFA_P_ROUNDING_DEFAULT;
  if (fp8) {
    zyfa_descale *ds[3] = {&d.q_descale, &d.k_descale, &d.v_descale};
    const HostTensor *ts[3] = {&q, &k, &v};
    for (int i = 0; i < 3; ++i) *ds[i] = zyfa_descale{ZYFA_DESCALE_HOST, ts[i]->descale, nullptr, 0, 0};
  }

  const bool on_gpu = !o.cpu && gpu_present();
  if (!o.cpu && !on_gpu) std::printf("no GPU found: running the CPU backend instead\n");
  double ms = 0;
  size_t workspace_bytes = 0;  // given to the GPU calls (zyfa_attn_workspace_size); the CPU backend takes none
  if (on_gpu) {
    const HostTensor *in[3] = {&q, &k, &v};
    if (!run_gpu(d, in, &out, o.lse ? &lse : nullptr, o.iters, &ms, &workspace_bytes)) return 1;
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    if (zyfa_status s = zyfa_attn_fwd_host(&d)) {
      std::printf("zyfa_attn_fwd_host: %s: %s\n", zyfa_status_string(s), zyfa_last_error());
      return 1;
    }
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  // The oracle reads the same quantized host inputs.
  zyfa::Problem problem;
  if (zyfa_status s = zyfa::validate_attention(&d, zyfa::PointerCheck::kRequired, &problem)) {
    std::printf("validate: %s: %s\n", zyfa_status_string(s), zyfa_last_error());
    return 1;
  }
  const zyfa::ref::ReferenceResult ref = zyfa::ref::attention_fp64(problem);
  // ref.out is BSHD; gather the output of the chosen layout in that order.
  std::vector<double> got;
  got.reserve(ref.out.size());
  int64_t unwritten = 0;
  for (int64_t b = 0; b < o.batch; ++b)
    for (int64_t s = 0; s < o.seqlen; ++s)
      for (int64_t h = 0; h < o.nheads; ++h)
        for (int64_t e = 0; e < o.d_v; ++e) {
          const uint16_t bits = out[problem.out.offset(b, s, h) + e];
          if (bits == kBf16Poison) ++unwritten;
          got.push_back(zyfa::numerics::bf16_value(bits));
        }
  // The norms the tests use: rel_rms is infinite if any value is not finite.
  const zyfa::ref::ErrorStats err = zyfa::ref::compare_to_reference(got, ref.out);
  double lse_max = 0;
  for (size_t i = 0; i < lse.size(); ++i) lse_max = std::fmax(lse_max, std::fabs(lse[i] - ref.lse[i]));
  const double rel_rms = err.rel_rms;
  const double max_abs = err.nonfinite ? INFINITY : err.max_abs;
  const double tolerance = !fp8 ? kBf16Tolerance : problem.lean_p ? kFp8LeanPTolerance : kFp8Tolerance;
  const double tflops = problem.flops() / (ms * 1e-3) / 1e12;
  std::printf("zyfa %s %s%s: batch %lld, seqlen %lld, heads %lld/%lld, d_qk %lld, d_v %lld, %s, seed %llu\n",
              on_gpu ? "GPU" : "CPU backend", o.dtype.c_str(), !fp8 ? "" : problem.lean_p ? " (lean P)" : " (exact P)",
              (long long)o.batch, (long long)o.seqlen, (long long)o.nheads, (long long)o.nheads_k,
              (long long)o.d_qk, (long long)o.d_v, o.layout.c_str(), (unsigned long long)o.seed);
  std::printf("rel_rms_err %.3e (tolerance %.1e)  max_abs_err %.3e  lse_max_err %.3e  unwritten %lld\n", rel_rms,
              tolerance, max_abs, lse_max, (long long)unwritten);
  const uint64_t digest =
      fnv1a64(lse.data(), lse.size() * sizeof(float), fnv1a64(out.data(), out.size() * 2, kFnvOffsetBasis));
  std::printf("output digest %016llx (FNV-1a of the output%s bytes)\n", (unsigned long long)digest,
              o.lse ? " and LSE" : "");
  std::printf("time %.4f ms/call  %.4g TFLOP/s (B*H*S^2*(d_qk+d_v))  workspace %zu bytes\n", ms, tflops,
              workspace_bytes);
  const bool ok = rel_rms <= tolerance && unwritten == 0 && std::isfinite(max_abs);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
