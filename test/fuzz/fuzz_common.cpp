#include "fuzz_common.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "kernels/numerics.h"

namespace zyfa::fuzz {

void fail_finding(const char *what, const char *detail) {
  std::fprintf(stderr, "zyfa fuzz finding: %s %s\n", what, detail);
  std::abort();
}

Block::Block(size_t bytes, uint8_t fill) : size_(bytes) {
  void *p = nullptr;
  // posix_memalign takes any size, so the block ends exactly at `bytes` (ASan's redzone starts there).
  require(posix_memalign(&p, kTensorAlignment, bytes == 0 ? 1 : bytes) == 0, "harness: out of host memory");
  data_ = static_cast<uint8_t *>(p);
  std::memset(data_, fill, bytes);
}

Block::~Block() { std::free(data_); }

Block::Block(Block &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

Block &Block::operator=(Block &&other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

bool Block::equals(const std::vector<uint8_t> &snapshot) const {
  return snapshot.size() == size_ && (size_ == 0 || std::memcmp(snapshot.data(), data_, size_) == 0);
}

void check_status_contract(zyfa_status status, const char *entry) {
  require(status >= ZYFA_STATUS_SUCCESS && status <= ZYFA_STATUS_INTERNAL, entry, "returned an undeclared status");
  const char *name = zyfa_status_string(status);
  require(name != nullptr && std::strncmp(name, "ZYFA_STATUS_", 12) == 0, entry, "status string does not name it");
  require(status != ZYFA_STATUS_INTERNAL, entry, zyfa_last_error());
  const char *message = zyfa_last_error();
  require(message != nullptr, entry, "zyfa_last_error() returned NULL");
  if (status == ZYFA_STATUS_SUCCESS) {
    require(message[0] == '\0', entry, "succeeded but left a message");
  } else {
    require(message[0] != '\0', entry, "failed without a message");
  }
}

bool tracing() {
  static const bool on = std::getenv("ZYFA_FUZZ_TRACE") != nullptr;
  return on;
}

void trace_attention(const zyfa_attn_desc &d, const char *values) {
  if (!tracing()) return;
  int dtype, layout, p_rounding, kinds[3];
  std::memcpy(&dtype, &d.dtype, sizeof dtype);
  std::memcpy(&layout, &d.layout, sizeof layout);
  std::memcpy(&p_rounding, &d.p_rounding, sizeof p_rounding);
  const zyfa_descale *descales[3] = {&d.q_descale, &d.k_descale, &d.v_descale};
  for (int i = 0; i < 3; ++i) std::memcpy(&kinds[i], &descales[i]->kind, sizeof kinds[i]);
  std::fprintf(stderr,
               "attention: struct_size %zu dtype %d layout %d batch %lld seqlen %lld heads %lld/%lld d %lld/%lld "
               "scale %g causal %d p_rounding %d lse %p values %s\n"
               "  q %p {%lld %lld %lld} k %p {%lld %lld %lld} v %p {%lld %lld %lld} out %p {%lld %lld %lld}\n",
               d.struct_size, dtype, layout, (long long)d.batch, (long long)d.seqlen, (long long)d.nheads,
               (long long)d.nheads_k, (long long)d.d_qk, (long long)d.d_v, (double)d.softmax_scale, (int)d.causal,
               p_rounding, (void *)d.lse, values, d.q, (long long)d.q_strides.batch, (long long)d.q_strides.seq,
               (long long)d.q_strides.head, d.k, (long long)d.k_strides.batch, (long long)d.k_strides.seq,
               (long long)d.k_strides.head, d.v, (long long)d.v_strides.batch, (long long)d.v_strides.seq,
               (long long)d.v_strides.head, d.out, (long long)d.out_strides.batch, (long long)d.out_strides.seq,
               (long long)d.out_strides.head);
  for (int i = 0; i < 3; ++i) {
    std::fprintf(stderr, "  descale %d: kind %d value %g ptr %p strides %lld %lld\n", i, kinds[i],
                 (double)descales[i]->value, (const void *)descales[i]->ptr, (long long)descales[i]->batch_stride,
                 (long long)descales[i]->head_stride);
  }
}

void trace_quantize(const zyfa_quantize_desc &d, const char *values) {
  if (!tracing()) return;
  int rotation;
  std::memcpy(&rotation, &d.rotation, sizeof rotation);
  std::fprintf(stderr,
               "quantize: struct_size %zu src %p dst %p descale %p n_rows %lld dim %lld row_stride %lld rotation %d "
               "seed %llu values %s\n",
               d.struct_size, d.src, d.dst, (void *)d.descale, (long long)d.n_rows, (long long)d.dim,
               (long long)d.row_stride, rotation, (unsigned long long)d.rotation_seed, values);
}

const char *value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kZero: return "zero";
    case ValueKind::kUniform: return "uniform";
    case ValueKind::kRawBits: return "raw bits";
  }
  return "?";
}

uint64_t Random::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

float Random::symmetric() { return float(int64_t(next() >> 40) - (int64_t(1) << 23)) * 0x1p-23f; }

void fill_values(uint8_t *dst, int64_t count, int element_bytes, ValueKind kind, float magnitude, Random &random) {
  for (int64_t i = 0; i < count; ++i) {
    if (element_bytes == 1) {
      uint8_t code = 0;
      if (kind == ValueKind::kRawBits) code = uint8_t(random.next());
      if (kind == ValueKind::kUniform) code = numerics::e4m3_code(magnitude * random.symmetric());
      dst[i] = code;
    } else {
      uint16_t bits = 0;
      if (kind == ValueKind::kRawBits) bits = uint16_t(random.next());
      if (kind == ValueKind::kUniform) bits = numerics::bf16_bits(magnitude * random.symmetric());
      std::memcpy(dst + 2 * i, &bits, 2);
    }
  }
}

ValueKind pick_value_kind(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return ValueKind::kZero;
    case 1: return ValueKind::kRawBits;
    default: return ValueKind::kUniform;
  }
}

int64_t pick_edge_or(FuzzedDataProvider &in, int64_t usual) {
  constexpr int64_t kEdges[] = {0,
                                -1,
                                std::numeric_limits<int64_t>::min(),
                                std::numeric_limits<int64_t>::max(),
                                int64_t(std::numeric_limits<int32_t>::max()),
                                int64_t(1) << 31,
                                int64_t(1) << 32,
                                int64_t(1) << 62};
  constexpr int kEdgeCount = int(sizeof kEdges / sizeof kEdges[0]);
  // One pick in four is an edge.
  const int pick = in.ConsumeIntegralInRange<int>(0, 4 * kEdgeCount - 1);
  return pick < kEdgeCount ? kEdges[pick] : usual;
}

}  // namespace zyfa::fuzz
