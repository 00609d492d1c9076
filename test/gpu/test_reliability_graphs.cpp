// CUDA graphs through the public API. A prepared shape's first call is captured (in each capture mode),
// the plan cache then evicts everything it can around the pinned plan, and the graph is replayed 100 times
// with new inputs written into the same buffers: every replay matches fp64 and is bitwise equal to an
// eager call on the same inputs. A capture without prepare returns ZYFA_STATUS_NOT_PREPARED, adds no node
// and leaves the capture usable.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "reliability.hpp"

namespace zyfa::test::reliability {
namespace {

constexpr int kReplays = 100;
// Shapes that other plans are built for while the captured one must stay pinned.
constexpr int kEvictingShapes = 6;
// Deliberately unusual shapes, so no other test has prepared them in this process.
constexpr int64_t kUnpreparedSeqlen = 3331;
constexpr int64_t kEvictingSeqlenBase = 2111;

struct GraphCase {
  const char *name;
  AttentionShape shape;
  cudaStreamCaptureMode mode;
};

// FP8 cases pass their descales as device arrays: a captured call keeps pointers, not host floats, so
// refilled inputs bring their new descales with them.
std::vector<GraphCase> graph_cases() {
  return {
      {"bf16_d128_global", attention_shape(ZYFA_DTYPE_BF16, 128, 2, 300, 8, 2), cudaStreamCaptureModeGlobal},
      {"fp8_d128_global", attention_shape(ZYFA_DTYPE_FP8_E4M3, 128, 2, 300, 8, 2, Layout::kBSHD, true),
       cudaStreamCaptureModeGlobal},
      {"fp8_d192_bhsd_global", attention_shape(ZYFA_DTYPE_FP8_E4M3, 192, 1, 257, 4, 1, Layout::kBHSD, true),
       cudaStreamCaptureModeGlobal},
      {"fp8_d128_strided_thread_local",
       attention_shape(ZYFA_DTYPE_FP8_E4M3, 128, 2, 129, 4, 2, Layout::kStrided, true), cudaStreamCaptureModeThreadLocal},
      {"bf16_d192_strided_relaxed", attention_shape(ZYFA_DTYPE_BF16, 192, 1, 200, 6, 3, Layout::kStrided),
       cudaStreamCaptureModeRelaxed},
  };
}

class Graph {
 public:
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

class ReliabilityGraphs : public ::testing::TestWithParam<GraphCase> {};

TEST_P(ReliabilityGraphs, PreparedCaptureReplaysNewInputsCorrectly) {
  ZYFA_SKIP_WITHOUT_GPU();
  const GraphCase &c = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("ZYFA_TEST_SEED=" + std::to_string(seed));
  Stream stream;
  ZYFA_ASSERT_CUDA(stream.error());
  DeviceProblem problem(c.shape, seed);
  ASSERT_EQ(problem.status(), "");
  const zyfa_attn_desc desc = problem.desc();

  ASSERT_EQ(zyfa_attn_prepare(&desc, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  Graph graph;
  ZYFA_ASSERT_CUDA(cudaStreamBeginCapture(stream, c.mode));
  const zyfa_status captured = zyfa_attn_fwd(&desc, stream);
  const cudaError_t end = cudaStreamEndCapture(stream, &graph.graph);
  ASSERT_EQ(captured, ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_ASSERT_CUDA(end);
  ZYFA_ASSERT_CUDA(cudaGraphInstantiate(&graph.exec, graph.graph, 0));

  // Evict everything but the pinned plan: capacity 1, then plans for other shapes.
  CapacityGuard restore;
  const uint64_t evictions_before = cache_stats().evictions;
  ASSERT_EQ(zyfa_plan_cache_set_capacity(1), ZYFA_STATUS_SUCCESS);
  for (int i = 0; i < kEvictingShapes; ++i) {
    zyfa_attn_desc other = desc;
    other.layout = ZYFA_LAYOUT_BSHD;  // the captured strides may not fit another seqlen
    other.seqlen = kEvictingSeqlenBase + i;
    other.q = other.k = other.v = nullptr;  // prepare needs only the shape
    other.out = nullptr;
    other.lse = nullptr;
    ASSERT_EQ(zyfa_attn_prepare(&other, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  }
  EXPECT_GT(cache_stats().evictions, evictions_before) << "the cache evicted nothing around the pinned plan";

  std::vector<uint8_t> graph_out, graph_lse, eager_out, eager_lse;
  int replays_checked = 0;
  for (int r = 0; r < kReplays; ++r) {
    SCOPED_TRACE("replay " + std::to_string(r));
    ASSERT_EQ(problem.refill(seed + 1 + uint64_t(r)), "");
    ZYFA_ASSERT_CUDA(problem.poison(stream));
    ZYFA_ASSERT_CUDA(cudaGraphLaunch(graph.exec, stream));
    ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
    ASSERT_EQ(problem.download_bytes(&graph_out, &graph_lse), "");
    ASSERT_EQ(problem.download(), "");
    ASSERT_TRUE(matches_fp64(problem.host()));
    // The same inputs through an eager call: the graph adds nothing and loses nothing.
    ZYFA_ASSERT_CUDA(problem.poison(stream));
    ASSERT_EQ(zyfa_attn_fwd(&desc, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
    ASSERT_EQ(problem.download_bytes(&eager_out, &eager_lse), "");
    ASSERT_TRUE(graph_out == eager_out && graph_lse == eager_lse) << "graph replay differs from the eager call";
    ++replays_checked;
  }
  std::printf("[ graphs ] %s: %d replays with new inputs, each matching fp64 and bitwise equal to an eager call\n",
              c.name, replays_checked);
  RecordProperty("replays", replays_checked);
}

INSTANTIATE_TEST_SUITE_P(Modes, ReliabilityGraphs, ::testing::ValuesIn(graph_cases()),
                         [](const ::testing::TestParamInfo<GraphCase> &param_info) { return std::string(param_info.param.name); });

TEST(ReliabilityGraphsUnprepared, CaptureWithoutPrepareIsRefusedAndTheCaptureSurvives) {
  ZYFA_SKIP_WITHOUT_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("ZYFA_TEST_SEED=" + std::to_string(seed));
  Stream stream;
  ZYFA_ASSERT_CUDA(stream.error());
  DeviceProblem problem(attention_shape(ZYFA_DTYPE_BF16, 128, 1, kUnpreparedSeqlen, 3, 1), seed);
  ASSERT_EQ(problem.status(), "");
  const zyfa_attn_desc desc = problem.desc();
  ZYFA_ASSERT_CUDA(problem.poison(stream));
  constexpr size_t kMarkBytes = 256;
  DeviceBuffer marks;
  ASSERT_EQ(marks.allocate(2 * kMarkBytes), "");
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));

  const uint64_t misses_before = cache_stats().misses;
  Graph graph;
  ZYFA_ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const cudaError_t first_mark = cudaMemsetAsync(marks.get(), 0x11, kMarkBytes, stream);
  const zyfa_status refused = zyfa_attn_fwd(&desc, stream);
  const std::string message = zyfa_last_error();
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  const cudaError_t query = cudaStreamIsCapturing(stream, &capturing);
  const cudaError_t second_mark =
      cudaMemsetAsync(static_cast<uint8_t *>(marks.get()) + kMarkBytes, 0x22, kMarkBytes, stream);
  const cudaError_t end = cudaStreamEndCapture(stream, &graph.graph);

  EXPECT_EQ(refused, ZYFA_STATUS_NOT_PREPARED);
  EXPECT_NE(message.find("prepare"), std::string::npos) << "the message should say what to do: " << message;
  ZYFA_EXPECT_CUDA(first_mark);
  ZYFA_EXPECT_CUDA(query);
  EXPECT_EQ(capturing, cudaStreamCaptureStatusActive) << "the refused call invalidated the capture";
  ZYFA_EXPECT_CUDA(second_mark);
  ZYFA_ASSERT_CUDA(end);
  size_t nodes = 0;
  ZYFA_ASSERT_CUDA(cudaGraphGetNodes(graph.graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 2u) << "only the two memsets belong in the graph";
  EXPECT_EQ(cache_stats().misses, misses_before + 1) << "a NOT_PREPARED lookup counts as one miss";

  ZYFA_ASSERT_CUDA(cudaGraphInstantiate(&graph.exec, graph.graph, 0));
  ZYFA_ASSERT_CUDA(cudaGraphLaunch(graph.exec, stream));
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  std::vector<uint8_t> mark_bytes(2 * kMarkBytes), out, lse;
  ASSERT_EQ(marks.download(mark_bytes.data(), mark_bytes.size()), "");
  for (size_t i = 0; i < mark_bytes.size(); ++i) {
    ASSERT_EQ(mark_bytes[i], i < kMarkBytes ? 0x11 : 0x22) << "byte " << i << " of the captured memsets";
  }
  ASSERT_EQ(problem.download_bytes(&out, &lse), "");
  for (uint8_t b : out) ASSERT_EQ(b, 0xff) << "the refused call wrote its output";
  for (uint8_t b : lse) ASSERT_EQ(b, 0xff) << "the refused call wrote its LSE";

  // The refusal is recoverable: prepare, and the same capture succeeds and computes the right thing.
  ASSERT_EQ(zyfa_attn_prepare(&desc, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  Graph second;
  ZYFA_ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const zyfa_status accepted = zyfa_attn_fwd(&desc, stream);
  ZYFA_ASSERT_CUDA(cudaStreamEndCapture(stream, &second.graph));
  ASSERT_EQ(accepted, ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_ASSERT_CUDA(cudaGraphInstantiate(&second.exec, second.graph, 0));
  ZYFA_ASSERT_CUDA(cudaGraphLaunch(second.exec, stream));
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  ASSERT_EQ(problem.download(), "");
  EXPECT_TRUE(matches_fp64(problem.host()));
}

}  // namespace
}  // namespace zyfa::test::reliability
