#include "support/host_attention.hpp"

#include <cmath>
#include <cstring>

#include "kernels/numerics.h"
#include "support/quantize.hpp"

namespace zyfa::test {

const char *layout_name(Layout layout) {
  switch (layout) {
    case Layout::kBSHD: return "bshd";
    case Layout::kBHSD: return "bhsd";
    case Layout::kStrided: return "strided";
  }
  return "unknown";
}

HostTensor::HostTensor(int64_t batch, int64_t seqlen, int64_t heads, int64_t dim, int element_bytes,
                       Layout layout)
    : batch_(batch), seqlen_(seqlen), heads_(heads), dim_(dim), element_bytes_(element_bytes) {
  switch (layout) {
    case Layout::kBSHD:
      head_stride_ = dim;
      seq_stride_ = heads * dim;
      batch_stride_ = seqlen * seq_stride_;
      break;
    case Layout::kBHSD:
      seq_stride_ = dim;
      head_stride_ = seqlen * dim;
      batch_stride_ = heads * head_stride_;
      break;
    case Layout::kStrided:
      head_stride_ = dim + kStridedGap;
      seq_stride_ = heads * head_stride_ + kStridedGap;
      batch_stride_ = seqlen * seq_stride_ + kStridedGap;
      break;
  }
  bytes_.assign(size_t(batch * batch_stride_ * element_bytes), 0);
}

uint16_t HostTensor::bf16(int64_t i) const {
  uint16_t bits;
  std::memcpy(&bits, &bytes_[size_t(i * 2)], 2);
  return bits;
}

void HostTensor::set_bf16(int64_t i, uint16_t bits) { std::memcpy(&bytes_[size_t(i * 2)], &bits, 2); }

TensorRef HostTensor::ref() const {
  TensorRef r;
  r.ptr = bytes_.data();
  r.batch_stride = batch_stride_;
  r.seq_stride = seq_stride_;
  r.head_stride = head_stride_;
  return r;
}

std::vector<char> HostTensor::logical_mask() const {
  std::vector<char> mask(size_t(storage_elements()), 0);
  for (int64_t b = 0; b < batch_; ++b)
    for (int64_t s = 0; s < seqlen_; ++s)
      for (int64_t h = 0; h < heads_; ++h)
        std::memset(&mask[size_t(index(b, s, h, 0))], 1, size_t(dim_));
  return mask;
}

std::string AttentionShape::name() const {
  std::string n = fp8() ? "fp8" : "bf16";
  n += "_d" + std::to_string(d_qk);
  if (d_v != d_qk) n += "x" + std::to_string(d_v);
  n += "_b" + std::to_string(batch) + "_s" + std::to_string(seqlen) + "_h" + std::to_string(nheads) + "_hk" +
       std::to_string(nheads_k) + "_" + layout_name(layout);
  if (per_head_descale) n += "_headdescale";
  if (!with_lse) n += "_nolse";
  if (p_rounding == ZYFA_P_ROUNDING_LEAN) n += "_leanp";
  if (p_rounding == ZYFA_P_ROUNDING_EXACT) n += "_exactp";
  if (p_rounding == ZYFA_P_ROUNDING_SPLIT) n += "_splitp";
  return n;
}

bool AttentionShape::lean_p() const { return resolve_lean_p(fp8(), p_rounding, d_qk); }

AttentionShape attention_shape(zyfa_dtype dtype, int64_t d_qk, int64_t batch, int64_t seqlen, int64_t nheads,
                               int64_t nheads_k, Layout layout, bool per_head_descale, bool with_lse) {
  AttentionShape s;
  s.dtype = dtype;
  s.d_qk = d_qk;
  s.d_v = 128;
  s.batch = batch;
  s.seqlen = seqlen;
  s.nheads = nheads;
  s.nheads_k = nheads_k;
  s.layout = layout;
  s.per_head_descale = per_head_descale;
  s.with_lse = with_lse;
  return s;
}

std::string OutputCheck::describe() const {
  return "unwritten " + std::to_string(unwritten) + ", gap elements written " + std::to_string(gap_written) +
         ", lse unwritten " + std::to_string(lse_unwritten) + ", non-finite " + std::to_string(nonfinite);
}

HostAttention::HostAttention(const AttentionShape &shape) : shape_(shape) {
  const int in_bytes = shape.fp8() ? 1 : 2;
  q = HostTensor(shape.batch, shape.seqlen, shape.nheads, shape.d_qk, in_bytes, shape.layout);
  k = HostTensor(shape.batch, shape.seqlen, shape.nheads_k, shape.d_qk, in_bytes, shape.layout);
  v = HostTensor(shape.batch, shape.seqlen, shape.nheads_k, shape.d_v, in_bytes, shape.layout);
  out = HostTensor(shape.batch, shape.seqlen, shape.nheads, shape.d_v, 2, shape.layout);
  out_mask_ = out.logical_mask();
  if (shape.with_lse) lse.assign(size_t(shape.batch * shape.nheads * shape.seqlen), 0.0f);
  const size_t descales = shape.per_head_descale ? size_t(shape.batch * shape.nheads_k) : 1;
  q_descale.assign(descales, 1.0f);
  k_descale.assign(descales, 1.0f);
  v_descale.assign(descales, 1.0f);
}

void HostAttention::quantize(const std::vector<float> &x, int64_t heads, HostTensor &t,
                             std::vector<float> &descale) {
  const AttentionShape &sh = shape_;
  const int64_t dim = t.dim(), group = heads / sh.nheads_k;
  auto slice = [&](int64_t b, int64_t h) { return sh.per_head_descale ? size_t(b * sh.nheads_k + h / group) : 0; };
  auto source = [&](int64_t b, int64_t s, int64_t h) { return &x[size_t(((b * sh.seqlen + s) * heads + h) * dim)]; };
  if (sh.fp8()) {
    std::vector<float> amax(descale.size(), 0.0f);
    for (int64_t b = 0; b < sh.batch; ++b)
      for (int64_t s = 0; s < sh.seqlen; ++s)
        for (int64_t h = 0; h < heads; ++h)
          amax[slice(b, h)] = std::max(amax[slice(b, h)], bf16_amax(source(b, s, h), dim));
    for (size_t i = 0; i < descale.size(); ++i) descale[i] = fp8_descale_for_amax(amax[i]);
  }
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t s = 0; s < sh.seqlen; ++s)
      for (int64_t h = 0; h < heads; ++h) {
        const float *src = source(b, s, h);
        for (int64_t d = 0; d < dim; ++d) {
          if (sh.fp8()) t.set_fp8(t.index(b, s, h, d), fp8_code(src[d], descale[slice(b, h)]));
          else t.set_bf16(t.index(b, s, h, d), numerics::bf16_bits(src[d]));
        }
      }
}

void HostAttention::set_inputs(const Activations &a) {
  quantize(a.q, shape_.nheads, q, q_descale);
  quantize(a.k, shape_.nheads_k, k, k_descale);
  quantize(a.v, shape_.nheads_k, v, v_descale);
}

void HostAttention::share_batch0_kv() {
  for (HostTensor *t : {&k, &v}) {
    const size_t batch_bytes = t->size_bytes() / size_t(t->batch());  // one batch_stride a batch, gaps included
    for (int64_t b = 1; b < t->batch(); ++b)
      std::memcpy(static_cast<uint8_t *>(t->data()) + size_t(b) * batch_bytes, t->data(), batch_bytes);
  }
  if (shape_.per_head_descale) {
    for (std::vector<float> *descales : {&k_descale, &v_descale})
      for (size_t i = size_t(shape_.nheads_k); i < descales->size(); ++i) (*descales)[i] = (*descales)[i % size_t(shape_.nheads_k)];
  }
}

void HostAttention::poison_outputs() {
  for (int64_t i = 0; i < out.storage_elements(); ++i) out.set_bf16(i, kPoisonBf16);
  const float poison = numerics::bits_float(kPoisonF32);
  for (float &x : lse) x = poison;
}

OutputCheck HostAttention::check_outputs() const {
  OutputCheck c;
  for (int64_t i = 0; i < out.storage_elements(); ++i) {
    const uint16_t bits = out.bf16(i);
    if (!out_mask_[size_t(i)]) c.gap_written += bits != kPoisonBf16;
    else if (bits == kPoisonBf16) ++c.unwritten;
    else c.nonfinite += !std::isfinite(numerics::bf16_value(bits));
  }
  for (float x : lse) {
    if (numerics::float_bits(x) == kPoisonF32) ++c.lse_unwritten;
    else c.nonfinite += !std::isfinite(x);
  }
  return c;
}

namespace {
// The descriptor's form of a descale: a host value, or (per head) an array that zyfa_attn_fwd_host reads.
zyfa_descale desc_descale(const std::vector<float> &values, const AttentionShape &sh) {
  zyfa_descale d = {ZYFA_DESCALE_NONE, 0.0f, nullptr, 0, 0};
  if (!sh.fp8()) return d;
  if (sh.per_head_descale) {
    d.kind = ZYFA_DESCALE_DEVICE;
    d.ptr = values.data();
    d.batch_stride = sh.nheads_k;
    d.head_stride = 1;
  } else {
    d.kind = ZYFA_DESCALE_HOST;
    d.value = values[0];
  }
  return d;
}

Descale problem_descale(const std::vector<float> &values, const AttentionShape &sh) {
  const zyfa_descale d = desc_descale(values, sh);
  Descale p;
  if (d.kind == ZYFA_DESCALE_HOST) p.value = d.value;
  p.ptr = d.ptr;
  p.batch_stride = d.batch_stride;
  p.head_stride = d.head_stride;
  return p;
}
}  // namespace

zyfa::Problem HostAttention::problem() const {
  const AttentionShape &sh = shape_;
  Problem p;
  p.dtype = sh.dtype;
  p.batch = sh.batch;
  p.seqlen = sh.seqlen;
  p.nheads = sh.nheads;
  p.nheads_k = sh.nheads_k;
  p.d_qk = sh.d_qk;
  p.d_v = sh.d_v;
  p.q = q.ref();
  p.k = k.ref();
  p.v = v.ref();
  p.out = out.ref();
  p.lse = sh.with_lse ? const_cast<float *>(lse.data()) : nullptr;
  // The same expression as validation's, so both paths see one float.
  p.softmax_scale = resolve_softmax_scale(sh.softmax_scale, sh.d_qk);
  p.q_descale = problem_descale(q_descale, sh);
  p.k_descale = problem_descale(k_descale, sh);
  p.v_descale = problem_descale(v_descale, sh);
  p.lean_p = sh.lean_p();
  p.split_p = sh.fp8() && sh.p_rounding == ZYFA_P_ROUNDING_SPLIT;
  return p;
}

zyfa_attn_desc HostAttention::desc() {
  const AttentionShape &sh = shape_;
  zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;
  d.dtype = sh.dtype;
  d.layout = sh.layout == Layout::kBSHD   ? ZYFA_LAYOUT_BSHD
             : sh.layout == Layout::kBHSD ? ZYFA_LAYOUT_BHSD
                                          : ZYFA_LAYOUT_STRIDED;
  d.batch = sh.batch;
  d.seqlen = sh.seqlen;
  d.nheads = sh.nheads;
  d.nheads_k = sh.nheads_k;
  d.d_qk = sh.d_qk;
  d.d_v = sh.d_v;
  d.q = q.data();
  d.k = k.data();
  d.v = v.data();
  d.out = out.data();
  d.lse = sh.with_lse ? lse.data() : nullptr;
  d.softmax_scale = sh.softmax_scale;
  if (sh.layout == Layout::kStrided) {
    d.q_strides = q.strides();
    d.k_strides = k.strides();
    d.v_strides = v.strides();
    d.out_strides = out.strides();
  }
  d.q_descale = desc_descale(q_descale, sh);
  d.k_descale = desc_descale(k_descale, sh);
  d.v_descale = desc_descale(v_descale, sh);
  d.p_rounding = sh.p_rounding;
  return d;
}

std::vector<double> HostAttention::out_values() const {
  const AttentionShape &sh = shape_;
  std::vector<double> values;
  values.reserve(size_t(sh.batch * sh.seqlen * sh.nheads * sh.d_v));
  for (int64_t b = 0; b < sh.batch; ++b)
    for (int64_t s = 0; s < sh.seqlen; ++s)
      for (int64_t h = 0; h < sh.nheads; ++h)
        for (int64_t d = 0; d < sh.d_v; ++d) values.push_back(numerics::bf16_value(out.bf16(out.index(b, s, h, d))));
  return values;
}

std::vector<double> HostAttention::lse_values() const { return std::vector<double>(lse.begin(), lse.end()); }

}  // namespace zyfa::test
