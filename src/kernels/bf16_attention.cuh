// The fast BF16 causal forward kernel for sm_90a, one skeleton for d = 128 and for d_qk = 192 / d_v = 128.
//
// For one query tile of numerics::kQueryTile rows and its key blocks kb = 0..tile (numerics::kKeyBlock keys
// each, the diagonal block last), every query row runs numerics.h's recurrence:
//   S    = Q K_kb^T                                   (wgmma, fp32)
//   bmax = c * rowmax(S);  if m = -inf or bmax > m + tau:  alpha = 2^(m - bmax), m = bmax
//          (after a tile's first block, only where P against the running m shows that m could move)
//   P    = bf16(2^(S c - m))                          (one FFMA and one EX2 per score, rounded once)
//   O    = alpha O + P V_kb,   l = alpha l + rowsum(P) (the rounded P, summed by the tensor cores as P x ones)
//   out  = bf16(O * output_scale(l)),  lse = (m + log2 l) ln 2
//
// The CTA is three warpgroups. The producer issues TMA copies of Q, K and V tiles into shared memory and
// completes them on mbarriers. Two consumer warpgroups own 64 query rows each and share every K and V
// stage. They take turns issuing their matrix products (named barriers), so one warpgroup's softmax runs
// while the other's wgmmas keep the tensor cores busy. Inside a warpgroup S_kb = Q K_kb^T and
// O += P_{kb-1} V_{kb-1} are issued together, but a warp stalls at each wgmma until the tensor pipe takes it,
// so the issue lasts about as long as the products run and the softmax of S_kb follows it: the overlap is
// between the warpgroups, and a softmax longer than the other warpgroup's products idles the tensor pipe
// (bench/NOTES.md, session 13: a timeline of the key loop).
// A persistent grid walks the plan's pair-balanced job table. Where kKvCtas = 2, a job is two query heads of one
// kv head, run by the two CTAs of a cluster in step: each CTA's producer copies half of every K and V tile
// and multicasts it into both, so K and V cross from L2 once per pair of heads.
#ifndef ZYFA_KERNELS_BF16_ATTENTION_CUH_
#define ZYFA_KERNELS_BF16_ATTENTION_CUH_

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/hopper/cluster.cuh"
#include "kernels/hopper/mbarrier.cuh"
#include "kernels/hopper/tma.cuh"
#include "kernels/hopper/warpgroup.cuh"
#include "kernels/hopper/wgmma.cuh"
#include "kernels/job.h"
#include "kernels/numerics.h"

namespace zyfa::kernels::bf16 {

namespace nx = zyfa::numerics;
namespace hw = zyfa::hopper;

// ---------------------------------------------------------------- shapes
// The largest dynamic shared memory a CTA may use on sm_90 (227 KiB).
constexpr int kMaxSharedBytes = 227 * 1024;

template <int kHeadDimQK_, int kKvCtas_ = 1>
struct TileShape {
  static constexpr int kHeadDimQK = kHeadDimQK_;
  static constexpr int kHeadDimV = 128;
  static constexpr int kQueryRows = nx::kQueryTile;
  static constexpr int kKeyRows = nx::kKeyBlock;
  static constexpr int kConsumerWarpgroups = 2;
  static constexpr int kRowsPerConsumer = kQueryRows / kConsumerWarpgroups;  // the M of wgmma
  static constexpr int kMmaM = 64;
  static constexpr int kMmaN = 128;
  static constexpr int kMmaK = 16;
  // A tile is stored as column blocks of 64 bf16 (one 128-byte swizzled row each), each on its own slot of
  // shared memory (SharedLayout).
  static constexpr int kColumnBlock = hw::kSwizzleBytes / 2;
  static constexpr int kQkBlocks = kHeadDimQK / kColumnBlock;  // column blocks of Q and of K
  static constexpr int kVBlocks = kHeadDimV / kColumnBlock;
  static constexpr int kQkSteps = kHeadDimQK / kMmaK;  // k-steps of S = Q K^T
  static constexpr int kPvSteps = kKeyRows / kMmaK;    // k-steps of O += P V
  static constexpr int kStages = 2;                    // K and V buffers each
  static constexpr int kKvCtas = kKvCtas_;             // CTAs of a cluster that share every K and V copy
  static constexpr uint32_t kQTileBytes = uint32_t(kQueryRows) * kHeadDimQK * 2;
  static constexpr uint32_t kKTileBytes = uint32_t(kKeyRows) * kHeadDimQK * 2;
  static constexpr uint32_t kVTileBytes = uint32_t(kKeyRows) * kHeadDimV * 2;

  static_assert(kHeadDimQK == 128 || kHeadDimQK == 192, "the BF16 kernel serves d_qk = 128 and 192");
  static_assert(kKvCtas == 1 || kKvCtas == 2, "K and V are shared by one CTA or by the two of a cluster");
  static_assert(kRowsPerConsumer == kMmaM, "each consumer warpgroup owns exactly one wgmma M of query rows");
  static_assert(kKeyRows == kMmaN, "one S product covers the whole key block");
  static_assert(kHeadDimV == kMmaN, "one PV product covers the whole output row");
  static_assert(kKeyRows == kQueryRows,
                "the diagonal of a query tile must be exactly one key block: only the last block is masked");
  static_assert(kHeadDimQK % kColumnBlock == 0 && kHeadDimV % kColumnBlock == 0,
                "head dims are whole 128-byte swizzle rows");
};

// ---------------------------------------------------------------- shared memory layout
// Shared memory is a row of slots, each one column block of a 128-row tile (16 KiB). P V and P x ones are one
// m64n136 product per k-step, whose B (MN-major) reads three column blocks LBO apart: V's two and, third, a
// block of ones, so that the accumulator's columns 128..135 are each row's sum of the rounded P. One n136
// where an n128 and an n8 were: the wgmma queue counts instructions, and the turn's issue held its warps 351
// cycles less, its products finishing 110 sooner (tools/device/wgmma_issue_probe.cu; +2.5% at 16K, session 23).
// Both V buffers reach the same ones block with a descriptor of their own, stage s at slot v0_s with
// LBO_s = (ones - v0_s) / 2 slots: stage 0 at slots 0 and 3, stage 1 at 2 and 4, the ones at 6. Q's first two
// column blocks fill slots 1 and 5, so nothing is left empty; then Q's third (d_qk = 192) and the K buffers.
// That layout holds d_qk = 192 (224 KiB) where a block of ones after each V buffer would not.
template <class Shape>
struct SharedLayout {
  static_assert(Shape::kStages == 2 && Shape::kVBlocks == 2, "the slot pattern is for two V buffers of two blocks");
  static constexpr uint32_t kSlotBytes = uint32_t(Shape::kKeyRows) * hw::kSwizzleBytes;
  static constexpr int kOnesSlot = 6;
  static constexpr int kKFirstSlot = kOnesSlot + 1 + (Shape::kQkBlocks - 2);
  static constexpr int kSlots = kKFirstSlot + Shape::kStages * Shape::kQkBlocks;

  // Functions of a run-time stage (no arrays: device code reads none of a class's static data).
  __host__ __device__ static constexpr int v_first_slot(int stage) { return 2 * stage; }
  __host__ __device__ static constexpr int v_lbo_slots(int stage) { return (kOnesSlot - v_first_slot(stage)) / 2; }
  __host__ __device__ static constexpr int v_slot(int stage, int block) {
    return v_first_slot(stage) + block * v_lbo_slots(stage);
  }
  __host__ __device__ static constexpr int q_slot(int block) {
    return block == 0 ? 1 : block == 1 ? kOnesSlot - 1 : kOnesSlot + 1 + (block - 2);
  }
  __host__ __device__ static constexpr int k_slot(int stage, int block) {
    return kKFirstSlot + stage * Shape::kQkBlocks + block;
  }

  static_assert(Shape::kQueryRows == Shape::kKeyRows, "Q's column blocks fill slots of K's and V's size");
  static_assert(v_slot(0, 2) == kOnesSlot && v_slot(1, 2) == kOnesSlot,
                "each V buffer's third column block is the ones block");
  // Every slot holds exactly one block: V's, Q's, K's, or the ones.
  static constexpr bool each_slot_once() {
    int uses[kSlots] = {};
    ++uses[kOnesSlot];
    for (int st = 0; st < Shape::kStages; ++st) {
      for (int b = 0; b < Shape::kVBlocks; ++b) ++uses[v_slot(st, b)];
      for (int b = 0; b < Shape::kQkBlocks; ++b) ++uses[k_slot(st, b)];
    }
    for (int b = 0; b < Shape::kQkBlocks; ++b) ++uses[q_slot(b)];
    for (int i = 0; i < kSlots; ++i)
      if (uses[i] != 1) return false;
    return true;
  }
  static_assert(each_slot_once(), "the slot pattern must hold each block once and leave no slot empty");
};

// Every slot starts on a swizzle atom (1024 bytes), which TMA's and wgmma's 128-byte swizzle assume.
template <class Shape>
struct SharedStorage {
  using Layout = SharedLayout<Shape>;
  struct alignas(hw::kSwizzleAtomBytes) Slot {
    unsigned char bytes[Layout::kSlotBytes];
  };
  struct Barriers {
    hw::Mbarrier q_full, q_empty;
    hw::Mbarrier k_full[Shape::kStages], k_empty[Shape::kStages];
    hw::Mbarrier v_full[Shape::kStages], v_empty[Shape::kStages];
  };
  Slot slots[Layout::kSlots];
  Barriers barriers;

  __device__ __nv_bfloat16 *slot(int i) { return reinterpret_cast<__nv_bfloat16 *>(slots[i].bytes); }
  static_assert(Layout::kSlotBytes % hw::kSwizzleAtomBytes == 0, "each slot must keep the next one on a swizzle atom");
};

// Consumers hand a buffer back with one arrival per warp, after that warp's wgmma reads have completed.
constexpr uint32_t kConsumerWarps = 2 * hw::kWarpsPerWarpgroup;

// Dynamic shared memory is only 16-byte aligned: the kernel rounds its base up to a swizzle atom.
template <class Shape>
constexpr int shared_bytes() {
  return int(sizeof(SharedStorage<Shape>)) + hw::kSwizzleAtomBytes;
}

// ---------------------------------------------------------------- register budgets (setmaxnreg)
constexpr int kProducerRegisters = 24;   // one thread issues copies; the rest of its warpgroup idles
constexpr int kConsumerRegisters = 240;  // O (64) + S (64) + P (32) fp32/bf16x2 fragments and bookkeeping
constexpr int kThreads = hw::kWarpgroupThreads * 3;
constexpr int kRegisterFile = 65536;
static_assert(kProducerRegisters * hw::kWarpgroupThreads + 2 * kConsumerRegisters * hw::kWarpgroupThreads <=
                  kRegisterFile,
              "the three warpgroups' budgets must fit the register file");

// ---------------------------------------------------------------- parameters
struct Params {
  CUtensorMap q_map, k_map, v_map;  // (dim, seqlen, heads, batch), boxes of 64 x 128, 128-byte swizzle
  const Job *jobs;
  int32_t n_jobs;
  int32_t seqlen;
  int32_t nheads;
  int32_t group;  // query heads per kv head
  float score_scale;  // c = softmax_scale * log2(e)
  __nv_bfloat16 *out;
  int64_t out_batch_stride, out_seq_stride, out_head_stride;  // elements
  float *lse;  // (batch, nheads, seqlen) or nullptr
};

// ---------------------------------------------------------------- scheduler
struct TileCoord {
  int32_t batch, head, kv_head, tile;
};

// Walks this CTA's jobs and, in each, its one or two query tiles. The walkers are the clusters (jobs
// cluster, cluster + clusters, ...); in a job, the CTA of rank r takes query head job.head * kKvCtas + r.
// Producer and consumers walk the same sequence, and so do the CTAs of a cluster, so every barrier phase
// lines up.
template <class Shape, class Fn>
__device__ __forceinline__ void for_each_tile(const Params &p, Fn &&fn) {
  const int32_t rank = Shape::kKvCtas > 1 ? int32_t(hw::cluster_rank()) : 0;
  const int32_t walkers = int32_t(gridDim.x) / Shape::kKvCtas;
  for (int32_t i = int32_t(blockIdx.x) / Shape::kKvCtas; i < p.n_jobs; i += walkers) {
    Job job = p.jobs[i];
    job.head = job.head * Shape::kKvCtas + rank;
    const int32_t kv_head = job.head / p.group;
    const int tiles = job.tile_second == kNoTile ? 1 : 2;
    // One call site, so the consumer's tile body is inlined once.
    for (int n = 0; n < tiles; ++n) fn(TileCoord{job.batch, job.head, kv_head, n == 0 ? job.tile_first : job.tile_second});
  }
}

// ---------------------------------------------------------------- producer
template <class Shape>
struct Producer {
  using Storage = SharedStorage<Shape>;
  using Layout = SharedLayout<Shape>;

  // Copies a tile of 128 rows at row `row0` as column blocks of 64, column block cb into slot slot_of(cb), all
  // completing on `barrier`. A tile the cluster shares (kShared, K and V where kKvCtas > 1): this CTA copies its
  // share of the column blocks into every CTA of the cluster and the others copy the rest, so each CTA's barrier
  // sees the whole tile's bytes.
  template <int kCols, bool kShared = false, class SlotOf>
  __device__ static void load_tile(const CUtensorMap &map, Storage &s, SlotOf &&slot_of, hw::Mbarrier &barrier,
                                   int32_t row0, int32_t head, int32_t batch, hw::L2Hint hint) {
    constexpr bool kMulticast = kShared && Shape::kKvCtas > 1;
    constexpr uint16_t kAllCtas = (1u << Shape::kKvCtas) - 1;
    const int rank = kMulticast ? int(hw::cluster_rank()) : 0;
#pragma unroll
    for (int cb = 0; cb < kCols / Shape::kColumnBlock; ++cb) {
      __nv_bfloat16 *const block = s.slot(slot_of(cb));
      const int32_t col0 = cb * Shape::kColumnBlock;
      if constexpr (kMulticast) {
        if (cb % Shape::kKvCtas == rank)
          hw::tma_load_4d_multicast(map, block, barrier, col0, row0, head, batch, kAllCtas, hint);
      } else {
        hw::tma_load_4d(map, block, barrier, col0, row0, head, batch, hint);
      }
    }
  }

  __device__ static void run(const Params &p, Storage &s) {
    auto &bar = s.barriers;
    hw::PipelineState<Shape::kStages> kv;
    uint32_t q_phase = 0;
    for_each_tile<Shape>(p, [&](const TileCoord &t) {
      bar.q_empty.wait(q_phase ^ 1u);
      bar.q_full.arrive_expecting(Shape::kQTileBytes);
      // Q is read by one CTA once; K and V are read by every tile of the head (and of the GQA group).
      load_tile<Shape::kHeadDimQK>(p.q_map, s, Layout::q_slot, bar.q_full, t.tile * Shape::kQueryRows, t.head,
                                   t.batch, hw::L2Hint::kEvictFirst);
      q_phase ^= 1u;
      for (int32_t kb = 0; kb <= t.tile; ++kb) {
        const int32_t key0 = kb * Shape::kKeyRows;
        bar.k_empty[kv.index].wait(kv.phase ^ 1u);
        bar.k_full[kv.index].arrive_expecting(Shape::kKTileBytes);
        const int stage = int(kv.index);
        load_tile<Shape::kHeadDimQK, true>(p.k_map, s, [stage](int cb) { return Layout::k_slot(stage, cb); },
                                           bar.k_full[kv.index], key0, t.kv_head, t.batch, hw::L2Hint::kEvictLast);
        bar.v_empty[kv.index].wait(kv.phase ^ 1u);
        bar.v_full[kv.index].arrive_expecting(Shape::kVTileBytes);
        load_tile<Shape::kHeadDimV, true>(p.v_map, s, [stage](int cb) { return Layout::v_slot(stage, cb); },
                                          bar.v_full[kv.index], key0, t.kv_head, t.batch, hw::L2Hint::kEvictLast);
        kv.advance();
      }
    });
  }
};

// ---------------------------------------------------------------- consumer fragments
// The m64n128 fp32 accumulator of one thread (PTX ISA, wgmma fragments): value i lies in n8 column chunk
// i / 4, in row half (i / 2) % 2 (rows g and g + 8 of the warp's 16), at column 2 * (lane % 4) + i % 2.
constexpr int kFragments = hw::kAccumulatorsN128;
constexpr int kChunks = kFragments / 4;
constexpr int kRowHalves = 2;
constexpr uint32_t kBf16OnesPair = 0x3F803F80u;  // two bf16 1.0

__device__ __forceinline__ constexpr int fragment(int chunk, int half, int col) { return 4 * chunk + 2 * half + col; }

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
constexpr unsigned kFullWarp = 0xFFFFFFFFu;
// The four lanes of a quad hold one row's columns between them.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(kFullWarp, x, 1));
  return fmaxf(x, __shfl_xor_sync(kFullWarp, x, 2));
}

// Two floats as bf16 pairs rounded to nearest even; `lo` in the low half (the first column).
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// A row's output as words of two bf16: before, lane q of the quad holds word q of every 16-byte chunk
// (w[ch]); after, w[4 j .. 4 j + 3] hold the whole chunk 4 j + q, so each lane writes 16 contiguous bytes
// per store. Each group of four chunks is a 4 x 4 transpose across the quad, in two exchange rounds (lane
// distance 2, then 1): per round and pair of words, one SHFL and three SELs. Every lane must take part.
__device__ __forceinline__ void quad_transpose(uint32_t (&w)[kChunks], int lane) {
#pragma unroll
  for (int k = 2; k >= 1; k /= 2) {
    const bool upper = (lane & k) != 0;
#pragma unroll
    for (int j = 0; j < kChunks; j += 4)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        if (c & k) continue;
        uint32_t &lo = w[j + c], &hi = w[j + (c | k)];
        const uint32_t got = __shfl_xor_sync(kFullWarp, upper ? lo : hi, k);
        if (upper) lo = got;
        else hi = got;
      }
  }
}

// ---------------------------------------------------------------- consumer
template <class Shape>
struct Consumer {
  using Storage = SharedStorage<Shape>;
  using Layout = SharedLayout<Shape>;
  // Named barriers 1 and 2 (0 is __syncthreads): barrier 1 + w opens consumer w's turn at the tensor cores.
  static constexpr uint32_t kFirstTurnBarrier = 1;
  static constexpr uint32_t kTurnThreads = 2 * hw::kWarpgroupThreads;
  // A K-major swizzled operand ignores LBO; CUTLASS writes one unit there, and so do we.
  static constexpr uint32_t kUnusedLeadingBytes = hw::kDescriptorUnit;

  const Params &p;
  Storage &s;
  int consumer;      // 0 or 1: which 64 rows of the tile
  int warp;          // warp in the warpgroup: rows 16 warp .. 16 warp + 15 of the consumer's 64
  int lane;
  hw::PipelineState<Shape::kStages> k_stage, v_stage;
  uint32_t q_phase = 0;

  // Per thread: O and S accumulators, P as bf16 pairs (the A fragments of the PV product), and the
  // recurrence's state for the thread's two rows.
  float o[kFragments];
  float l[hw::kAccumulatorsN8];  // P x ones: registers 0, 1 hold row g's sum, 2, 3 row g + 8's
  float sc[kFragments];
  // P of two consecutive blocks: the next block's P is rounded into the other set while the product that
  // reads this one is still in flight (a product's A registers may not be written before the wait that
  // retires it), so the conversions leave the chain from the P V wait to the next turn. The key loop is
  // unrolled by two so that every index into pk is a constant (bf16-pnext: +1.7% at d = 128, 16K; session 13).
  static constexpr int kPWords = kFragments / 2;
  uint32_t pk[2][kPWords];
  float m[kRowHalves], alpha[kRowHalves];

  __device__ Consumer(const Params &params, Storage &storage, int consumer_index)
      : p(params), s(storage), consumer(consumer_index) {
    warp = hw::thread_in_warpgroup() / hw::kWarpSize;
    lane = int(threadIdx.x) % hw::kWarpSize;
  }

  // ---- turns at the tensor cores
  __device__ void wait_turn() const { hw::NamedBarrier{kFirstTurnBarrier + uint32_t(consumer), kTurnThreads}.sync(); }
  __device__ void pass_turn() const { hw::NamedBarrier{kFirstTurnBarrier + uint32_t(1 - consumer), kTurnThreads}.arrive(); }

  // One arrival per warp on a barrier with kConsumerWarps arrivals per phase.
  __device__ void release(hw::Mbarrier &b) const {
    if (lane == 0) b.arrive();
  }
  // A K or V buffer goes back to every producer that copies into it: one arrival per warp on the barrier
  // of each CTA of the cluster (kConsumerWarps * kKvCtas arrivals per phase).
  __device__ void release_kv(hw::Mbarrier &b) const {
    if (lane != 0) return;
    b.arrive();
    if constexpr (Shape::kKvCtas == 2) hw::arrive_on_rank(b, hw::cluster_rank() ^ 1u);
  }

  // ---- products
  __device__ uint32_t smem(const void *ptr) const { return static_cast<uint32_t>(__cvta_generic_to_shared(ptr)); }

  __device__ void issue_scores(uint32_t stage) {
    // Q: this consumer's 64 rows; K: all 128 keys. Both K-major, 8-row groups 1024 bytes apart; each column block
    // on its slot, as offsets from the first one's.
    const uint64_t q_desc = hw::make_smem_descriptor(
        smem(s.slot(Layout::q_slot(0))) + uint32_t(consumer * Shape::kRowsPerConsumer * hw::kSwizzleBytes),
        kUnusedLeadingBytes, hw::kSwizzleAtomBytes);
    const uint64_t k_desc =
        hw::make_smem_descriptor(smem(s.slot(Layout::k_slot(int(stage), 0))), kUnusedLeadingBytes, hw::kSwizzleAtomBytes);
#pragma unroll
    for (int kk = 0; kk < Shape::kQkSteps; ++kk) {
      constexpr int kStepsPerBlock = Shape::kColumnBlock / Shape::kMmaK;
      const int cb = kk / kStepsPerBlock;
      const uint32_t k_bytes = uint32_t(kk % kStepsPerBlock) * Shape::kMmaK * 2;
      const uint32_t q_off = uint32_t(Layout::q_slot(cb) - Layout::q_slot(0)) * Layout::kSlotBytes + k_bytes;
      const uint32_t k_off = uint32_t(Layout::k_slot(0, cb) - Layout::k_slot(0, 0)) * Layout::kSlotBytes + k_bytes;
      if (kk == 0)
        hw::wgmma_m64n128k16_ss<false>(sc, hw::advance_descriptor(q_desc, q_off), hw::advance_descriptor(k_desc, k_off));
      else
        hw::wgmma_m64n128k16_ss<true>(sc, hw::advance_descriptor(q_desc, q_off), hw::advance_descriptor(k_desc, k_off));
    }
    hw::wgmma_commit();
  }

  __device__ void issue_pv(uint32_t stage, const uint32_t (&pk)[kPWords]) {
    // V is [key][dim]: MN-major for the product's B (dim is N), 64-column blocks LBO apart (V's two, then the
    // ones: SharedLayout), 8-key groups SBO apart.
    const uint64_t v_desc =
        hw::make_smem_descriptor(smem(s.slot(Layout::v_first_slot(int(stage)))),
                                 uint32_t(Layout::v_lbo_slots(int(stage))) * Layout::kSlotBytes, hw::kSwizzleAtomBytes);
#pragma unroll
    for (int kk = 0; kk < Shape::kPvSteps; ++kk) {
      const uint32_t a[hw::kRegistersA] = {pk[4 * kk], pk[4 * kk + 1], pk[4 * kk + 2], pk[4 * kk + 3]};
      hw::wgmma_m64n136k16_rs_transposed_b(
          o, l, a, hw::advance_descriptor(v_desc, uint32_t(kk * Shape::kMmaK) * hw::kSwizzleBytes));
    }
    hw::wgmma_commit();
  }

  __device__ void pin_all() {
    hw::pin_registers(o);
    hw::pin_registers(l);
    hw::pin_registers(sc);
    hw::pin_registers(pk[0]);
    hw::pin_registers(pk[1]);
  }

  // ---- softmax
  // Row of the thread's half `h` within the query tile.
  __device__ int tile_row(int h) const { return consumer * Shape::kRowsPerConsumer + warp * 16 + lane / 4 + 8 * h; }

  // Keys after the row (causal) get -inf; only the diagonal block has any.
  __device__ void mask_diagonal() {
#pragma unroll
    for (int h = 0; h < kRowHalves; ++h) {
      const int row = tile_row(h);
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          if (8 * c + 2 * (lane % 4) + e > row) sc[fragment(c, h, e)] = -INFINITY;
    }
  }

  // Row half h's block max and the lazy rescale decision (every lane of the warp: the max is a quad
  // reduction); true when m moved, so that the half's P must be taken against the new m.
  __device__ bool update_block_max(int h) {
    const float c = p.score_scale;
    float mx = -INFINITY;
#pragma unroll
    for (int ch = 0; ch < kChunks; ++ch) mx = fmaxf(mx, fmaxf(sc[fragment(ch, h, 0)], sc[fragment(ch, h, 1)]));
    const float bmax = c * quad_max(mx);
    alpha[h] = 1.0f;
    if (nx::lazy_rescale_due(m[h], bmax, nx::kBf16LazyRescaleThreshold)) {
      alpha[h] = exp2_approx(m[h] - bmax);
      m[h] = bmax;
      return true;
    }
    return false;
  }

  // P = bf16(exp2(S c - m)) of row half h as the A fragments of a PV product (whose P x ones product adds the
  // rounded values to l); S stays in sc. Returns the OR of the half's words.
  __device__ uint32_t round_p_row(int h, uint32_t (&dst)[kPWords]) {
    const float c = p.score_scale;
    const float neg_m = -m[h];
    uint32_t bits = 0;
#pragma unroll
    for (int ch = 0; ch < kChunks; ++ch) {
      const uint32_t w = pack_bf16x2(exp2_approx(__fmaf_rn(sc[fragment(ch, h, 0)], c, neg_m)),
                                     exp2_approx(__fmaf_rn(sc[fragment(ch, h, 1)], c, neg_m)));
      dst[2 * ch + h] = w;
      bits |= w;
    }
    return bits;
  }

  // The recurrence's order: block max, lazy rescale, then P (a tile's first block, where m is -inf).
  __device__ void round_p_after_max(uint32_t (&dst)[kPWords]) {
#pragma unroll
    for (int h = 0; h < kRowHalves; ++h) {
      update_block_max(h);
      round_p_row(h, dst);
    }
  }

  // The same values with the block max taken only where it could matter: P is rounded against the running m
  // first, which is the recurrence's P whenever the block keeps m, and numerics::bf16_p_clear_of_rescale says
  // from the OR of the words (or, where the OR is inexact, their max) that it does. Otherwise (P of 2^(tau - 1)
  // or more, a row's m far from its scores, NaN) the warp takes the block max as the recurrence does, and a
  // half whose m moves takes its P again. The output is
  // bitwise the recurrence's, and in the common block the exponentials start as soon as S lands, without the
  // 64 FMNMX and two shuffle rounds before them (+9% at d = 128, 16K: bench/NOTES.md, session 25).
  __device__ void round_p_before_max(uint32_t (&dst)[kPWords]) {
    const uint32_t bits = round_p_row(0, dst) | round_p_row(1, dst);
    alpha[0] = alpha[1] = 1.0f;
    bool may_rescale = !(nx::bf16_p_clear_of_rescale(bits, m[0]) && nx::bf16_p_clear_of_rescale(bits, m[1]));
    if (may_rescale) {  // the OR is cheap but inexact past P = 2; the words' max settles it before the warp votes
      uint32_t top = 0;
#pragma unroll
      for (int i = 0; i < kPWords; ++i) top = nx::bf16x2_bits_max(top, dst[i]);
      may_rescale = !(nx::bf16_p_max_clear_of_rescale(top, m[0]) && nx::bf16_p_max_clear_of_rescale(top, m[1]));
    }
    if (__any_sync(kFullWarp, may_rescale)) {
#pragma unroll
      for (int h = 0; h < kRowHalves; ++h)
        if (update_block_max(h)) round_p_row(h, dst);
    }
  }

  // Waits for the PV product in flight, then folds alpha into O.
  // The wait needs a basic block of its own: ptxas hoists a wgmma wait above the independent instructions
  // of its block (written after the exponentials in the same block, it lands before them), which
  // would queue the exponentials behind the very product they are meant to overlap. So it sits in both
  // arms of a branch on a condition ptxas cannot fold but that is the same on every thread of the CTA
  // (a kernel parameter; always true here, since a CTA with no job never gets this far):
  // - uniform, because wgmma.wait_group is .aligned: all four warps of the warpgroup must run the same
  //   wait instruction. A per-warp condition (__any_sync of alpha != 1) sent warps to different arms'
  //   waits (synccheck: "Mismatching warpgroup instruction pc between warps");
  // - a wait in both arms, because a path that reads O without waiting makes ptxas serialize every
  //   wgmma of the kernel (C7514): one wait behind `if (p.n_jobs > 0)` alone measured 440 instead of
  //   587 TFLOP/s at S = 16K.
  // The rescale then branches per warp: its arm holds no warpgroup instruction.
  __device__ void wait_pv_then_rescale() {
    if (p.n_jobs > 0) {
      hw::wgmma_wait<0>();
      pin_all();
    } else {
      hw::wgmma_wait<0>();
      pin_all();
    }
    if (__any_sync(kFullWarp, alpha[0] != 1.0f || alpha[1] != 1.0f)) rescale_o();
  }
  __device__ void rescale_o() {
#pragma unroll
    for (int ch = 0; ch < kChunks; ++ch)
#pragma unroll
      for (int h = 0; h < kRowHalves; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) o[fragment(ch, h, e)] *= alpha[h];
#pragma unroll
    for (int i = 0; i < hw::kAccumulatorsN8; ++i) l[i] *= alpha[i / 2];
  }
  // One turn at the tensor cores: S_kb (kScores) and the previous block's PV (kPv, P in pk[kIn]) issued, the
  // turn passed on, then the wait for the first of them (S when both are in flight); K's buffer released.
  template <bool kScores, bool kPv, int kIn = 0>
  __device__ void take_turn() {
    static_assert(kScores || kPv, "a turn issues at least one product");
    auto &bar = s.barriers;
    wait_turn();
    if constexpr (kScores) {
      bar.k_full[k_stage.index].wait(k_stage.phase);
    } else {
      bar.v_full[v_stage.index].wait(v_stage.phase);
    }
    pin_all();
    hw::wgmma_fence();
    if constexpr (kScores) issue_scores(k_stage.index);
    if constexpr (kScores && kPv) {
      bar.v_full[v_stage.index].wait(v_stage.phase);
      hw::wgmma_fence();  // P's registers are read by this product: order their writes before it
    }
    if constexpr (kPv) issue_pv(v_stage.index, pk[kIn]);
    pass_turn();
    hw::wgmma_wait<(kScores && kPv) ? 1 : 0>();
    pin_all();
    if constexpr (kScores) {
      release_kv(bar.k_empty[k_stage.index]);
      k_stage.advance();
    }
  }

  __device__ void mask_if_diagonal(int32_t kb, int32_t last) {
    if (kb == last) {
      release(s.barriers.q_empty);
      mask_diagonal();
    }
  }

  // Key block kb >= 1: S_kb and PV_{kb-1} (P_{kb-1} in pk[kIn]) in flight together; P_kb into pk[1 - kIn].
  template <int kIn>
  __device__ void key_block(int32_t kb, int32_t last) {
    take_turn<true, true, kIn>();
    mask_if_diagonal(kb, last);
    // PV_{kb-1} may still be in flight (its tail, by the time the issue ends): P_kb goes to the other set.
    round_p_before_max(pk[1 - kIn]);
    hw::pin_registers(pk[1 - kIn]);
    wait_pv_then_rescale();
    release_kv(s.barriers.v_empty[v_stage.index]);
    v_stage.advance();
  }

  // The tile's last PV (P in pk[kIn]).
  template <int kIn>
  __device__ void last_pv() {
    take_turn<false, true, kIn>();
    release_kv(s.barriers.v_empty[v_stage.index]);
    v_stage.advance();
  }

  // ---- one query tile
  __device__ void attend(const TileCoord &t) {
    auto &bar = s.barriers;
#pragma unroll
    for (int i = 0; i < kFragments; ++i) o[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < hw::kAccumulatorsN8; ++i) l[i] = 0.0f;
#pragma unroll
    for (int h = 0; h < kRowHalves; ++h) m[h] = -INFINITY;
    bar.q_full.wait(q_phase);
    q_phase ^= 1u;
    const int32_t last = t.tile;  // key blocks 0..last; the last is the diagonal

    // Block 0: scores only.
    take_turn<true, false>();
    mask_if_diagonal(0, last);
    round_p_after_max(pk[0]);  // O is still zero: nothing to rescale
    hw::pin_registers(pk[0]);

    // Blocks 1..last, two per trip (pk[0] then pk[1] in flight), then the last PV.
    for (int32_t kb = 1;; kb += 2) {
      if (kb > last) {
        last_pv<0>();
        break;
      }
      key_block<0>(kb, last);
      if (kb + 1 > last) {
        last_pv<1>();
        break;
      }
      key_block<1>(kb + 1, last);
    }

    store(t);
  }

  // ---- epilogue: out = bf16(O * output_scale(l)) and lse, rows inside seqlen only.
  __device__ void store(const TileCoord &t) {
    const int q = lane % 4;
#pragma unroll
    for (int h = 0; h < kRowHalves; ++h) {
      const float row_l = l[2 * h];  // the whole row's sum: the product summed over all 128 keys
      const int64_t row = int64_t(t.tile) * Shape::kQueryRows + tile_row(h);
      const bool inside = row < p.seqlen;  // the same for the four lanes of a quad
      __nv_bfloat16 *out_row =
          p.out + int64_t(t.batch) * p.out_batch_stride + row * p.out_seq_stride + int64_t(t.head) * p.out_head_stride;
      const float scale = nx::output_scale(row_l, 1.0f);
      uint32_t w[kChunks];
#pragma unroll
      for (int ch = 0; ch < kChunks; ++ch)
        w[ch] = pack_bf16x2(__fmul_rn(o[fragment(ch, h, 0)], scale), __fmul_rn(o[fragment(ch, h, 1)], scale));
      // Rows outside seqlen join the shuffles (full-warp masks) and only skip their stores.
      quad_transpose(w, lane);
      if (inside) {
        uint4 *const chunk = reinterpret_cast<uint4 *>(out_row) + q;  // every row starts on 16 bytes (supports)
#pragma unroll
        for (int j = 0; j < kChunks; j += 4) chunk[j] = make_uint4(w[j], w[j + 1], w[j + 2], w[j + 3]);
      }
      if (p.lse != nullptr && q == 0 && inside)
        p.lse[(int64_t(t.batch) * p.nheads + t.head) * p.seqlen + row] = (m[h] + log2f(row_l)) * nx::kLn2;
    }
  }

  __device__ void run() {
    // Consumer 0 takes the first turn: consumer 1 opens it.
    if (consumer == 1) pass_turn();
    for_each_tile<Shape>(p, [&](const TileCoord &t) { attend(t); });
  }
};

// ---------------------------------------------------------------- the kernel
template <class Shape>
struct Kernel {
  using Storage = SharedStorage<Shape>;
  static_assert(shared_bytes<Shape>() <= kMaxSharedBytes, "the tiles must fit one CTA's shared memory");

  __device__ static void run(const Params &p, unsigned char *smem_raw) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(smem_raw);
    const uintptr_t aligned = (base + hw::kSwizzleAtomBytes - 1) & ~uintptr_t(hw::kSwizzleAtomBytes - 1);
    Storage &s = *reinterpret_cast<Storage *>(aligned);

    if (threadIdx.x == 0) {
      hw::prefetch_tensor_map(p.q_map);
      hw::prefetch_tensor_map(p.k_map);
      hw::prefetch_tensor_map(p.v_map);
      s.barriers.q_full.init(1);
      s.barriers.q_empty.init(kConsumerWarps);
#pragma unroll
      for (int i = 0; i < Shape::kStages; ++i) {
        s.barriers.k_full[i].init(1);
        s.barriers.v_full[i].init(1);
        s.barriers.k_empty[i].init(kConsumerWarps * Shape::kKvCtas);
        s.barriers.v_empty[i].init(kConsumerWarps * Shape::kKvCtas);
      }
      hw::fence_barrier_init();
    }
    // The ones of the P x ones product, written by every thread and handed to the async proxy before
    // the barrier that publishes them.
    uint32_t *const ones = reinterpret_cast<uint32_t *>(s.slot(SharedLayout<Shape>::kOnesSlot));
    for (int i = int(threadIdx.x); i < int(SharedLayout<Shape>::kSlotBytes / 4); i += kThreads) ones[i] = kBf16OnesPair;
    hw::fence_shared_to_async_proxy();
    // A peer's copies and arrivals may reach this CTA's barriers as soon as it passes: the cluster waits
    // for every CTA's initialization.
    if constexpr (Shape::kKvCtas > 1) {
      hw::cluster_sync();
    } else {
      __syncthreads();
    }

    const int role = hw::warpgroup_index();
    if (role == 0) {
      hw::shrink_registers_to<kProducerRegisters>();
      if (threadIdx.x == 0) Producer<Shape>::run(p, s);
    } else {
      hw::grow_registers_to<kConsumerRegisters>();
      Consumer<Shape> consumer(p, s, role - 1);
      consumer.run();
    }
    // No CTA leaves while a peer may still copy into its shared memory or arrive on its barriers.
    if constexpr (Shape::kKvCtas > 1) hw::cluster_sync();
  }
};

}  // namespace zyfa::kernels::bf16

#endif  // ZYFA_KERNELS_BF16_ATTENTION_CUH_
