// The Hopper kernels' output unit: each output row is written in 16-byte chunks of 8 bf16 (a 4-byte word per
// lane measured 0.93x at 2K, bench/NOTES-bf16.md "16-byte epilogue stores"). Shared by validation
// (src/host/problem.hpp asks every output row to start on a chunk) and the FP8 emitter's st.global.v4.
#ifndef ZYFA_KERNELS_OUT_CHUNK_H_
#define ZYFA_KERNELS_OUT_CHUNK_H_

#include <cstdint>

namespace zyfa {

constexpr int64_t kOutChunkBytes = 16;
constexpr int64_t kOutChunkElems = kOutChunkBytes / 2;  // bf16

}  // namespace zyfa

#endif  // ZYFA_KERNELS_OUT_CHUNK_H_
