// The parameter block of the emitted FP8 attention kernels: the contract between the emitter (which
// reads each field at its offsetof) and the host launcher (src/host/fp8_asm_attention.cpp, which fills
// it). Plain integers and floats only (and the tensor maps as bytes), so its layout is the same in both
// programs.
#ifndef ZYFA_ASMGEN_FP8_KERNEL_PARAMS_H_
#define ZYFA_ASMGEN_FP8_KERNEL_PARAMS_H_

#include <cstddef>
#include <cstdint>

#include "kernels/numerics.h"

namespace zyfa::asmgen {

// One descale: `value` where ptr == 0, else the float at ptr + batch * batch_stride + kv_head * head_stride.
struct Fp8DescaleParam {
  uint64_t ptr;          // device address, or 0
  int64_t batch_stride;  // elements
  int64_t head_stride;   // elements
  float value;
  uint32_t unused;
};

// A CUtensorMap's bytes (the driver's opaque 128-byte, 128-aligned object), so that this header needs no
// CUDA header; the host launcher static_asserts that the sizes agree.
struct alignas(128) Fp8TensorMap {
  uint64_t words[16];
};

// Bytes of one column block of Q and K in the wgmma schedule's shared memory, which is also the inner
// extent of their TMA boxes and the span of their swizzle: 128 where d_qk is whole 128-byte rows (the
// widest swizzle), else 64 (d_qk = 192 is three blocks).
constexpr int fp8_qk_block_bytes(int d_qk) { return d_qk % 128 == 0 ? 128 : 64; }

// Query rows per consumer warpgroup of the wgmma schedule: the M of a wgmma.
constexpr int kRowsPerConsumer = 64;

// How many rows before tile * tile_rows query tile `tile` starts: its first row is tile * tile_rows - shift.
// Tiles then end at the sequence's last row, so that the tile that overhangs the sequence is tile 0, which
// the causal mask gives one or two key blocks, rather than the last tile, which takes every key block while
// the consumers whose rows lie past the sequence idle (three consumers: 192-row tiles, which no power-of-two
// seqlen fills). A multiple of kRowsPerConsumer, so that a consumer's rows lie either all before row 0 (it
// idles) or all from row 0 on. Tiles of whole key blocks keep 0: their kernels take a tile's key blocks from
// its index (fp8_tiles_may_shift).
constexpr bool fp8_tiles_may_shift(int64_t tile_rows) { return tile_rows % numerics::kKeyBlock != 0; }
constexpr int32_t fp8_query_tile_shift(int64_t seqlen, int64_t tile_rows) {
  if (!fp8_tiles_may_shift(tile_rows)) return 0;
  const int64_t tiles = (seqlen + tile_rows - 1) / tile_rows;
  return int32_t((tiles * tile_rows - seqlen) / kRowsPerConsumer * kRowsPerConsumer);
}
static_assert(fp8_query_tile_shift(4096, 192) == 128 && fp8_query_tile_shift(8192, 192) == 64 &&
                  fp8_query_tile_shift(7, 192) == 128 && fp8_query_tile_shift(4096, 128) == 0,
              "the overhang, in whole consumers");

struct Fp8AttentionParams {
  // TMA maps of q, k (boxes of fp8_qk_block_bytes x 128 rows, swizzled as wide) and v (128 x 128, 128-byte
  // swizzle) over (dim, seqlen, heads, batch): read by the wgmma schedule only. First, for their alignment.
  Fp8TensorMap q_map, k_map, v_map;
  // Device addresses. q, k, v hold e4m3 codes; out bf16; lse float (or 0: not written); jobs zyfa::Job.
  uint64_t q, k, v, out, lse, jobs;
  // Element strides (batch, sequence, head) of each tensor; the last dimension is contiguous.
  int64_t q_batch_stride, q_seq_stride, q_head_stride;
  int64_t k_batch_stride, k_seq_stride, k_head_stride;
  int64_t v_batch_stride, v_seq_stride, v_head_stride;
  int64_t out_batch_stride, out_seq_stride, out_head_stride;
  Fp8DescaleParam q_descale, k_descale, v_descale;
  float score_scale;  // softmax_scale * log2(e), rounded to fp32 as numerics.h orders it
  int32_t seqlen;
  int32_t nheads;
  int32_t group;      // nheads / nheads_k
  int32_t n_jobs;
  int32_t tile_row_shift;  // fp8_query_tile_shift(seqlen, the kernel's query tile rows); a kernel may ignore
                           // it (Variant::shifts_tiles), and its last tile then overhangs instead
};

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_FP8_KERNEL_PARAMS_H_
