// Fuzzes zyfa_quantize_desc through zyfa_quantize_fp8_host and zyfa_quantize_fp8. Bounded inputs get real
// blocks of exactly the size the descriptor spans; findings are crashes, sanitizer reports, a failed call
// that changed memory, or a successful one that left a code unwritten, changed its source, wrote a
// descale that is neither a power of two nor the NaN of non-finite input, or differs bit for bit from the
// same rows copied contiguously. Huge extents get pointers near the top of the address space, where the
// source must be refused as wrapping around.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "fuzz_targets.hpp"

namespace zyfa::fuzz {
namespace {

// No quantizer writes this code: NaN becomes 0x7f, and saturation 0x7e or 0xfe.
constexpr uint8_t kDstPoison = 0xff;
constexpr uint32_t kDescalePoison = 0x7fa00001u;  // a signalling NaN
constexpr uint8_t kNanCode = 0x7f;
// Source magnitudes from this power of two up may overflow fp32 inside a rotation (a NaN descale then).
constexpr int kRotationOverflowExponent = 100;
// Fake pointers start this far below the top of the address space: a larger source must wrap around.
constexpr uintptr_t kTopWindowBytes = uintptr_t(1) << 20;
constexpr int64_t kMaxRows = 64;

bool power_of_two(float x) {
  int e;
  return x > 0.0f && std::isnormal(x) && std::frexp(x, &e) == 0.5f;
}

struct QuantizeCase {
  zyfa_quantize_desc desc = ZYFA_QUANTIZE_DESC_INIT;
  Block src, dst, descale;
  int64_t row_stride = 0;  // resolved as validation would: 0 means dim
  bool may_overflow = false;  // raw bits or huge values through a rotation: a NaN descale is legitimate
  std::string values;         // how the inputs were drawn, for the trace
};

// Source elements the descriptor spans (in bytes when multiplied by 2), or -1 where it does not describe
// a block (negative or too large).
int64_t source_elements(const zyfa_quantize_desc &d, int64_t row_stride) {
  if (d.n_rows < 1 || d.dim < 1 || row_stride < d.dim || d.n_rows > kMaxRows) return -1;
  int64_t elements = 0;
  if (__builtin_mul_overflow(d.n_rows - 1, row_stride, &elements) || __builtin_add_overflow(elements, d.dim, &elements) ||
      elements > int64_t(kMaxBlockBytes / 2)) {
    return -1;
  }
  return elements;
}

void build_case(FuzzedDataProvider &in, QuantizeCase &c) {
  zyfa_quantize_desc &d = c.desc;
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0) d.struct_size = in.ConsumeBool() ? 8 : sizeof(d) + 8;
  const int rows_pick = in.ConsumeIntegralInRange<int>(0, 15);
  d.n_rows = rows_pick < 14 ? in.ConsumeIntegralInRange<int64_t>(1, kMaxRows) : in.ConsumeIntegralInRange<int64_t>(-1, 0);
  const int64_t kDims[] = {8, 16, 64, 120, 128, 128, 136, 192, 192, 200, 0, -8, 7, 12};
  d.dim = kDims[in.ConsumeIntegralInRange<int>(0, int(sizeof kDims / sizeof kDims[0]) - 1)];
  const int rotation_pick = in.ConsumeIntegralInRange<int>(0, 7);
  const int rotation = rotation_pick < 4 ? 0 : rotation_pick < 7 ? 1 : (in.ConsumeBool() ? 2 : -1);
  std::memcpy(&d.rotation, &rotation, sizeof rotation);
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: case 1: d.row_stride = 0; break;
    case 2: d.row_stride = d.dim; break;
    case 3: case 4: d.row_stride = d.dim + 8 * in.ConsumeIntegralInRange<int64_t>(1, 3); break;
    case 5: d.row_stride = d.dim + 1; break;
    case 6: d.row_stride = d.dim - 8; break;
    default: d.row_stride = pick_edge_or(in, -8); break;
  }
  d.rotation_seed = in.ConsumeIntegral<uint64_t>();
  c.row_stride = d.row_stride == 0 ? d.dim : d.row_stride;

  const ValueKind values = pick_value_kind(in);
  const int exponent = in.ConsumeIntegralInRange<int>(-140, 127);
  c.may_overflow = values == ValueKind::kRawBits || (rotation != 0 && exponent >= kRotationOverflowExponent);
  c.values = std::string(value_kind_name(values)) + " 2^" + std::to_string(exponent);
  Random random(in.ConsumeIntegral<uint64_t>());
  int64_t elements = source_elements(d, c.row_stride);
  // A valid stride too long to back with a block: one row spans only dim elements, whatever the stride.
  if (elements < 0 && d.n_rows > 1 && d.dim >= 1 && c.row_stride >= d.dim) {
    d.n_rows = 1;
    elements = source_elements(d, c.row_stride);
  }
  c.src = Block(elements > 0 ? size_t(elements) * 2 : 64, 0);
  fill_values(c.src.data(), int64_t(c.src.size()) / 2, 2, values, std::ldexp(1.0f, exponent), random);
  const int64_t dst_bytes = elements > 0 ? d.n_rows * d.dim : 64;
  c.dst = Block(size_t(dst_bytes), kDstPoison);
  c.descale = Block(sizeof(float), 0);
  std::memcpy(c.descale.data(), &kDescalePoison, 4);
  d.src = c.src.data();
  d.dst = c.dst.data();
  d.descale = reinterpret_cast<float *>(c.descale.data());

  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: d.src = nullptr; break;
    case 1: d.dst = nullptr; break;
    case 2: d.descale = nullptr; break;
    case 3: d.src = c.src.data() + 2; break;   // misaligned
    case 4: d.dst = c.dst.data() + 8; break;   // misaligned
    case 5: d.descale = reinterpret_cast<float *>(c.dst.data()); break;  // overlaps dst
    case 6: d.dst = c.src.data(); break;       // overlaps src
    default: break;
  }
}

bool unchanged(const QuantizeCase &c, const std::vector<uint8_t> (&before)[3]) {
  return c.src.equals(before[0]) && c.dst.equals(before[1]) && c.descale.equals(before[2]);
}

void check_success(const QuantizeCase &c, const std::vector<uint8_t> &src_before) {
  const zyfa_quantize_desc &d = c.desc;
  require(c.src.equals(src_before), "zyfa_quantize_fp8_host", "changed its source");
  float descale;
  std::memcpy(&descale, d.descale, 4);
  const auto *dst = static_cast<const uint8_t *>(d.dst);
  const int64_t count = d.n_rows * d.dim;
  if (std::isnan(descale)) {
    require(c.may_overflow, "zyfa_quantize_fp8_host", "NaN descale from finite, moderate input");
    for (int64_t i = 0; i < count; ++i) require(dst[i] == kNanCode, "zyfa_quantize_fp8_host", "NaN descale, code not NaN");
  } else {
    require(power_of_two(descale), "zyfa_quantize_fp8_host", "descale is not a power of two");
    for (int64_t i = 0; i < count; ++i) require(dst[i] != kDstPoison, "zyfa_quantize_fp8_host", "left a code unwritten");
  }
  // The same rows copied contiguously give the same codes and descale.
  Block flat(size_t(count) * 2, 0), flat_dst(size_t(count), kDstPoison), flat_descale(4, 0);
  for (int64_t r = 0; r < d.n_rows; ++r) {
    std::memcpy(flat.data() + 2 * r * d.dim, static_cast<const uint8_t *>(d.src) + 2 * r * c.row_stride, size_t(2 * d.dim));
  }
  zyfa_quantize_desc f = d;
  f.src = flat.data();
  f.dst = flat_dst.data();
  f.descale = reinterpret_cast<float *>(flat_descale.data());
  f.row_stride = 0;
  const zyfa_status s = zyfa_quantize_fp8_host(&f);
  check_status_contract(s, "zyfa_quantize_fp8_host (contiguous copy)");
  require(s == ZYFA_STATUS_SUCCESS, "zyfa_quantize_fp8_host", "refused the contiguous copy of accepted rows");
  require(std::memcmp(flat_dst.data(), dst, size_t(count)) == 0, "zyfa_quantize_fp8_host", "codes depend on row_stride");
  require(std::memcmp(flat_descale.data(), d.descale, 4) == 0, "zyfa_quantize_fp8_host", "descale depends on row_stride");
}

void run_bounded(FuzzedDataProvider &in) {
  QuantizeCase c;
  build_case(in, c);
  trace_quantize(c.desc, c.values.c_str());
  const std::vector<uint8_t> before[3] = {c.src.snapshot(), c.dst.snapshot(), c.descale.snapshot()};
  const zyfa_status host = zyfa_quantize_fp8_host(&c.desc);
  check_status_contract(host, "zyfa_quantize_fp8_host");
  if (host == ZYFA_STATUS_SUCCESS) check_success(c, before[0]);
  else require(unchanged(c, before), "zyfa_quantize_fp8_host", "failed but changed memory");
  // The GPU entry validates the same way and, with no usable device, writes nothing.
  if (!gpu_entries_stop_at_device_check()) return;
  const std::vector<uint8_t> after[3] = {c.src.snapshot(), c.dst.snapshot(), c.descale.snapshot()};
  const zyfa_status gpu = zyfa_quantize_fp8(&c.desc, nullptr);
  check_status_contract(gpu, "zyfa_quantize_fp8");
  if (host != ZYFA_STATUS_SUCCESS) require(gpu == host, "zyfa_quantize_fp8", "validates differently from the host twin");
  if (gpu != ZYFA_STATUS_SUCCESS) require(unchanged(c, after), "zyfa_quantize_fp8", "failed but changed memory");
}

// Extents far beyond any block: pointers near the top of the address space, so a source of a megabyte
// or more wraps around and must be refused; nothing is dereferenced when it is.
void run_huge(FuzzedDataProvider &in) {
  zyfa_quantize_desc d = ZYFA_QUANTIZE_DESC_INIT;
  d.n_rows = pick_edge_or(in, in.ConsumeIntegral<int64_t>());
  d.dim = pick_edge_or(in, in.ConsumeBool() ? 128 : in.ConsumeIntegral<int64_t>());
  d.row_stride = pick_edge_or(in, in.ConsumeIntegral<int64_t>());
  const int rotation = in.ConsumeIntegralInRange<int>(-1, 2);
  std::memcpy(&d.rotation, &rotation, sizeof rotation);
  const uintptr_t top = ~uintptr_t(0) - kTopWindowBytes + 1;
  d.src = reinterpret_cast<const void *>(top);
  d.dst = reinterpret_cast<void *>(top - 2 * kTopWindowBytes);
  d.descale = reinterpret_cast<float *>(top - 4 * kTopWindowBytes);
  const int64_t row_stride = d.row_stride == 0 ? d.dim : d.row_stride;
  __int128 src_bytes = 0;
  if (d.n_rows >= 1 && d.dim >= 1) src_bytes = (__int128(d.n_rows - 1) * row_stride + d.dim) * 2;
  // A source small enough to fit below the top could be valid, and the host twin would read it.
  if (src_bytes < __int128(kTopWindowBytes)) return;
  trace_quantize(d, "none (huge)");
  const zyfa_status s = zyfa_quantize_fp8_host(&d);
  check_status_contract(s, "zyfa_quantize_fp8_host (huge)");
  require(s != ZYFA_STATUS_SUCCESS, "zyfa_quantize_fp8_host", "accepted a source that wraps around");
  if (gpu_entries_stop_at_device_check()) {
    const zyfa_status gpu = zyfa_quantize_fp8(&d, nullptr);
    check_status_contract(gpu, "zyfa_quantize_fp8 (huge)");
    require(gpu != ZYFA_STATUS_SUCCESS, "zyfa_quantize_fp8", "accepted a source that wraps around");
  }
}

}  // namespace

void fuzz_quantize(FuzzedDataProvider &in) {
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) run_huge(in);
  else run_bounded(in);
}

}  // namespace zyfa::fuzz
