// The bytes a call's buffers occupy, as validation (validate.cpp) and the quantizer's checks
// (quantize_api.cpp) both see them: element sizes, the alignment the kernels' loads need, and address ranges.
#ifndef ZYFA_HOST_BYTE_RANGE_HPP_
#define ZYFA_HOST_BYTE_RANGE_HPP_

#include <cstdint>

namespace zyfa {

constexpr int64_t kBf16Bytes = 2;
constexpr int64_t kFp8Bytes = 1;
// Tensor base pointers (and non-unit strides) are 16-byte granular: the kernels load rows with TMA and
// 16-byte vectors.
constexpr int64_t kTensorAlignmentBytes = 16;

inline bool misaligned(const void *p, int64_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % uint64_t(alignment) != 0;
}

// The addresses [begin, end).
struct AddressRange {
  uintptr_t begin = 0, end = 0;
  bool overlaps(const AddressRange &o) const { return begin < o.end && o.begin < end; }
};

// The `bytes` bytes at p, or false where they would wrap around the address space.
inline bool address_range(const void *p, uint64_t bytes, AddressRange *out) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  if (begin + bytes < begin) return false;
  *out = {begin, begin + bytes};
  return true;
}

}  // namespace zyfa

#endif  // ZYFA_HOST_BYTE_RANGE_HPP_
