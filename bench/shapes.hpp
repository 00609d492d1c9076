// The seed's kernel-benchmark protocol as data: which shapes, dtypes and input kinds are measured, and
// the FLOP count every throughput figure uses.
#ifndef ZYFA_BENCH_SHAPES_HPP_
#define ZYFA_BENCH_SHAPES_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "zyfa/zyfa.h"

namespace zyfa::bench {

// H = max(kMinHeads, kHeadSeqProduct / S): the seed keeps the work per call roughly constant at short S.
constexpr int64_t kHeadSeqProduct = 262144;
constexpr int64_t kMinHeads = 32;
// Query heads per KV head in the GQA families (the seed's "four query heads per KV head").
constexpr int64_t kGqaGroup = 4;
// Llama-3.1-8B: 64 query heads over 8 KV heads at d = 128; NVIDIA publishes cuDNN figures for it.
constexpr int64_t kLlamaHeads = 64;
constexpr int64_t kLlamaKvHeads = 8;

enum class Inputs { kGaussian, kOutlier, kStructured };

struct Shape {
  std::string family;  // "mha-d128", "gqa-d128", "mha-d192", "gqa-d192", "llama3.1-8b"
  int64_t batch = 1;
  int64_t seqlen = 0;
  int64_t nheads = 0;
  int64_t nheads_k = 0;
  int64_t d_qk = 0;
  int64_t d_v = 0;

  // B*H*S^2*(d_qk + d_v). NVIDIA's cudnn-frontend benchmark counts 2*(d_qk + d_v) FLOP over the
  // S(S+1)/2 unmasked scores, which is the same number up to a factor 1 + 1/S (see bench/NOTES.md).
  double flops() const;
};

struct Case {
  Shape shape;
  zyfa_dtype dtype = ZYFA_DTYPE_BF16;
  Inputs inputs = Inputs::kGaussian;
  std::string name() const;  // e.g. "bf16/gqa-d128/S16384/H32:8/gaussian"
};

const char *dtype_name(zyfa_dtype dtype);  // "bf16" | "fp8"
const char *inputs_name(Inputs inputs);    // "gaussian" | "outlier" | "structured"
bool parse_dtype(const std::string &text, zyfa_dtype *dtype);
bool parse_inputs(const std::string &text, Inputs *inputs);
// FP8's P rounding by the name --p-rounding and the records use: "default", "lean", "exact".
bool parse_p_rounding(const std::string &text, zyfa_p_rounding *rounding);

// One run of a case: an implementation, and for zyfa FP8 an explicit P rounding (--p-rounding). Inside the
// harness (slots, Google Benchmark's names) a run with an explicit rounding is named "zyfa@lean" or
// "zyfa@exact"; its records say impl "zyfa" and p_rounding "lean" or "exact" (no p_rounding: the default).
struct RunName {
  std::string impl;        // "zyfa", "cudnn"
  std::string p_rounding;  // "" (the default), "lean" or "exact"
};
RunName split_run_name(const std::string &run);
std::string run_name(const std::string &impl, const std::string &p_rounding);

int64_t protocol_heads(int64_t seqlen);
std::vector<int64_t> protocol_seqlens();        // 2K, 4K, 8K, 16K, 32K
std::vector<std::string> protocol_families();   // in the order the tables list them
// Throws std::invalid_argument for an unknown family.
Shape family_shape(const std::string &family, int64_t seqlen);

}  // namespace zyfa::bench

#endif  // ZYFA_BENCH_SHAPES_HPP_
