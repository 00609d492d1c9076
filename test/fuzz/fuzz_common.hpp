// What the fuzz targets share: exact-size host blocks (so AddressSanitizer flags the first byte past a
// tensor), snapshots that prove a failed call wrote nothing, the contract every status must keep, and a
// cheap generator of input values seeded from the fuzz bytes.
#ifndef ZYFA_TEST_FUZZ_FUZZ_COMMON_HPP_
#define ZYFA_TEST_FUZZ_FUZZ_COMMON_HPP_

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "zyfa/zyfa.h"

namespace zyfa::fuzz {

// The largest host block a fuzz input may ask for; larger tensors are passed as NULL (the call must fail).
constexpr size_t kMaxBlockBytes = size_t(16) << 20;
// The alignment validation asks of tensor pointers.
constexpr size_t kTensorAlignment = 16;

// A finding: prints what broke and aborts, so libFuzzer saves the input as a crash.
[[noreturn]] void fail_finding(const char *what, const char *detail);
inline void require(bool ok, const char *what, const char *detail = "") {
  if (!ok) fail_finding(what, detail);
}

// A heap block of exactly `bytes` bytes, 16-byte aligned, filled with `fill`. One block per tensor: a read
// or write one byte past it is a heap-buffer-overflow under ASan.
class Block {
 public:
  Block() = default;
  Block(size_t bytes, uint8_t fill);
  ~Block();
  Block(const Block &) = delete;
  Block &operator=(const Block &) = delete;
  Block(Block &&other) noexcept;
  Block &operator=(Block &&other) noexcept;

  uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  std::vector<uint8_t> snapshot() const { return std::vector<uint8_t>(data_, data_ + size_); }
  bool equals(const std::vector<uint8_t> &snapshot) const;

 private:
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

// Every status returned by an entry point keeps the public contract: a declared value, never INTERNAL
// (a bug by its own definition), a status string that names it, and zyfa_last_error() empty exactly on
// success.
void check_status_contract(zyfa_status status, const char *entry);

// With ZYFA_FUZZ_TRACE set, every descriptor is printed before the calls, for the triage of a saved crash
// (run the target on the crash file alone).
bool tracing();
void trace_attention(const zyfa_attn_desc &d, const char *values);
void trace_quantize(const zyfa_quantize_desc &d, const char *values);

// splitmix64: a fast generator of input values; the fuzz bytes choose its seed, not every value.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [-1, 1).
  float symmetric();

 private:
  uint64_t state_;
};

// How input values are drawn.
enum class ValueKind {
  kZero,      // all zero
  kUniform,   // finite values of one magnitude, chosen by the input
  kRawBits,   // any bit pattern, NaN and infinity included: only crashes and memory errors are findings
};

const char *value_kind_name(ValueKind kind);

// Fills `count` BF16 (element_bytes 2) or FP8 e4m3 (1) values at `dst`; finite unless kRawBits.
void fill_values(uint8_t *dst, int64_t count, int element_bytes, ValueKind kind, float magnitude, Random &random);

// The picks the targets make from the fuzz bytes.
ValueKind pick_value_kind(FuzzedDataProvider &in);
// A value that is usually valid and sometimes a boundary: int64 extremes, 0, -1, 2^31, 2^32.
int64_t pick_edge_or(FuzzedDataProvider &in, int64_t usual);

}  // namespace zyfa::fuzz

#endif  // ZYFA_TEST_FUZZ_FUZZ_COMMON_HPP_
