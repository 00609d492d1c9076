#include "shapes.hpp"

#include <algorithm>
#include <stdexcept>

namespace zyfa::bench {

double Shape::flops() const {
  return double(batch) * double(nheads) * double(seqlen) * double(seqlen) * double(d_qk + d_v);
}

std::string Case::name() const {
  return std::string(dtype_name(dtype)) + "/" + shape.family + "/S" + std::to_string(shape.seqlen) + "/H" +
         std::to_string(shape.nheads) + ":" + std::to_string(shape.nheads_k) + "/" + inputs_name(inputs);
}

const char *dtype_name(zyfa_dtype dtype) { return dtype == ZYFA_DTYPE_FP8_E4M3 ? "fp8" : "bf16"; }

const char *inputs_name(Inputs inputs) {
  switch (inputs) {
    case Inputs::kGaussian: return "gaussian";
    case Inputs::kOutlier: return "outlier";
    case Inputs::kStructured: return "structured";
  }
  return "?";
}

bool parse_dtype(const std::string &text, zyfa_dtype *dtype) {
  if (text == "bf16") *dtype = ZYFA_DTYPE_BF16;
  else if (text == "fp8") *dtype = ZYFA_DTYPE_FP8_E4M3;
  else return false;
  return true;
}

bool parse_inputs(const std::string &text, Inputs *inputs) {
  for (Inputs i : {Inputs::kGaussian, Inputs::kOutlier, Inputs::kStructured}) {
    if (text == inputs_name(i)) {
      *inputs = i;
      return true;
    }
  }
  return false;
}

bool parse_p_rounding(const std::string &text, zyfa_p_rounding *rounding) {
  if (text == "default") *rounding = ZYFA_P_ROUNDING_DEFAULT;
  else if (text == "lean") *rounding = ZYFA_P_ROUNDING_LEAN;
  else if (text == "exact") *rounding = ZYFA_P_ROUNDING_EXACT;
  else if (text == "split") *rounding = ZYFA_P_ROUNDING_SPLIT;
  else return false;
  return true;
}

RunName split_run_name(const std::string &run) {
  const size_t at = run.find('@');
  if (at == std::string::npos) return {run, ""};
  return {run.substr(0, at), run.substr(at + 1)};
}

std::string run_name(const std::string &impl, const std::string &p_rounding) {
  return p_rounding.empty() || p_rounding == "default" ? impl : impl + "@" + p_rounding;
}

int64_t protocol_heads(int64_t seqlen) { return std::max(kMinHeads, kHeadSeqProduct / seqlen); }

std::vector<int64_t> protocol_seqlens() { return {2048, 4096, 8192, 16384, 32768}; }

std::vector<std::string> protocol_families() {
  return {"mha-d128", "gqa-d128", "mha-d192", "gqa-d192", "llama3.1-8b"};
}

Shape family_shape(const std::string &family, int64_t seqlen) {
  Shape s;
  s.family = family;
  s.seqlen = seqlen;
  if (family == "llama3.1-8b") {
    s.nheads = kLlamaHeads;
    s.nheads_k = kLlamaKvHeads;
    s.d_qk = s.d_v = 128;
    return s;
  }
  const bool gqa = family.rfind("gqa-", 0) == 0;
  if (!gqa && family.rfind("mha-", 0) != 0) throw std::invalid_argument("unknown shape family '" + family + "'");
  const std::string dims = family.substr(4);
  if (dims == "d128") s.d_qk = 128;
  else if (dims == "d192") s.d_qk = 192;
  else throw std::invalid_argument("unknown shape family '" + family + "'");
  s.d_v = 128;
  s.nheads = protocol_heads(seqlen);
  s.nheads_k = gqa ? s.nheads / kGqaGroup : s.nheads;
  return s;
}

}  // namespace zyfa::bench
