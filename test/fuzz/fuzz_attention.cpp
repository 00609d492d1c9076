// Fuzzes zyfa_attn_desc through zyfa_attn_fwd_host, zyfa_attn_prepare and zyfa_attn_fwd. Two kinds of
// input:
//  - bounded: small shapes with real host tensors of exactly the size their strides span, so the CPU
//    backend runs and AddressSanitizer sees any access outside a tensor. Findings: a crash or sanitizer
//    report; a failed call that changed any byte; a successful call that left an output element unwritten,
//    wrote between strided rows, changed an input, accepted overlapping outputs, gave non-finite outputs
//    from finite inputs, or differs bit for bit from the same problem on contiguous copies of its inputs.
//  - wild: any int64 shape, stride and pointer, with at least one tensor NULL so nothing can be read;
//    every call must fail cleanly (overflow checks, messages), and prepare must not crash.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "fuzz_targets.hpp"

namespace zyfa::fuzz {
namespace {

// A signalling bf16 NaN: bf16 rounding sets the quiet bit of every NaN, so no result has this pattern.
constexpr uint16_t kOutPoison = 0x7fa5;
// A signalling float NaN, which no arithmetic produces.
constexpr uint32_t kLsePoison = 0x7fa00001u;
// batch * nheads * seqlen^2 at most, so that one input runs in milliseconds under ASan.
constexpr int64_t kMaxScores = int64_t(1) << 15;
// Past the second query tile and key block of 128, and their pairing.
constexpr int64_t kMaxSeqlen = 160;
// Softmax scales from here up are wild: outputs may be non-finite.
constexpr float kSaneSoftmaxScale = 16.0f;
// The largest |score| in base-2 units (softmax_scale * log2(e) * descales * q.k) at which the outputs of
// finite inputs must be finite. Beyond about 2^21 the recurrence's fp32 arithmetic (the row max subtracted
// inside exp2, lean P's code offset 8 bmax) loses the units place and a row can sum to 0; real
// attention scores stay far below this.
constexpr double kSaneScoreRange = 65536.0;
constexpr double kLog2e = 1.4426950408889634;
constexpr int kDescaleExponentRange = 16;
// zyfa_attn_desc of the first header, which ends before p_rounding: a size the library accepts.
constexpr size_t kFirstDescSize = offsetof(zyfa_attn_desc, p_rounding);

enum Tensor { kQ, kK, kV, kOut, kTensors };

struct TensorShape {
  int64_t heads = 0, dim = 0;
  int element_bytes = 2;
  zyfa_strides strides{};
};

// Elements from a tensor's first to one past its last, or -1 where a stride is negative or the span
// overflows or exceeds kMaxBlockBytes (the harness then passes NULL or a dummy and expects a refusal).
int64_t span_elements(const TensorShape &t, int64_t batch, int64_t seqlen) {
  const int64_t extents[3] = {batch, seqlen, t.heads};
  const int64_t strides[3] = {t.strides.batch, t.strides.seq, t.strides.head};
  int64_t last = t.dim - 1, term = 0, bytes = 0;
  for (int i = 0; i < 3; ++i) {
    if (strides[i] < 0 || extents[i] < 1) return -1;
    if (__builtin_mul_overflow(extents[i] - 1, strides[i], &term) || __builtin_add_overflow(last, term, &last)) {
      return -1;
    }
  }
  int64_t count = 0;  // last + 1 overflows where the strides put the last element at INT64_MAX
  if (__builtin_add_overflow(last, 1, &count) || __builtin_mul_overflow(count, int64_t(t.element_bytes), &bytes) ||
      bytes > int64_t(kMaxBlockBytes)) {
    return -1;
  }
  return count;
}

zyfa_strides named_layout_strides(bool bhsd, int64_t seqlen, int64_t heads, int64_t dim) {
  if (bhsd) return {heads * seqlen * dim, dim, seqlen * dim};
  return {seqlen * heads * dim, heads * dim, dim};
}

// Strides of an arbitrary (batch, seq, head) nesting with gaps of whole 16-byte granules, then perhaps
// one stride broken: zero, negative, off the granule, or any int64.
zyfa_strides fuzz_strides(FuzzedDataProvider &in, const TensorShape &t, int64_t batch, int64_t seqlen) {
  static const int kOrders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const int *order = kOrders[in.ConsumeIntegralInRange<int>(0, 5)];  // outermost first
  const int64_t granule = int64_t(kTensorAlignment) / t.element_bytes;
  const int64_t extents[3] = {batch, seqlen, t.heads};
  int64_t strides[3] = {};
  int64_t span = t.dim;
  for (int level = 2; level >= 0; --level) {
    const int dim = order[level];
    span += granule * in.ConsumeIntegralInRange<int64_t>(0, 2);
    strides[dim] = span;
    span *= extents[dim] > 0 ? extents[dim] : 1;
  }
  const int broken = in.ConsumeIntegralInRange<int>(0, 15);
  if (broken < 3) {
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
      case 0: strides[broken] = 0; break;  // a broadcast: legal for inputs, an overlap for out
      case 1: strides[broken] = -strides[broken]; break;
      case 2: strides[broken] += 1; break;
      case 3: strides[broken] = in.ConsumeIntegral<int64_t>(); break;
      default: strides[broken] = pick_edge_or(in, strides[broken]); break;
    }
  }
  return {strides[0], strides[1], strides[2]};
}

// Writes an enum field from a plain int, also values outside the enum, as a C caller may.
template <class Enum>
void set_enum(Enum *field, int value) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized on the supported ABIs");
  std::memcpy(field, &value, sizeof value);
}

float pick_descale_value(FuzzedDataProvider &in) {
  const int exponent = in.ConsumeIntegralInRange<int>(-kDescaleExponentRange, kDescaleExponentRange);
  return std::ldexp(1.0f + in.ConsumeIntegralInRange<int>(0, 7) / 8.0f, exponent);
}

float pick_invalid_float(FuzzedDataProvider &in) {
  const float kInvalid[] = {0.0f, -1.0f, NAN, INFINITY, -INFINITY, 1e-40f /* subnormal */};
  return kInvalid[in.ConsumeIntegralInRange<int>(0, 5)];
}

// One FP8 descale (or, with BF16, mostly none), with its host array when it is of the device kind;
// *value is the valid value it carries (1 where it carries none).
void fuzz_descale(FuzzedDataProvider &in, bool fp8, int64_t batch, int64_t nheads_k, zyfa_descale *d,
                  Block *array, float *value) {
  *d = zyfa_descale{ZYFA_DESCALE_NONE, 0.0f, nullptr, 0, 0};
  *value = 1.0f;
  const int pick = in.ConsumeIntegralInRange<int>(0, 15);
  if (!fp8) {
    if (pick == 15) *d = zyfa_descale{ZYFA_DESCALE_HOST, 1.0f, nullptr, 0, 0};  // must be refused
    return;
  }
  if (pick < 7) {
    *value = pick_descale_value(in);
    *d = zyfa_descale{ZYFA_DESCALE_HOST, *value, nullptr, 0, 0};
  } else if (pick < 13) {
    d->kind = ZYFA_DESCALE_DEVICE;
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: d->batch_stride = d->head_stride = 0; break;
      case 1: d->batch_stride = nheads_k, d->head_stride = 1; break;
      case 2: d->batch_stride = 1, d->head_stride = batch; break;
      default:
        d->batch_stride = in.ConsumeIntegralInRange<int64_t>(-1, 4);
        d->head_stride = in.ConsumeIntegralInRange<int64_t>(-1, 4);
    }
    int64_t count = 1;
    if (d->batch_stride >= 0 && d->head_stride >= 0 && batch >= 1 && nheads_k >= 1) {
      count = (batch - 1) * d->batch_stride + (nheads_k - 1) * d->head_stride + 1;
    }
    const bool misaligned = in.ConsumeIntegralInRange<int>(0, 31) == 0;
    *array = Block(size_t(count) * sizeof(float) + (misaligned ? 2 : 0), 0);
    *value = pick_descale_value(in);
    for (int64_t i = 0; i < count; ++i) std::memcpy(array->data() + (misaligned ? 2 : 0) + 4 * i, value, 4);
    if (tracing()) std::fprintf(stderr, "  device descale array: %lld x %g\n", (long long)count, (double)*value);
    d->ptr = reinterpret_cast<const float *>(array->data() + (misaligned ? 2 : 0));
  } else if (pick == 13) {
    d->kind = ZYFA_DESCALE_NONE;  // missing: must be refused
  } else if (pick == 14) {
    set_enum(&d->kind, in.ConsumeBool() ? 3 : -1);
  } else {
    *d = zyfa_descale{ZYFA_DESCALE_HOST, pick_invalid_float(in), nullptr, 0, 0};
  }
}

// Everything one bounded input builds: the descriptor and the host blocks it points into.
struct BoundedCase {
  zyfa_attn_desc desc = ZYFA_ATTN_DESC_INIT;
  TensorShape tensors[kTensors];
  int64_t spans[kTensors] = {};  // elements, -1 where no real block backs the tensor
  Block blocks[kTensors];
  Block lse, descale_arrays[3];
  bool sane = true;  // finite inputs and scores within kSaneScoreRange: every output must be finite
  bool pointer_null = false;
  std::string values;  // how the inputs were drawn, for the trace
};

void poison_out(Block &out) {
  for (size_t i = 0; i + 1 < out.size(); i += 2) std::memcpy(out.data() + i, &kOutPoison, 2);
}
void poison_lse(Block &lse) {
  for (size_t i = 0; i + 3 < lse.size(); i += 4) std::memcpy(lse.data() + i, &kLsePoison, 4);
}

void build_bounded_case(FuzzedDataProvider &in, BoundedCase &c) {
  zyfa_attn_desc &d = c.desc;
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0) {
    const size_t kSizes[] = {0, 8, kFirstDescSize - 8, kFirstDescSize, sizeof(zyfa_attn_desc) + 8};
    d.struct_size = kSizes[in.ConsumeIntegralInRange<int>(0, 4)];
  }
  const int dtype_pick = in.ConsumeIntegralInRange<int>(0, 17);
  set_enum(&d.dtype, dtype_pick < 8 ? 0 : dtype_pick < 16 ? 1 : dtype_pick == 16 ? 2 : -1);
  const int layout_pick = in.ConsumeIntegralInRange<int>(0, 16);
  set_enum(&d.layout, layout_pick < 4 ? 0 : layout_pick < 8 ? 1 : layout_pick < 16 ? 2 : 3);
  auto small_extent = [&](int64_t most) {
    const int pick = in.ConsumeIntegralInRange<int>(0, 15);
    return pick == 15 ? -1 : pick == 14 ? 0 : 1 + pick % most;
  };
  d.batch = small_extent(3);
  d.nheads_k = small_extent(3);
  d.nheads = d.nheads_k * in.ConsumeIntegralInRange<int64_t>(1, 3) + (in.ConsumeIntegralInRange<int>(0, 15) == 0);
  const int64_t heads_total = std::max<int64_t>(1, d.batch) * std::max<int64_t>(1, d.nheads);
  const int64_t seq_cap = std::min<int64_t>(kMaxSeqlen, int64_t(std::sqrt(double(kMaxScores / heads_total))));
  d.seqlen = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegralInRange<int64_t>(-2, 0)
                                                        : in.ConsumeIntegralInRange<int64_t>(1, seq_cap);
  const int dims_pick = in.ConsumeIntegralInRange<int>(0, 8);
  const int64_t kBadDims[][2] = {{64, 64}, {192, 192}, {128, 192}, {0, 128}, {256, 128}};
  if (dims_pick < 5) d.d_qk = 128, d.d_v = 128;
  else if (dims_pick < 8) d.d_qk = 192, d.d_v = 128;
  else {
    const int64_t *bad = kBadDims[in.ConsumeIntegralInRange<int>(0, 4)];
    d.d_qk = bad[0], d.d_v = bad[1];
  }
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0) d.causal = in.ConsumeBool() ? 0 : 2;
  const int scale_pick = in.ConsumeIntegralInRange<int>(0, 15);
  if (scale_pick >= 8 && scale_pick < 13) d.softmax_scale = in.ConsumeFloatingPointInRange<float>(1e-3f, 4.0f);
  if (scale_pick == 13) d.softmax_scale = pick_invalid_float(in);
  if (scale_pick == 14) d.softmax_scale = FLT_MAX, c.sane = false;
  if (scale_pick == 15) d.softmax_scale = in.ConsumeFloatingPointInRange<float>(kSaneSoftmaxScale, 1e6f), c.sane = false;

  const bool fp8 = dtype_pick >= 8 && dtype_pick < 16;
  zyfa_descale *descales[3] = {&d.q_descale, &d.k_descale, &d.v_descale};
  float descale_values[3];
  for (int i = 0; i < 3; ++i) {
    fuzz_descale(in, fp8, d.batch, d.nheads_k, descales[i], &c.descale_arrays[i], &descale_values[i]);
  }

  // The tensors: shapes, strides, exact blocks, values.
  const int in_bytes = fp8 ? 1 : 2;
  const int64_t heads[kTensors] = {d.nheads, d.nheads_k, d.nheads_k, d.nheads};
  const int64_t dims[kTensors] = {d.d_qk, d.d_qk, d.d_v, d.d_v};
  zyfa_strides *given[kTensors] = {&d.q_strides, &d.k_strides, &d.v_strides, &d.out_strides};
  const ValueKind values = pick_value_kind(in);
  if (values == ValueKind::kRawBits) c.sane = false;
  const int exponent = in.ConsumeIntegralInRange<int>(-6, 6);
  const float magnitude = std::ldexp(1.0f, exponent);
  c.values = std::string(value_kind_name(values)) + " 2^" + std::to_string(exponent);
  // The largest score the inputs can make, in base-2 units.
  const double scale = d.softmax_scale != 0.0f ? d.softmax_scale : 1.0 / std::sqrt(double(d.d_qk > 0 ? d.d_qk : 1));
  const double score_bound = scale * kLog2e * descale_values[0] * descale_values[1] * double(magnitude) *
                             double(magnitude) * double(d.d_qk > 0 ? d.d_qk : 0);
  if (!(score_bound <= kSaneScoreRange)) c.sane = false;
  Random random(in.ConsumeIntegral<uint64_t>());
  for (int i = 0; i < kTensors; ++i) {
    TensorShape &t = c.tensors[i];
    t.heads = heads[i];
    t.dim = dims[i];
    t.element_bytes = i == kOut ? 2 : in_bytes;
    if (d.layout == ZYFA_LAYOUT_STRIDED) {
      t.strides = fuzz_strides(in, t, d.batch, d.seqlen);
      *given[i] = t.strides;
    } else {
      t.strides = named_layout_strides(d.layout == ZYFA_LAYOUT_BHSD, d.seqlen, t.heads, t.dim);
    }
    c.spans[i] = span_elements(t, d.batch, d.seqlen);
    const bool negative = t.strides.batch < 0 || t.strides.seq < 0 || t.strides.head < 0;
    if (c.spans[i] < 0 && !negative) continue;  // too large to back: stays NULL, must be refused
    // A negative stride gets a small dummy block: reading it by the strides would overflow it.
    const size_t bytes = c.spans[i] < 0 ? 64 : size_t(c.spans[i]) * t.element_bytes;
    c.blocks[i] = Block(bytes, 0);
    if (i == kOut) poison_out(c.blocks[i]);
    else fill_values(c.blocks[i].data(), int64_t(bytes) / t.element_bytes, t.element_bytes, values, magnitude, random);
  }
  const void **inputs[3] = {&d.q, &d.k, &d.v};
  for (int i = 0; i < 3; ++i) *inputs[i] = c.blocks[i].size() ? c.blocks[i].data() : nullptr;
  d.out = c.blocks[kOut].size() ? c.blocks[kOut].data() : nullptr;

  const int lse_pick = in.ConsumeIntegralInRange<int>(0, 15);
  if (lse_pick < 10 && d.batch > 0 && d.nheads > 0 && d.seqlen > 0) {
    c.lse = Block(size_t(d.batch * d.nheads * d.seqlen) * 4 + (lse_pick == 9 ? 2 : 0), 0);
    poison_lse(c.lse);
    d.lse = reinterpret_cast<float *>(c.lse.data() + (lse_pick == 9 ? 2 : 0));  // 9: misaligned
  } else if (lse_pick == 15 && d.out != nullptr) {
    d.lse = static_cast<float *>(d.out);  // overlaps out: must be refused
  }

  // Pointer faults: misaligned, NULL, or an output over an input.
  switch (in.ConsumeIntegralInRange<int>(0, 19)) {
    case 0: {
      const int t = in.ConsumeIntegralInRange<int>(0, kTensors - 1);
      if (c.blocks[t].size() > 8) {
        const void *shifted = c.blocks[t].data() + (in.ConsumeBool() ? 2 : 8);
        if (t == kOut) d.out = const_cast<void *>(shifted);
        else *inputs[t] = shifted;
      }
      break;
    }
    case 1: {
      const int t = in.ConsumeIntegralInRange<int>(0, kTensors - 1);
      if (t == kOut) d.out = nullptr;
      else *inputs[t] = nullptr;
      break;
    }
    case 2: d.out = const_cast<void *>(*inputs[in.ConsumeIntegralInRange<int>(0, 2)]); break;
    case 3: d.v = d.k; break;  // inputs may share memory: legal when v's span fits in k's block
    default: break;
  }
  // v may use k's block only where its span fits there. A v too large to back (span < 0) never does: its
  // strides would read far past k's block, so it goes back to its own block, NULL, and must be refused.
  const bool v_fits_k = c.spans[kV] >= 0 && c.blocks[kV].size() <= c.blocks[kK].size();
  if (d.v == d.k && d.k != nullptr && !v_fits_k) d.v = c.blocks[kV].size() ? c.blocks[kV].data() : nullptr;
  c.pointer_null = !d.q || !d.k || !d.v || !d.out;

  // P rounding: mostly the default; FP8 the three others (split, which the GPU refuses where TMA cannot map
  // q, k or v); rarely a value that BF16 refuses, or no zyfa_p_rounding at all (the first unknown value is 4).
  const int rounding_pick = in.ConsumeIntegralInRange<int>(0, 31);
  if (rounding_pick == 31) set_enum(&d.p_rounding, in.ConsumeBool() ? ZYFA_P_ROUNDING_SPLIT + 1 : -1);
  else if (rounding_pick == 30 || (fp8 && rounding_pick >= 16)) {
    constexpr zyfa_p_rounding kNamed[] = {ZYFA_P_ROUNDING_LEAN, ZYFA_P_ROUNDING_EXACT, ZYFA_P_ROUNDING_SPLIT};
    set_enum(&d.p_rounding, kNamed[in.ConsumeIntegralInRange<int>(0, 2)]);
  }
}

// The descriptor as a caller of its struct_size holds it: exactly those bytes (at least the struct_size
// field, at most the whole struct), so that a read past an older caller's struct is a heap overflow.
class CallerDesc {
 public:
  explicit CallerDesc(const zyfa_attn_desc &d)
      : size_(std::clamp(d.struct_size, sizeof(size_t), sizeof(zyfa_attn_desc))), bytes_(new unsigned char[size_]) {
    std::memcpy(bytes_.get(), &d, size_);
  }
  const zyfa_attn_desc *get() const { return reinterpret_cast<const zyfa_attn_desc *>(bytes_.get()); }

 private:
  size_t size_;
  std::unique_ptr<unsigned char[]> bytes_;
};

// The byte ranges a successful call may write (out, lse) must not overlap anything it reads or writes.
bool outputs_overlap(const BoundedCase &c) {
  struct Range {
    uintptr_t begin, end;
  };
  const zyfa_attn_desc &d = c.desc;
  std::vector<Range> read;
  const void *inputs[3] = {d.q, d.k, d.v};
  for (int i = 0; i < 3; ++i) {
    const auto b = reinterpret_cast<uintptr_t>(inputs[i]);
    read.push_back({b, b + uintptr_t(c.spans[i]) * c.tensors[i].element_bytes});
  }
  const auto out = reinterpret_cast<uintptr_t>(d.out);
  const Range out_range{out, out + uintptr_t(c.spans[kOut]) * 2};
  const auto lse = reinterpret_cast<uintptr_t>(d.lse);
  const Range lse_range{lse, lse + uintptr_t(d.lse ? d.batch * d.nheads * d.seqlen * 4 : 0)};
  auto overlap = [](const Range &a, const Range &b) { return a.begin < b.end && b.begin < a.end; };
  for (const Range &r : read) {
    if (overlap(out_range, r) || overlap(lse_range, r)) return true;
  }
  return overlap(out_range, lse_range);
}

// The offset of element (b, s, h, e) of a tensor, in elements.
int64_t offset_of(const TensorShape &t, int64_t b, int64_t s, int64_t h, int64_t e) {
  return b * t.strides.batch + s * t.strides.seq + h * t.strides.head + e;
}

template <class Visit>
void for_each_element(const zyfa_attn_desc &d, const TensorShape &t, Visit visit) {
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t s = 0; s < d.seqlen; ++s)
      for (int64_t h = 0; h < t.heads; ++h)
        for (int64_t e = 0; e < t.dim; ++e) visit(b, s, h, e);
}

// After a successful call: every logical output element written (finite when the case is sane), every
// gap between strided rows still poison, every LSE entry written.
void check_written(const BoundedCase &c) {
  const zyfa_attn_desc &d = c.desc;
  const TensorShape &t = c.tensors[kOut];
  const auto *out = static_cast<const uint8_t *>(d.out);
  std::vector<char> logical(size_t(c.spans[kOut]), 0);
  for_each_element(d, t, [&](int64_t b, int64_t s, int64_t h, int64_t e) {
    const int64_t at = offset_of(t, b, s, h, e);
    logical[size_t(at)] = 1;
    uint16_t bits;
    std::memcpy(&bits, out + 2 * at, 2);
    require(bits != kOutPoison, "zyfa_attn_fwd_host", "succeeded but left an output element unwritten");
    const bool finite = (bits & 0x7f80) != 0x7f80;
    require(finite || !c.sane, "zyfa_attn_fwd_host", "non-finite output from finite inputs and sane scales");
  });
  for (size_t i = 0; i < logical.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, out + 2 * i, 2);
    require(logical[i] || bits == kOutPoison, "zyfa_attn_fwd_host", "wrote between strided output rows");
  }
  if (d.lse == nullptr) return;
  for (int64_t i = 0; i < d.batch * d.nheads * d.seqlen; ++i) {
    uint32_t bits;
    std::memcpy(&bits, reinterpret_cast<const uint8_t *>(d.lse) + 4 * i, 4);
    require(bits != kLsePoison, "zyfa_attn_fwd_host", "succeeded but left an LSE entry unwritten");
  }
}

// The same problem on contiguous BSHD copies of the inputs must give the same bits: strides change
// addresses, never arithmetic.
void check_layout_invariance(const BoundedCase &c) {
  const zyfa_attn_desc &d = c.desc;
  zyfa_attn_desc flat = d;
  set_enum(&flat.layout, ZYFA_LAYOUT_BSHD);
  Block copies[kTensors];
  const void *sources[kTensors] = {d.q, d.k, d.v, d.out};
  for (int i = 0; i < kTensors; ++i) {
    const TensorShape &t = c.tensors[i];
    const int64_t count = d.batch * d.seqlen * t.heads * t.dim;
    copies[i] = Block(size_t(count) * t.element_bytes, 0);
    if (i == kOut) {
      poison_out(copies[i]);
      continue;
    }
    const auto *src = static_cast<const uint8_t *>(sources[i]);
    int64_t next = 0;
    for_each_element(d, t, [&](int64_t b, int64_t s, int64_t h, int64_t e) {
      std::memcpy(copies[i].data() + t.element_bytes * next++, src + t.element_bytes * offset_of(t, b, s, h, e),
                  size_t(t.element_bytes));
    });
  }
  flat.q = copies[kQ].data();
  flat.k = copies[kK].data();
  flat.v = copies[kV].data();
  flat.out = copies[kOut].data();
  Block lse;
  if (d.lse) {
    lse = Block(size_t(d.batch * d.nheads * d.seqlen) * 4, 0);
    flat.lse = reinterpret_cast<float *>(lse.data());
  }
  const zyfa_status s = zyfa_attn_fwd_host(&flat);
  check_status_contract(s, "zyfa_attn_fwd_host (contiguous copy)");
  require(s == ZYFA_STATUS_SUCCESS, "zyfa_attn_fwd_host", "refused the contiguous copy of an accepted problem");
  const TensorShape &t = c.tensors[kOut];
  const auto *strided = static_cast<const uint8_t *>(d.out);
  int64_t next = 0;
  for_each_element(d, t, [&](int64_t b, int64_t s_, int64_t h, int64_t e) {
    require(std::memcmp(strided + 2 * offset_of(t, b, s_, h, e), copies[kOut].data() + 2 * next++, 2) == 0,
            "zyfa_attn_fwd_host", "strided output differs from the contiguous one");
  });
  if (d.lse) {
    require(std::memcmp(d.lse, lse.data(), lse.size()) == 0, "zyfa_attn_fwd_host", "LSE differs with layout");
  }
}

// The blocks as they were before a call.
std::vector<std::vector<uint8_t>> snapshot_all(const BoundedCase &c) {
  std::vector<std::vector<uint8_t>> s;
  for (const Block &b : c.blocks) s.push_back(b.snapshot());
  s.push_back(c.lse.snapshot());
  for (const Block &b : c.descale_arrays) s.push_back(b.snapshot());
  return s;
}

bool blocks_unchanged(const BoundedCase &c, const std::vector<std::vector<uint8_t>> &before, bool inputs_only) {
  size_t i = 0;
  for (int t = 0; t < kTensors; ++t, ++i) {
    if (inputs_only && t == kOut) continue;
    if (!c.blocks[t].equals(before[i])) return false;
  }
  if (!inputs_only && !c.lse.equals(before[i])) return false;
  ++i;
  for (const Block &b : c.descale_arrays) {
    if (!b.equals(before[i++])) return false;
  }
  return true;
}

// Devices where prepare and the GPU call can only fail after validation (no CUDA device here).
bool device_status(zyfa_status s) {
  return s == ZYFA_STATUS_SUCCESS || s == ZYFA_STATUS_NO_DEVICE || s == ZYFA_STATUS_UNSUPPORTED_DEVICE ||
         s == ZYFA_STATUS_CUDA_ERROR || s == ZYFA_STATUS_OUT_OF_MEMORY;
}

// What prepare or the GPU call may return for a descriptor the host backend accepted, given the message it
// left: a device status, or split P refused where only kernels that round P once would take the problem
// (TMA cannot map q, k or v, or seqlen is past the FP8 kernels' limit): the host backend computes split P
// everywhere, the GPU only on its TMA/wgmma kernels (src/host/dispatch.cpp, check_split_p).
bool gpu_status_for_accepted(zyfa_status s, const std::string &message) {
  return device_status(s) ||
         (s == ZYFA_STATUS_BAD_ARGUMENT &&
          message.find("desc->p_rounding = ZYFA_P_ROUNDING_SPLIT (3): split P needs the TMA/wgmma kernels") == 0);
}

void run_bounded(FuzzedDataProvider &in) {
  BoundedCase c;
  build_bounded_case(in, c);
  trace_attention(c.desc, c.values.c_str());
  const auto before = snapshot_all(c);
  const CallerDesc caller(c.desc);
  const zyfa_status host = zyfa_attn_fwd_host(caller.get());
  check_status_contract(host, "zyfa_attn_fwd_host");
  if (host != ZYFA_STATUS_SUCCESS) {
    require(blocks_unchanged(c, before, false), "zyfa_attn_fwd_host", "failed but changed memory");
  } else {
    require(!c.pointer_null, "zyfa_attn_fwd_host", "accepted a NULL tensor");
    require(!outputs_overlap(c), "zyfa_attn_fwd_host", "accepted an output overlapping another tensor");
    require(blocks_unchanged(c, before, true), "zyfa_attn_fwd_host", "changed an input");
    check_written(c);
    check_layout_invariance(c);
  }
  // prepare and the GPU entry validate the same way; without a usable GPU they stop after validation and
  // must write nothing.
  if (!gpu_entries_stop_at_device_check()) return;
  const auto after = snapshot_all(c);
  const zyfa_status prepare = zyfa_attn_prepare(caller.get(), nullptr);
  check_status_contract(prepare, "zyfa_attn_prepare");
  const std::string prepare_message = zyfa_last_error();
  const zyfa_status gpu = zyfa_attn_fwd(caller.get(), nullptr);
  check_status_contract(gpu, "zyfa_attn_fwd");
  const std::string gpu_message = zyfa_last_error();
  if (host == ZYFA_STATUS_SUCCESS) {
    require(gpu_status_for_accepted(prepare, prepare_message), "zyfa_attn_prepare",
            "refused a descriptor the host backend accepted");
    require(gpu_status_for_accepted(gpu, gpu_message), "zyfa_attn_fwd",
            "refused a descriptor the host backend accepted");
  } else if (!c.pointer_null) {
    require(prepare == host, "zyfa_attn_prepare", "validates differently from zyfa_attn_fwd_host");
    require(gpu == host, "zyfa_attn_fwd", "validates differently from zyfa_attn_fwd_host");
  }
  if (gpu != ZYFA_STATUS_SUCCESS) {
    require(blocks_unchanged(c, after, false), "zyfa_attn_fwd", "failed but changed host memory");
  }
}

// Any int64 field, any pointer value; one tensor always NULL, so no call can reach memory.
void run_wild(FuzzedDataProvider &in) {
  zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;
  set_enum(&d.dtype, in.ConsumeIntegralInRange<int>(-1, 2));
  set_enum(&d.layout, in.ConsumeIntegralInRange<int>(-1, 3));
  int64_t *fields[] = {&d.batch, &d.seqlen, &d.nheads, &d.nheads_k, &d.d_qk, &d.d_v};
  const int64_t usual[] = {1, 4096, 8, 1, 128, 128};
  for (int i = 0; i < 6; ++i) *fields[i] = pick_edge_or(in, in.ConsumeBool() ? usual[i] : in.ConsumeIntegral<int64_t>());
  zyfa_strides *strides[] = {&d.q_strides, &d.k_strides, &d.v_strides, &d.out_strides};
  for (zyfa_strides *s : strides) {
    s->batch = pick_edge_or(in, in.ConsumeIntegral<int64_t>());
    s->seq = pick_edge_or(in, in.ConsumeIntegral<int64_t>());
    s->head = pick_edge_or(in, in.ConsumeIntegral<int64_t>());
  }
  d.softmax_scale = in.ConsumeFloatingPoint<float>();
  zyfa_descale *descales[] = {&d.q_descale, &d.k_descale, &d.v_descale};
  for (zyfa_descale *s : descales) {
    set_enum(&s->kind, in.ConsumeIntegralInRange<int>(-1, 3));
    s->value = in.ConsumeFloatingPoint<float>();
    s->ptr = reinterpret_cast<const float *>(uintptr_t(in.ConsumeIntegral<uint64_t>()) & ~uintptr_t(3));
    s->batch_stride = pick_edge_or(in, in.ConsumeIntegral<int64_t>());
    s->head_stride = pick_edge_or(in, in.ConsumeIntegral<int64_t>());
  }
  set_enum(&d.p_rounding, in.ConsumeIntegralInRange<int>(-1, ZYFA_P_ROUNDING_SPLIT + 1));  // 4: unknown
  // Pointers that are never dereferenced: near zero, near the top of the address space, or any value.
  auto fake_pointer = [&]() -> uintptr_t {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: return uintptr_t(kTensorAlignment);
      case 1: return ~uintptr_t(0) - 4 * kTensorAlignment + 1;
      default: return uintptr_t(in.ConsumeIntegral<uint64_t>());
    }
  };
  const void **tensors[] = {&d.q, &d.k, &d.v, const_cast<const void **>(&d.out)};
  const int null_tensor = in.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < 4; ++i) *tensors[i] = i == null_tensor ? nullptr : reinterpret_cast<const void *>(fake_pointer());
  d.lse = in.ConsumeBool() ? nullptr : reinterpret_cast<float *>(fake_pointer());
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) d.struct_size = in.ConsumeIntegral<size_t>();

  trace_attention(d, "none (wild)");
  const zyfa_status host = zyfa_attn_fwd_host(&d);
  check_status_contract(host, "zyfa_attn_fwd_host (wild)");
  require(host != ZYFA_STATUS_SUCCESS, "zyfa_attn_fwd_host", "accepted a descriptor with a NULL tensor");
  if (!gpu_entries_stop_at_device_check()) return;
  const zyfa_status gpu = zyfa_attn_fwd(&d, nullptr);
  check_status_contract(gpu, "zyfa_attn_fwd (wild)");
  require(gpu != ZYFA_STATUS_SUCCESS, "zyfa_attn_fwd", "accepted a descriptor with a NULL tensor");
  // Prepare ignores the pointers, so with no device it may pass validation; on a GPU machine it would
  // build plans for huge shapes, which this harness is not for.
  check_status_contract(zyfa_attn_prepare(&d, nullptr), "zyfa_attn_prepare (wild)");
}

}  // namespace

void fuzz_attention(FuzzedDataProvider &in) {
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) run_wild(in);
  else run_bounded(in);
}

}  // namespace zyfa::fuzz
