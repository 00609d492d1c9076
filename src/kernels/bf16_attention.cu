// Launcher of the BF16 Hopper kernel (bf16_attention.cuh): which problems it takes, the tensor maps built
// per call from the Problem's strides, and the persistent launch over the plan's job table. No host sync
// and no allocation, so a call can be captured in a CUDA graph once the plan exists.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/bf16_attention.cuh"
#include "kernels/hopper/tensor_map.cuh"
#include "kernels/launch.hpp"

namespace zyfa::kernels {
namespace {

template <int kHeadDimQK, int kKvCtas>
__global__ void __launch_bounds__(bf16::kThreads, 1) bf16_attention_kernel(const __grid_constant__ bf16::Params params) {
  extern __shared__ unsigned char smem[];
  bf16::Kernel<bf16::TileShape<kHeadDimQK, kKvCtas>>::run(params, smem);
}

// The launch configuration of a grid of `walkers` clusters of kKvCtas CTAs, as the launch and the occupancy
// query both need it.
template <int kHeadDimQK, int kKvCtas>
struct LaunchShape {
  static constexpr int kSmemBytes = bf16::shared_bytes<bf16::TileShape<kHeadDimQK, kKvCtas>>();
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute cluster{};

  LaunchShape(int32_t walkers, cudaStream_t stream) {
    config.gridDim = dim3(unsigned(walkers) * kKvCtas);  // the plan's walkers are clusters
    config.blockDim = dim3(bf16::kThreads);
    config.dynamicSmemBytes = kSmemBytes;
    config.stream = stream;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = kKvCtas;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
  }
  LaunchShape(const LaunchShape &) = delete;  // config.attrs points into this object
  LaunchShape &operator=(const LaunchShape &) = delete;

  // Per call, not once: the attribute belongs to the current device, and it costs a host call only.
  static cudaError_t prepare() {
    return cudaFuncSetAttribute(bf16_attention_kernel<kHeadDimQK, kKvCtas>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  }
};

template <int kHeadDimQK, int kKvCtas>
int launch(const Problem &problem, const Schedule &schedule, cudaStream_t stream) {
  using Shape = bf16::TileShape<kHeadDimQK, kKvCtas>;
  constexpr uint32_t kBoxCols = Shape::kColumnBlock;
  bf16::Params params{};
  const int64_t b = problem.batch, s = problem.seqlen;
  if (int e = hopper::encode_bf16_head_map(&params.q_map, problem.q, b, s, problem.nheads, Shape::kHeadDimQK,
                                           kBoxCols, Shape::kQueryRows))
    return e;
  if (int e = hopper::encode_bf16_head_map(&params.k_map, problem.k, b, s, problem.nheads_k, Shape::kHeadDimQK,
                                           kBoxCols, Shape::kKeyRows))
    return e;
  if (int e = hopper::encode_bf16_head_map(&params.v_map, problem.v, b, s, problem.nheads_k, Shape::kHeadDimV,
                                           kBoxCols, Shape::kKeyRows))
    return e;
  params.jobs = schedule.jobs;
  params.n_jobs = schedule.n_jobs;
  params.seqlen = int32_t(s);
  params.nheads = int32_t(problem.nheads);
  params.group = int32_t(problem.group());
  params.score_scale = problem.softmax_scale * numerics::kLog2e;  // c, rounded as numerics.h rounds it
  params.out = static_cast<__nv_bfloat16 *>(problem.out_ptr());
  params.out_batch_stride = problem.out.batch_stride;
  params.out_seq_stride = problem.out.seq_stride;
  params.out_head_stride = problem.out.head_stride;
  params.lse = problem.lse;

  LaunchShape<kHeadDimQK, kKvCtas> shape(schedule.grid, stream);
  if (cudaError_t e = shape.prepare()) return e;
  return cudaLaunchKernelEx(&shape.config, bf16_attention_kernel<kHeadDimQK, kKvCtas>, params);
}

template <int kHeadDimQK, int kKvCtas>
int max_active_clusters(int *clusters) {
  LaunchShape<kHeadDimQK, kKvCtas> shape(kKvCtas, nullptr);
  cudaError_t e = shape.prepare();
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveClusters(clusters, bf16_attention_kernel<kHeadDimQK, kKvCtas>, &shape.config);
  // A failed query is no error of the stream's work: it leaves no last error for the caller's next check.
  if (e != cudaSuccess) cudaGetLastError();
  return e;
}

}  // namespace

bool bf16_attention_supports(const Problem &p) {
  if (p.dtype != ZYFA_DTYPE_BF16 || p.d_v != 128 || (p.d_qk != 128 && p.d_qk != 192)) return false;
  // Tile and row indices are int32 in the kernel; the last tile's rows must stay representable.
  if (p.seqlen > INT32_MAX - numerics::kQueryTile || p.nheads > INT32_MAX || p.batch > INT32_MAX) return false;
  return p.out_rows_in_chunks() && hopper::tma_can_map(p.q, p.batch, p.seqlen, p.nheads, p.d_qk) &&
         hopper::tma_can_map(p.k, p.batch, p.seqlen, p.nheads_k, p.d_qk) &&
         hopper::tma_can_map(p.v, p.batch, p.seqlen, p.nheads_k, p.d_v);
}

int bf16_attention_ctas_per_sm() { return 1; }

// Two query heads of one kv head share each K and V copy wherever the group splits into pairs.
int bf16_attention_heads_per_job(const Problem &p) { return p.group() % 2 == 0 ? 2 : 1; }

int bf16_attention_max_active_clusters(const Problem &problem, int heads_per_job, int *clusters) {
  *clusters = 0;
  if (heads_per_job == 2)
    return problem.d_qk == 128 ? max_active_clusters<128, 2>(clusters) : max_active_clusters<192, 2>(clusters);
  if (heads_per_job == 1)
    return problem.d_qk == 128 ? max_active_clusters<128, 1>(clusters) : max_active_clusters<192, 1>(clusters);
  return cudaErrorInvalidValue;
}

int prepare_bf16_attention(const Problem &problem) {
  if (!bf16_attention_supports(problem)) return cudaErrorInvalidValue;
  // The driver's tensor-map encoder is looked up once; here rather than in a first launch under capture.
  if (hopper::tensor_map_encoder() == nullptr) return cudaErrorNotSupported;
  const bool d128 = problem.d_qk == 128;
  // One head per job is the plan's answer wherever clusters do not fit, so both variants may run.
  if (bf16_attention_heads_per_job(problem) == 2) {
    if (cudaError_t e = d128 ? LaunchShape<128, 2>::prepare() : LaunchShape<192, 2>::prepare()) return e;
  }
  return d128 ? LaunchShape<128, 1>::prepare() : LaunchShape<192, 1>::prepare();
}

int launch_bf16_attention(const Problem &problem, const Schedule &schedule, void *stream) {
  if (schedule.jobs == nullptr || schedule.n_jobs < 1 || schedule.grid < 1) return cudaErrorInvalidValue;
  if (!bf16_attention_supports(problem)) return cudaErrorInvalidValue;
  // The preferred pairing, or one head per job where the plan found that clusters do not fit.
  if (schedule.heads_per_job != 1 && schedule.heads_per_job != bf16_attention_heads_per_job(problem))
    return cudaErrorInvalidValue;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (schedule.heads_per_job == 2)
    return problem.d_qk == 128 ? launch<128, 2>(problem, schedule, s) : launch<192, 2>(problem, schedule, s);
  return problem.d_qk == 128 ? launch<128, 1>(problem, schedule, s) : launch<192, 1>(problem, schedule, s);
}

}  // namespace zyfa::kernels
