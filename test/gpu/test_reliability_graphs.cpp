// CUDA graphs through the public API. A prepared shape's first call is captured (in each capture mode),
// the plan cache then evicts everything it can around the pinned plan, and the graph is replayed 100 times
// with new inputs written into the same buffers: every replay matches fp64 and is bitwise equal to an
// eager call on the same inputs. A capture without prepare returns ZYFA_STATUS_NOT_PREPARED, adds no node
// and leaves the capture usable. Eager calls in another thread, which evict plans and free their tables while
// a global-mode capture is open, leave that capture intact.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
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
// The other thread's shapes: one key-block count (17) for all, so their job tables have one size.
constexpr int64_t kConcurrentSeqlenBase = 2113;

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

class ReliabilityGraphs : public ::testing::TestWithParam<GraphCase> {};

TEST_P(ReliabilityGraphs, PreparedCaptureReplaysNewInputsCorrectly) {
  ZYFA_SKIP_WITHOUT_GPU();
  const GraphCase &c = GetParam();
  ZYFA_TRACED_SEED(seed);
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

// A prepare in TMA-mappable strides, then a capture of the same shape with one k and v for both batches (batch
// stride 0, which TMA cannot map): the call falls to another kernel with another plan (BF16 with an even
// group: one head per job instead of two; FP8 with the V^T workspace: 128-row tiles instead of 192) and, for
// FP8, other code. The prepare must have readied both. The replay must give the eager call's bits, and (every
// batch holding batch 0's k and v) match fp64.
TEST(ReliabilityGraphsFallback, PrepareReadiesTheKernelOtherStridesFallTo) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  const AttentionShape shapes[] = {
      attention_shape(ZYFA_DTYPE_BF16, 128, 2, kUnpreparedSeqlen + 2, 8, 2),
      attention_shape(ZYFA_DTYPE_FP8_E4M3, 128, 2, 4099, 8, 2, Layout::kBSHD, true),  // group * seqlen >= 16K
  };
  for (const AttentionShape &shape : shapes) {
    SCOPED_TRACE(shape.name());
    Stream stream;
    ZYFA_ASSERT_CUDA(stream.error());
    DeviceProblem problem(shape, seed);
    ASSERT_EQ(problem.status(), "");
    ASSERT_EQ(problem.share_batch0_kv(), "");
    zyfa_attn_desc mappable = problem.desc();
    DeviceBuffer workspace;
    if (shape.dtype == ZYFA_DTYPE_FP8_E4M3) {
      size_t bytes = 0;
      ASSERT_EQ(zyfa_attn_workspace_size(&mappable, &bytes), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
      ASSERT_GT(bytes, 0u) << "the shape should take the V^T workspace (the kernel of 192-row tiles)";
      ASSERT_EQ(workspace.allocate(bytes), "");
      mappable.workspace = workspace.get();
      mappable.workspace_bytes = bytes;
    }
    zyfa_attn_desc broadcast = problem.broadcast_kv_desc();
    broadcast.workspace = mappable.workspace;
    broadcast.workspace_bytes = mappable.workspace_bytes;
    ASSERT_EQ(zyfa_attn_prepare(&mappable, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();

    Graph graph;
    ZYFA_ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const zyfa_status captured = zyfa_attn_fwd(&broadcast, stream);
    const std::string message = zyfa_last_error();
    const cudaError_t end = cudaStreamEndCapture(stream, &graph.graph);
    ASSERT_EQ(captured, ZYFA_STATUS_SUCCESS) << message;
    ZYFA_ASSERT_CUDA(end);
    ZYFA_ASSERT_CUDA(cudaGraphInstantiate(&graph.exec, graph.graph, 0));

    std::vector<uint8_t> eager_out, eager_lse, graph_out, graph_lse;
    ZYFA_ASSERT_CUDA(problem.poison(stream));
    ASSERT_EQ(zyfa_attn_fwd(&broadcast, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
    ASSERT_EQ(problem.download_bytes(&eager_out, &eager_lse), "");
    ZYFA_ASSERT_CUDA(problem.poison(stream));
    ZYFA_ASSERT_CUDA(cudaGraphLaunch(graph.exec, stream));
    ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
    ASSERT_EQ(problem.download_bytes(&graph_out, &graph_lse), "");
    int64_t unwritten = 0;  // BF16 outputs still holding the poison (all-ones bytes)
    for (size_t i = 0; i + 1 < graph_out.size(); i += 2) unwritten += graph_out[i] == 0xff && graph_out[i + 1] == 0xff;
    EXPECT_EQ(unwritten, 0) << "the replay left outputs unwritten";
    EXPECT_TRUE(graph_out == eager_out && graph_lse == eager_lse) << "the replay differs from the eager call";
    ASSERT_EQ(problem.download(), "");
    EXPECT_TRUE(matches_fp64(problem.host()));
  }
}

TEST(ReliabilityGraphsUnprepared, CaptureWithoutPrepareIsRefusedAndTheCaptureSurvives) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
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

// A serving thread's eager calls while another thread captures in global mode: each call builds a plan,
// evicts the last one (capacity 1) and frees the tables of finished launches, which takes cudaFree and
// event queries, calls a global capture forbids to threads that have not relaxed their mode. zyfa relaxes
// its own thread's mode around them, so the capture must survive, the serving thread's tables must still
// be freed (memory stays bounded) and every result must be right.
TEST(ReliabilityGraphsConcurrent, EvictionsInAnotherThreadLeaveAGlobalCaptureIntact) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  Stream capture_stream, serve_stream;
  ZYFA_ASSERT_CUDA(capture_stream.error());
  ZYFA_ASSERT_CUDA(serve_stream.error());
  DeviceProblem captured(attention_shape(ZYFA_DTYPE_BF16, 128, 1, 300, 4, 2), seed);
  ASSERT_EQ(captured.status(), "");
  std::vector<std::unique_ptr<DeviceProblem>> served;
  for (int i = 0; i < kEvictingShapes; ++i) {
    served.push_back(std::make_unique<DeviceProblem>(
        attention_shape(ZYFA_DTYPE_BF16, 128, 1, kConcurrentSeqlenBase + i, 4, 2), seed + 1 + uint64_t(i)));
    ASSERT_EQ(served.back()->status(), "");
    ZYFA_ASSERT_CUDA(served.back()->poison(serve_stream));
  }
  const zyfa_attn_desc captured_desc = captured.desc();
  ZYFA_ASSERT_CUDA(captured.poison(capture_stream));
  ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());

  // Start from an empty cache, so that the table bytes below are this test's alone.
  CapacityGuard restore;
  ASSERT_EQ(zyfa_plan_cache_clear(), ZYFA_STATUS_SUCCESS);
  ASSERT_EQ(zyfa_attn_prepare(&captured_desc, capture_stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ASSERT_EQ(zyfa_plan_cache_set_capacity(1), ZYFA_STATUS_SUCCESS);
  const uint64_t evictions_before = cache_stats().evictions;

  Graph graph;
  ZYFA_ASSERT_CUDA(cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeGlobal));
  const zyfa_status in_capture = zyfa_attn_fwd(&captured_desc, capture_stream);
  const uint64_t bytes_before_serving = cache_stats().device_bytes;

  std::vector<zyfa_status> statuses;
  std::vector<std::string> messages;
  std::vector<cudaError_t> syncs;
  std::vector<cudaError_t> mode_swaps;  // the serving thread's two capture-mode exchanges around each wait
  std::vector<uint64_t> bytes_after;
  std::vector<cudaStreamCaptureStatus> capture_after;  // after each served call: which one broke it, if any
  std::vector<cudaError_t> capture_queries;            // each cudaStreamIsCapturing's own result
  std::thread server([&] {
    for (const auto &problem : served) {
      const zyfa_attn_desc desc = problem->desc();
      statuses.push_back(zyfa_attn_fwd(&desc, serve_stream));
      messages.push_back(zyfa_last_error());
      // The test's own wait, in relaxed mode: the point is zyfa's calls, which run in this thread's default.
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      mode_swaps.push_back(cudaThreadExchangeStreamCaptureMode(&mode));
      syncs.push_back(cudaStreamSynchronize(serve_stream));
      mode_swaps.push_back(cudaThreadExchangeStreamCaptureMode(&mode));
      bytes_after.push_back(cache_stats().device_bytes);
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      capture_queries.push_back(cudaStreamIsCapturing(capture_stream, &status));
      capture_after.push_back(status);
    }
  });
  server.join();

  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  const cudaError_t query = cudaStreamIsCapturing(capture_stream, &capturing);
  const cudaError_t end = cudaStreamEndCapture(capture_stream, &graph.graph);
  cudaGetLastError();  // a failed capture's error must not stay pending for the rest of the test binary
  ASSERT_EQ(in_capture, ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_ASSERT_CUDA(query);
  ASSERT_EQ(statuses.size(), served.size());
  for (size_t i = 0; i < served.size(); ++i) {
    SCOPED_TRACE("served call " + std::to_string(i));
    ZYFA_EXPECT_CUDA(capture_queries[i]);
    EXPECT_EQ(capture_after[i], cudaStreamCaptureStatusActive) << "this call or its wait invalidated the capture";
    ASSERT_EQ(statuses[i], ZYFA_STATUS_SUCCESS) << messages[i];
    ZYFA_ASSERT_CUDA(syncs[i]);
    ZYFA_ASSERT_CUDA(mode_swaps[2 * i]);
    ZYFA_ASSERT_CUDA(mode_swaps[2 * i + 1]);
  }
  EXPECT_EQ(capturing, cudaStreamCaptureStatusActive) << "the other thread's calls invalidated the capture";
  ZYFA_ASSERT_CUDA(end);
  EXPECT_GE(cache_stats().evictions, evictions_before + served.size() - 1) << "capacity 1 should evict every call";
  // One served table is T bytes (the first call built one and had nothing to free). Freed as their launches
  // finish, the served tables hold at most two at a time; kept, they would hold all of them.
  ASSERT_GT(bytes_after.front(), bytes_before_serving) << "the first served call built no table";
  const uint64_t table = bytes_after.front() - bytes_before_serving;
  EXPECT_LE(bytes_after.back(), bytes_before_serving + 2 * table)
      << "the serving thread's evicted tables were not freed while the capture was open";

  ZYFA_ASSERT_CUDA(cudaGraphInstantiate(&graph.exec, graph.graph, 0));
  ZYFA_ASSERT_CUDA(cudaGraphLaunch(graph.exec, capture_stream));
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(capture_stream));
  ASSERT_EQ(captured.download(), "");
  EXPECT_TRUE(matches_fp64(captured.host()));
  for (size_t i = 0; i < served.size(); ++i) {
    SCOPED_TRACE("served call " + std::to_string(i));
    ASSERT_EQ(served[i]->download(), "");
    EXPECT_TRUE(matches_fp64(served[i]->host()));
  }
}

}  // namespace
}  // namespace zyfa::test::reliability
