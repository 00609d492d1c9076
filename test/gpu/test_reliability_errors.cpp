// Error hygiene through the public API.
//  - Every zyfa_status is reached here, or the table says why it cannot be on this machine; the table
//    must name every status the header declares.
//  - zyfa_last_error() is per thread, and a thread's message survives other threads' failures.
//  - A failed GPU call writes nothing: device outputs keep their poison, inputs their values.
//  - A pending CUDA error left by the application is reported (ZYFA_STATUS_CUDA_ERROR), not cleared; a
//    sticky one (a kernel that faulted) is reported by every GPU entry point, in a child process.
// The child processes (ReliabilityChild.DISABLED_*) run this binary again with one test selected.
#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "host/cuda_api.hpp"
#include "host/error.hpp"
#include "reliability.hpp"

extern char **environ;

namespace zyfa::test::reliability {
namespace {

constexpr uint16_t kPoison = 0xffff;
constexpr int64_t kS = 5, kH = 4, kHk = 2, kD = 128;
// Absurd on any device: the allocation that leaves a pending (not sticky) CUDA error.
constexpr size_t kImpossibleBytes = size_t(1) << 62;
// Device memory is filled in chunks down to this size before a plan upload must run out.
constexpr size_t kSmallestFillChunk = size_t(1) << 20;
// A shape whose job table (64 * 64 * 128 jobs of 16 bytes = 8 MiB) cannot fit in under one chunk.
constexpr int64_t kOomBatch = 64, kOomHeads = 64, kOomSeqlen = 32768;
// A shape no other test prepares, for NOT_PREPARED.
constexpr int64_t kUnpreparedSeqlen = 4447;
constexpr int kThreads = 8, kRoundsPerThread = 500;

// ---------------------------------------------------------------- descriptors and their spoilers

// A valid small BF16 problem over any four tensors and an LSE (host or device memory).
zyfa_attn_desc base_desc(const void *q, const void *k, const void *v, void *out, float *lse) {
  zyfa_attn_desc d = ZYFA_ATTN_DESC_INIT;
  d.batch = 1;
  d.seqlen = kS;
  d.nheads = kH;
  d.nheads_k = kHk;
  d.q = q;
  d.k = k;
  d.v = v;
  d.out = out;
  d.lse = lse;
  return d;
}

// One way to break a descriptor, the status it must give, and a part of the message (the field).
struct Spoil {
  zyfa_status status;
  const char *field;
  void (*apply)(zyfa_attn_desc &);
};

void set_int(void *field, int value) { std::memcpy(field, &value, sizeof value); }  // any int, as C may

void make_fp8(zyfa_attn_desc &d) {
  d.dtype = ZYFA_DTYPE_FP8_E4M3;
  d.q_descale = d.k_descale = d.v_descale = zyfa_descale{ZYFA_DESCALE_HOST, 1.0f, nullptr, 0, 0};
}

// test/host/test_validation.cpp checks every field and message thoroughly; these are one per status,
// reused below on device memory.
const Spoil kSpoils[] = {
    {ZYFA_STATUS_BAD_STRUCT_SIZE, "struct_size", [](zyfa_attn_desc &d) { d.struct_size += 8; }},
    {ZYFA_STATUS_BAD_DTYPE, "dtype", [](zyfa_attn_desc &d) { set_int(&d.dtype, 7); }},
    {ZYFA_STATUS_BAD_LAYOUT, "layout", [](zyfa_attn_desc &d) { set_int(&d.layout, 9); }},
    {ZYFA_STATUS_UNSUPPORTED_HEAD_DIM, "d_qk", [](zyfa_attn_desc &d) { d.d_qk = 64; }},
    {ZYFA_STATUS_BAD_SHAPE, "seqlen", [](zyfa_attn_desc &d) { d.seqlen = 0; }},
    {ZYFA_STATUS_BAD_HEAD_RATIO, "nheads_k", [](zyfa_attn_desc &d) { d.nheads_k = 3; }},
    {ZYFA_STATUS_BAD_STRIDE, "out_strides",
     [](zyfa_attn_desc &d) {
       d.layout = ZYFA_LAYOUT_STRIDED;
       d.q_strides = {kS * kH * kD, kH * kD, kD};
       d.k_strides = d.v_strides = {kS * kHk * kD, kHk * kD, kD};
       d.out_strides = {kS * kH * kD, kD, kD};  // rows of the output collide
     }},
    {ZYFA_STATUS_MISALIGNED, "desc->v", [](zyfa_attn_desc &d) { d.v = static_cast<const char *>(d.v) + 2; }},
    {ZYFA_STATUS_NULL_TENSOR, "desc->out", [](zyfa_attn_desc &d) { d.out = nullptr; }},
    {ZYFA_STATUS_ALIASED_OUTPUT, "overlaps", [](zyfa_attn_desc &d) { d.out = const_cast<void *>(d.q); }},
    {ZYFA_STATUS_BAD_DESCALE, "k_descale",
     [](zyfa_attn_desc &d) {
       make_fp8(d);
       d.k_descale.value = -1.0f;
     }},
    {ZYFA_STATUS_FP8_FIELD_WITH_BF16, "q_descale", [](zyfa_attn_desc &d) { d.q_descale.kind = ZYFA_DESCALE_HOST; }},
    {ZYFA_STATUS_NOT_CAUSAL, "causal", [](zyfa_attn_desc &d) { d.causal = 0; }},
    {ZYFA_STATUS_SIZE_OVERFLOW, "desc->",
     [](zyfa_attn_desc &d) {
       d.batch = int64_t(1) << 30;
       d.seqlen = int64_t(1) << 30;
     }},
    {ZYFA_STATUS_BAD_SOFTMAX_SCALE, "softmax_scale", [](zyfa_attn_desc &d) { d.softmax_scale = -1.0f; }},
};

const Spoil *spoil_for(zyfa_status status) {
  for (const Spoil &s : kSpoils) {
    if (s.status == status) return &s;
  }
  return nullptr;
}

// Host tensors of the base problem, outputs poisoned.
struct HostBuffers {
  std::vector<uint16_t> q = std::vector<uint16_t>(kS * kH * kD, 0x3f80);
  std::vector<uint16_t> k = std::vector<uint16_t>(kS * kHk * kD, 0x3f80);
  std::vector<uint16_t> v = std::vector<uint16_t>(kS * kHk * kD, 0x3f80);
  std::vector<uint16_t> out = std::vector<uint16_t>(kS * kH * kD, kPoison);
  std::vector<float> lse = std::vector<float>(kH * kS, -1.0f);
  zyfa_attn_desc desc() { return base_desc(q.data(), k.data(), v.data(), out.data(), lse.data()); }
};

zyfa_status spoiled_host_call(zyfa_status status) {
  HostBuffers b;
  zyfa_attn_desc d = b.desc();
  spoil_for(status)->apply(d);
  return zyfa_attn_fwd_host(&d);
}

// ---------------------------------------------------------------- child processes

// Runs this binary again with only ReliabilityChild.DISABLED_<name> selected and `env` added. Returns "" when
// the child ran exactly that one test and it passed, else what went wrong. The exit code alone would not
// say: GoogleTest exits 0 when its filter matches nothing or its one test skips, so the child writes a JSON
// report, and inherited GTEST_* variables (sharding, output) are dropped so that they cannot move its test
// to another shard or send its report elsewhere.
std::string run_child(const std::string &name, const std::vector<std::string> &env) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "readlink(/proc/self/exe) failed";
  exe[n] = '\0';
  char report[] = "/tmp/zyfa-child-XXXXXX";
  const int fd = mkstemp(report);
  if (fd < 0) return "mkstemp failed";
  close(fd);
  std::string filter = "--gtest_filter=ReliabilityChild.DISABLED_" + name;
  std::string also = "--gtest_also_run_disabled_tests";
  std::string output = std::string("--gtest_output=json:") + report;
  char *argv[] = {exe, filter.data(), also.data(), output.data(), nullptr};
  std::vector<std::string> storage = env;
  std::vector<char *> envp;
  for (std::string &e : storage) envp.push_back(e.data());
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "GTEST_", 6) != 0) envp.push_back(*e);
  envp.push_back(nullptr);
  pid_t pid = 0;
  int status = 0;
  std::string verdict;
  if (posix_spawn(&pid, exe, nullptr, nullptr, argv, envp.data()) != 0) verdict = "posix_spawn failed";
  else if (waitpid(pid, &status, 0) != pid) verdict = "waitpid failed";
  else if (!WIFEXITED(status)) verdict = "the child did not exit normally";
  else if (WEXITSTATUS(status) != 0) verdict = "the child's test failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
  std::string json;
  if (FILE *f = std::fopen(report, "r")) {
    char buf[4096];
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;) json.append(buf, got);
    std::fclose(f);
  }
  std::remove(report);
  if (!verdict.empty()) return verdict;
  // GoogleTest's JSON report: the run's totals come first, then each test's result.
  if (json.find("\"tests\": 1,") == std::string::npos) return "the child did not run exactly one test";
  if (json.find("\"failures\": 0,") == std::string::npos) return "the child reported failures";
  if (json.find("\"result\": \"COMPLETED\"") == std::string::npos) return "the child's test skipped or did not complete";
  return "";
}

bool gpu_here() { return gpu_unavailable_reason().empty(); }

// ---------------------------------------------------------------- GPU-side triggers

// A trigger that could not run as planned: the table reports `why` and fails.
zyfa_status broken(std::string *note, std::string why) {
  *note = std::move(why);
  return ZYFA_STATUS_INTERNAL;
}

// A pending error the application left (a failed allocation), then a call: CUDA_ERROR, error kept.
zyfa_status call_with_pending_error(std::string *note) {
  ZYFA_TRACED_SEED(seed);
  DeviceProblem p(attention_shape(ZYFA_DTYPE_BF16, 128, 1, 64, 2, 1), seed);
  if (!p.status().empty()) return broken(note, p.status());
  void *never = nullptr;
  if (cudaMalloc(&never, kImpossibleBytes) == cudaSuccess) return broken(note, "an impossible cudaMalloc succeeded");
  const zyfa_attn_desc d = p.desc();
  const zyfa_status s = zyfa_attn_fwd(&d, nullptr);
  if (cudaPeekAtLastError() == cudaSuccess) *note = "zyfa cleared the application's pending error";
  cudaGetLastError();  // the application clears its own error
  return s;
}

// Device memory filled to under one small chunk, then a plan that must be uploaded: OUT_OF_MEMORY.
zyfa_status prepare_without_device_memory(std::string *note) {
  std::vector<void *> held;
  for (size_t chunk = size_t(1) << 30; chunk >= kSmallestFillChunk; chunk /= 4) {
    void *p = nullptr;
    while (cudaMalloc(&p, chunk) == cudaSuccess) held.push_back(p);
    cudaGetLastError();  // this test's own failed allocation
  }
  zyfa_attn_desc d = base_desc(nullptr, nullptr, nullptr, nullptr, nullptr);
  d.batch = kOomBatch;
  d.nheads = d.nheads_k = kOomHeads;
  d.seqlen = kOomSeqlen;
  const zyfa_status s = zyfa_attn_prepare(&d, nullptr);
  for (void *p : held) {
    if (cudaFree(p) != cudaSuccess) *note = "cudaFree of the test's own filler failed";
  }
  if (cudaPeekAtLastError() != cudaSuccess) *note = "the failed upload left a CUDA error pending";
  return s;
}

zyfa_status capture_without_prepare(std::string *note) {
  Stream stream;
  if (stream.error() != cudaSuccess) return broken(note, "cudaStreamCreate failed");
  ZYFA_TRACED_SEED(seed);
  DeviceProblem p(attention_shape(ZYFA_DTYPE_BF16, 128, 1, kUnpreparedSeqlen, 2, 2), seed);
  if (!p.status().empty()) return broken(note, p.status());
  const zyfa_attn_desc d = p.desc();
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess) {
    return broken(note, "cudaStreamBeginCapture failed");
  }
  const zyfa_status s = zyfa_attn_fwd(&d, stream);
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess) *note = "the capture broke";
  if (graph && cudaGraphDestroy(graph) != cudaSuccess) *note = "cudaGraphDestroy failed";
  return s;
}

// Any CUDA device at all, Hopper or not: with one present, even an unsupported one, a direct call reports
// UNSUPPORTED_DEVICE, so NO_DEVICE needs a child that sees none.
bool any_cuda_device() {
  int count = 0;
  const bool any = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();  // a machine without a driver leaves its error here
  return any;
}

zyfa_status no_device(std::string *note) {
  if (!any_cuda_device()) {
    HostBuffers b;
    const zyfa_attn_desc d = b.desc();
    return zyfa_attn_fwd(&d, nullptr);
  }
  // With a GPU here, a child process that sees none.
  const std::string child = run_child("NoDeviceIsReported", {"CUDA_VISIBLE_DEVICES="});
  if (child.empty()) return ZYFA_STATUS_NO_DEVICE;
  return broken(note, "the child process with CUDA_VISIBLE_DEVICES empty: " + child);
}

// ---------------------------------------------------------------- the table

struct Reach {
  zyfa_status status;
  const char *where;  // the tests that exercise it
  bool needs_gpu;
  std::function<zyfa_status(std::string *note)> trigger;  // empty: cannot be reached (why in `where`)
};

std::vector<Reach> reach_table() {
  std::vector<Reach> table;
  table.push_back({ZYFA_STATUS_SUCCESS, "every accuracy test", false, [](std::string *) {
                     HostBuffers b;
                     const zyfa_attn_desc d = b.desc();
                     return zyfa_attn_fwd_host(&d);
                   }});
  table.push_back({ZYFA_STATUS_NULL_ARGUMENT, "test_validation.cpp Validation.NullDescriptor; fuzz", false,
                   [](std::string *) { return zyfa_attn_fwd_host(nullptr); }});
  for (const Spoil &s : kSpoils) {
    table.push_back({s.status, "test_validation.cpp InvalidDescriptor/*; fuzz; FailedGpuCallsWriteNothing here",
                     false, [status = s.status](std::string *) { return spoiled_host_call(status); }});
  }
  table.push_back({ZYFA_STATUS_NO_DEVICE, "here: directly on a machine without a GPU, else in a child process", false,
                   no_device});
  table.push_back({ZYFA_STATUS_UNSUPPORTED_DEVICE,
                   "here through cuda_api.cpp's require_hopper with sm_80; test_internal_statuses.cpp (the public API "
                   "needs a GPU other than sm_90)",
                   false, [](std::string *) { return zyfa::cuda::require_hopper(0, 8, 0); }});
  table.push_back({ZYFA_STATUS_CUDA_ERROR, "here, and ReliabilityErrors.Pending/StickyCudaError*", true,
                   call_with_pending_error});
  table.push_back({ZYFA_STATUS_OUT_OF_MEMORY, "here (device memory filled); test_plan_cache.cpp FailedUpload*", true,
                   prepare_without_device_memory});
  table.push_back({ZYFA_STATUS_NOT_PREPARED,
                   "here; ReliabilityErrors.CaptureOfAnother{PRounding,StridesKernel}IsRefused; test_reliability_graphs.cpp "
                   "ReliabilityGraphsUnprepared",
                   true, capture_without_prepare});
  table.push_back({ZYFA_STATUS_BAD_ARGUMENT, "test_quantize.cpp QuantizeValidation; test_plan_cache.cpp", false,
                   [](std::string *) { return zyfa_plan_cache_set_capacity(0); }});
  table.push_back({ZYFA_STATUS_INTERNAL,
                   "here through guarded() with a throwing body; test_internal_statuses.cpp; test_plan_cache.cpp "
                   "(the public API reaches it only through a bug, and the fuzz target fails on it)",
                   false, [](std::string *) { return zyfa::guarded("reach_table", []() -> zyfa_status { throw 0; }); }});
  return table;
}

// "ZYFA_STATUS_X" of the status string "ZYFA_STATUS_X: text".
std::string status_name(zyfa_status status) {
  const std::string full = zyfa_status_string(status);
  return full.substr(0, full.find(':'));
}

TEST(ReliabilityErrors, EveryStatusIsReachedOrExplained) {
  const std::vector<Reach> table = reach_table();
  int reached = 0, unreachable = 0, needs_gpu = 0;
  for (int value = ZYFA_STATUS_SUCCESS; value <= ZYFA_STATUS_INTERNAL; ++value) {
    const auto status = static_cast<zyfa_status>(value);
    int rows = 0;
    for (const Reach &r : table) {
      if (r.status != status) continue;
      ++rows;
      SCOPED_TRACE(status_name(status));
      if (!r.trigger) {
        std::printf("[ statuses ] %-33s not reachable: %s\n", status_name(status).c_str(), r.where);
        ++unreachable;
      } else if (r.needs_gpu && !gpu_here()) {
        std::printf("[ statuses ] %-33s needs a GPU: not reached on this machine (%s)\n",
                    status_name(status).c_str(), r.where);
        ++needs_gpu;
      } else {
        std::string note;
        const zyfa_status got = r.trigger(&note);
        EXPECT_EQ(got, status) << zyfa_last_error() << " " << note;
        EXPECT_EQ(note, "");
        if (got != ZYFA_STATUS_SUCCESS && status != ZYFA_STATUS_NO_DEVICE) {
          EXPECT_STRNE(zyfa_last_error(), "") << "a failure without a message";
        }
        std::printf("[ statuses ] %-33s reached (%s)\n", status_name(status).c_str(), r.where);
        ++reached;
      }
    }
    EXPECT_EQ(rows, 1) << "status " << value << " needs exactly one row in the table";
  }
  std::printf("[ statuses ] %d reached, %d need a GPU, %d not reachable on this machine\n", reached, needs_gpu,
              unreachable);
  // The rows that need a GPU were not checked: say so as a skip, not a pass (the host rows' checks above stand).
  if (needs_gpu > 0) GTEST_SKIP() << needs_gpu << " statuses need a GPU; the " << reached << " reachable here passed";
}

// ---------------------------------------------------------------- per-thread messages

TEST(ReliabilityErrors, LastErrorIsPerThread) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Spoil &mine = kSpoils[size_t(t) % std::size(kSpoils)];
      HostBuffers b;
      for (int r = 0; r < kRoundsPerThread; ++r) {
        zyfa_attn_desc d = b.desc();
        mine.apply(d);
        if (zyfa_attn_fwd_host(&d) != mine.status) ++wrong;
        const char *message = zyfa_last_error();
        // Other threads fail with other fields meanwhile; this thread's message must stay its own.
        std::this_thread::yield();
        if (std::strstr(message, mine.field) == nullptr) ++wrong;
        if (r % 16 == 0) {
          zyfa_attn_desc ok = b.desc();
          if (zyfa_attn_fwd_host(&ok) != ZYFA_STATUS_SUCCESS || zyfa_last_error()[0] != '\0') ++wrong;
        }
      }
    });
  }
  for (std::thread &t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0) << "a thread saw another thread's status or message";
}

// ---------------------------------------------------------------- failed GPU calls write nothing

TEST(ReliabilityErrors, FailedGpuCallsWriteNothing) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  DeviceProblem p(attention_shape(ZYFA_DTYPE_BF16, 128, 1, kS, kH, kHk), seed);
  ASSERT_EQ(p.status(), "");
  const zyfa_attn_desc valid = p.desc();
  std::vector<uint8_t> q_before(p.host().q.size_bytes()), q_after(q_before.size()), out, lse;
  ZYFA_ASSERT_CUDA(cudaMemcpy(q_before.data(), valid.q, q_before.size(), cudaMemcpyDeviceToHost));
  for (const Spoil &s : kSpoils) {
    SCOPED_TRACE(zyfa_status_string(s.status));
    ZYFA_ASSERT_CUDA(p.poison(nullptr));
    zyfa_attn_desc d = valid;
    s.apply(d);
    EXPECT_EQ(zyfa_attn_fwd(&d, nullptr), s.status) << zyfa_last_error();
    EXPECT_EQ(zyfa_attn_prepare(&d, nullptr), s.status == ZYFA_STATUS_NULL_TENSOR ? ZYFA_STATUS_SUCCESS : s.status)
        << "prepare validates the same fields (pointers may be NULL there)";
    ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(p.download_bytes(&out, &lse), "");
    for (uint8_t b : out) ASSERT_EQ(b, 0xff) << "a refused call wrote the output";
    for (uint8_t b : lse) ASSERT_EQ(b, 0xff) << "a refused call wrote the LSE";
    ZYFA_ASSERT_CUDA(cudaMemcpy(q_after.data(), valid.q, q_after.size(), cudaMemcpyDeviceToHost));
    ASSERT_TRUE(q_after == q_before) << "a refused call wrote an input";
  }
}

// ---------------------------------------------------------------- CUDA errors from elsewhere

TEST(ReliabilityErrors, PendingCudaErrorIsReportedAndLeftInPlace) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  DeviceProblem p(attention_shape(ZYFA_DTYPE_BF16, 128, 1, 300, 4, 2), seed);
  ASSERT_EQ(p.status(), "");
  ZYFA_ASSERT_CUDA(p.poison(nullptr));
  ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
  const zyfa_attn_desc d = p.desc();
  void *never = nullptr;
  ASSERT_NE(cudaMalloc(&never, kImpossibleBytes), cudaSuccess);
  const cudaError_t pending = cudaPeekAtLastError();
  ASSERT_NE(pending, cudaSuccess) << "the failed allocation left no pending error to test with";
  EXPECT_EQ(zyfa_attn_fwd(&d, nullptr), ZYFA_STATUS_CUDA_ERROR);
  EXPECT_NE(std::string(zyfa_last_error()).find(cudaGetErrorName(pending)), std::string::npos) << zyfa_last_error();
  EXPECT_EQ(zyfa_attn_prepare(&d, nullptr), ZYFA_STATUS_CUDA_ERROR);
  EXPECT_EQ(cudaPeekAtLastError(), pending) << "zyfa swallowed the application's error";
  EXPECT_EQ(cudaGetLastError(), pending);  // the application clears it, and zyfa works again
  std::vector<uint8_t> out, lse;
  ASSERT_EQ(p.download_bytes(&out, &lse), "");
  for (uint8_t b : out) ASSERT_EQ(b, 0xff) << "the refused call wrote the output";
  for (uint8_t b : lse) ASSERT_EQ(b, 0xff) << "the refused call wrote the LSE";
  ZYFA_ASSERT_CUDA(p.poison(nullptr));  // so that the check below sees what this call writes
  ASSERT_EQ(zyfa_attn_fwd(&d, nullptr), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
  ASSERT_EQ(p.download(), "");
  EXPECT_TRUE(matches_fp64(p.host()));
}

TEST(ReliabilityErrors, StickyCudaErrorIsReportedByEveryGpuEntryPoint) {
  ZYFA_SKIP_WITHOUT_GPU();
  EXPECT_EQ(run_child("StickyErrorIsReported", {}), "") << "see the child's output above";
}

// A device reset ends the context that holds the loaded FP8 kernel; the next call must load it again.
TEST(ReliabilityErrors, CallsWorkAfterADeviceReset) {
  ZYFA_SKIP_WITHOUT_GPU();
  EXPECT_EQ(run_child("CallsWorkAfterADeviceReset", {}), "") << "see the child's output above";
}

// A context the caller created through the driver and made current stays current, and the calls run in it:
// the library's device switches and module loads once replaced it by the device's primary context.
TEST(ReliabilityErrors, CallsKeepTheCallersOwnContext) {
  ZYFA_SKIP_WITHOUT_GPU();
  EXPECT_EQ(run_child("CallsKeepTheCallersOwnContext", {}), "") << "see the child's output above";
}

// Two contexts of one device calling with one shape: each gets its own plans (a table of one context faults
// when read from another), and those of a context destroyed with its plans still cached are neither used nor
// freed again.
TEST(ReliabilityErrors, EachContextGetsItsOwnPlans) {
  ZYFA_SKIP_WITHOUT_GPU();
  EXPECT_EQ(run_child("EachContextGetsItsOwnPlans", {}), "") << "see the child's output above";
}

// A prepare readies the plan of a shape and the kernel of its P rounding. The plan's key does not name the P
// rounding, so a captured call with another one finds the plan, and must be refused rather than load its
// kernel inside the capture. In a child: a fresh process, where no other test has loaded that kernel.
TEST(ReliabilityErrors, CaptureOfAnotherPRoundingIsRefused) {
  ZYFA_SKIP_WITHOUT_GPU();
  EXPECT_EQ(run_child("CaptureOfAnotherPRoundingIsRefused", {}), "") << "see the child's output above";
}

// The BF16 kernel and the fallback share one plan where neither pairs heads (an odd group): an uncaptured call in
// strides TMA maps builds it and loads the BF16 kernel; a capture of the same shape in strides only the fallback
// takes finds the plan, and must be refused rather than load the fallback inside the capture. In a child: a fresh
// process, where no other test has loaded the fallback.
TEST(ReliabilityErrors, CaptureOfAnotherStridesKernelIsRefused) {
  ZYFA_SKIP_WITHOUT_GPU();
  EXPECT_EQ(run_child("CaptureOfAnotherStridesKernelIsRefused", {}), "") << "see the child's output above";
}

// Run only as children of the tests above (run_child).
TEST(ReliabilityChild, DISABLED_NoDeviceIsReported) {
  HostBuffers b;
  const zyfa_attn_desc d = b.desc();
  EXPECT_EQ(zyfa_attn_fwd(&d, nullptr), ZYFA_STATUS_NO_DEVICE);
  EXPECT_NE(std::string(zyfa_last_error()).find("zyfa_attn_fwd_host"), std::string::npos)
      << "the message should point to the CPU backend: " << zyfa_last_error();
  EXPECT_EQ(zyfa_attn_prepare(&d, nullptr), ZYFA_STATUS_NO_DEVICE);
  EXPECT_EQ(zyfa_attn_fwd_host(&d), ZYFA_STATUS_SUCCESS) << "the CPU backend needs no device";
}

TEST(ReliabilityChild, DISABLED_CallsWorkAfterADeviceReset) {
  ZYFA_SKIP_WITHOUT_GPU();
  const AttentionShape shape = attention_shape(ZYFA_DTYPE_FP8_E4M3, 128, 1, 300, 4, 2);  // the asmgen kernel
  const auto call = [&shape] {
    ZYFA_TRACED_SEED(seed);
    DeviceProblem p(shape, seed);
    ASSERT_EQ(p.status(), "");
    const zyfa_attn_desc d = p.desc();
    ASSERT_EQ(zyfa_attn_fwd(&d, nullptr), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(p.download(), "");
    EXPECT_TRUE(matches_fp64(p.host()));
  };
  {
    SCOPED_TRACE("before the reset");
    call();
  }
  // No clear first: the plans and the loaded kernel belong to the context the reset ends (keyed by its ID),
  // so the next call builds and loads its own.
  ZYFA_ASSERT_CUDA(cudaDeviceReset());
  {
    SCOPED_TRACE("after the reset");
    call();
  }
  // The reset context's plan is the least recently used: a capacity of one evicts it. Its table is gone with
  // its context and may share its address with the new context's table, which must stay as it is.
  CapacityGuard restore;
  ASSERT_EQ(zyfa_plan_cache_set_capacity(1), ZYFA_STATUS_SUCCESS);
  {
    SCOPED_TRACE("after the old plan's eviction");
    call();
  }
  ASSERT_EQ(zyfa_plan_cache_clear(), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  {
    SCOPED_TRACE("after a clear");
    call();
  }
}

// The driver's context functions at the 12.0 ABI, as the library resolves its own (the tests link the runtime
// only). At that ABI cuCtxCreate is cuCtxCreate_v3: (context, affinity params, their count, flags, device).
template <typename Fn>
Fn driver_function(const char *symbol) {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  constexpr unsigned kAbi = 12000;
  if (cudaGetDriverEntryPointByVersion(symbol, &p, kAbi, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(p);
}

struct DriverContexts {
  using Create = CUresult (*)(CUcontext *, CUexecAffinityParam *, int, unsigned, CUdevice);
  using GetCurrent = CUresult (*)(CUcontext *);
  using SetCurrent = CUresult (*)(CUcontext);
  using Destroy = CUresult (*)(CUcontext);
  const Create create_on = driver_function<Create>("cuCtxCreate");
  const GetCurrent get_current = driver_function<GetCurrent>("cuCtxGetCurrent");
  const SetCurrent set_current = driver_function<SetCurrent>("cuCtxSetCurrent");
  const Destroy destroy = driver_function<Destroy>("cuCtxDestroy");
  bool resolved() const { return create_on && get_current && set_current && destroy; }
  // A new context of the current device, made current.
  CUresult create(CUcontext *context) const {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return CUDA_ERROR_INVALID_DEVICE;
    return create_on(context, nullptr, 0, 0, CUdevice(device));
  }
};

// A BF16 call (the runtime's kernels) and an FP8 one (a code object the library loads itself) in whatever
// context is current, each checked against fp64; the call must leave that context current.
void call_each_dtype(const DriverContexts &driver) {
  for (zyfa_dtype dtype : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    SCOPED_TRACE(dtype == ZYFA_DTYPE_BF16 ? "bf16" : "fp8");
    ZYFA_TRACED_SEED(seed);
    DeviceProblem p(attention_shape(dtype, 128, 1, 300, 4, 2), seed);
    ASSERT_EQ(p.status(), "");
    // Read after the inputs' allocations, which make the primary context current where none was.
    CUcontext before = nullptr, after = nullptr;
    ASSERT_EQ(driver.get_current(&before), CUDA_SUCCESS);
    const zyfa_attn_desc d = p.desc();
    ASSERT_EQ(zyfa_attn_fwd(&d, nullptr), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    ASSERT_EQ(driver.get_current(&after), CUDA_SUCCESS);
    EXPECT_EQ(after, before) << "the call left another context current";
    ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(p.download(), "");
    EXPECT_TRUE(matches_fp64(p.host()));
  }
}

TEST(ReliabilityChild, DISABLED_CallsKeepTheCallersOwnContext) {
  ZYFA_SKIP_WITHOUT_GPU();
  const DriverContexts driver;
  ASSERT_TRUE(driver.resolved()) << "driver entry points";
  CUcontext own = nullptr;
  ASSERT_EQ(driver.create(&own), CUDA_SUCCESS);
  // Twice: the first builds the plans and loads the kernel, the second finds both.
  for (int call = 0; call < 2; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    call_each_dtype(driver);
  }
  ASSERT_EQ(zyfa_plan_cache_clear(), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(driver.destroy(own), CUDA_SUCCESS);
}

TEST(ReliabilityChild, DISABLED_EachContextGetsItsOwnPlans) {
  ZYFA_SKIP_WITHOUT_GPU();
  const DriverContexts driver;
  ASSERT_TRUE(driver.resolved()) << "driver entry points";
  CUcontext first = nullptr, second = nullptr;
  ASSERT_EQ(driver.create(&first), CUDA_SUCCESS);
  {
    SCOPED_TRACE("first context");
    call_each_dtype(driver);
  }
  ASSERT_EQ(driver.create(&second), CUDA_SUCCESS);
  {
    SCOPED_TRACE("second context, the same shapes");
    call_each_dtype(driver);
  }
  // The second context ends with its plans cached: the cache must neither hand them out nor free them.
  ASSERT_EQ(driver.destroy(second), CUDA_SUCCESS);
  ASSERT_EQ(driver.set_current(first), CUDA_SUCCESS);
  {
    SCOPED_TRACE("first context again");
    call_each_dtype(driver);
  }
  zyfa_plan_cache_stats before = ZYFA_PLAN_CACHE_STATS_INIT;
  ASSERT_EQ(zyfa_plan_cache_get_stats(&before), ZYFA_STATUS_SUCCESS);
  EXPECT_GE(before.entries, 4u) << "two contexts, two dtypes: a plan each";
  ASSERT_EQ(zyfa_plan_cache_clear(), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "freeing the plans left an error pending";
  zyfa_plan_cache_stats after = ZYFA_PLAN_CACHE_STATS_INIT;
  ASSERT_EQ(zyfa_plan_cache_get_stats(&after), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(after.entries, 0u);
  EXPECT_EQ(after.device_bytes, 0u);
  EXPECT_EQ(driver.destroy(first), CUDA_SUCCESS);
  {
    SCOPED_TRACE("the primary context");
    call_each_dtype(driver);
  }
}

TEST(ReliabilityChild, DISABLED_StickyErrorIsReported) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  DeviceProblem p(attention_shape(ZYFA_DTYPE_BF16, 128, 1, 300, 4, 2), seed);
  ASSERT_EQ(p.status(), "");
  const zyfa_attn_desc valid = p.desc();
  // An output at an unmapped address: validation cannot know, the kernel faults, the context is lost.
  zyfa_attn_desc faulting = valid;
  faulting.out = reinterpret_cast<void *>(uintptr_t(16));
  faulting.lse = nullptr;
  ASSERT_EQ(zyfa_attn_fwd(&faulting, nullptr), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  const cudaError_t sticky = cudaDeviceSynchronize();
  ASSERT_NE(sticky, cudaSuccess) << "the write to an unmapped address did not fault";
  EXPECT_EQ(zyfa_attn_fwd(&valid, nullptr), ZYFA_STATUS_CUDA_ERROR);
  EXPECT_NE(std::string(zyfa_last_error()).find(cudaGetErrorName(sticky)), std::string::npos) << zyfa_last_error();
  EXPECT_EQ(zyfa_attn_prepare(&valid, nullptr), ZYFA_STATUS_CUDA_ERROR) << zyfa_last_error();
  std::vector<uint8_t> src(2 * 128, 0), dst(128);
  float descale = 0;
  zyfa_quantize_desc q = ZYFA_QUANTIZE_DESC_INIT;
  q.src = valid.q;  // device memory from before the fault
  q.dst = valid.out;
  q.descale = valid.lse;
  q.n_rows = 1;
  q.dim = 128;
  EXPECT_EQ(zyfa_quantize_fp8(&q, nullptr), ZYFA_STATUS_CUDA_ERROR) << zyfa_last_error();
  q.src = src.data();
  q.dst = dst.data();
  q.descale = &descale;
  EXPECT_EQ(zyfa_quantize_fp8_host(&q), ZYFA_STATUS_SUCCESS) << "host entry points need no device";
}

// A child's two captures of `desc` on `stream`: refused (NOT_PREPARED, a message naming `named`, no node added)
// while its kernel is not loaded; then, after a prepare of `desc` itself, run, with the right result.
void expect_capture_refused_until_prepared(DeviceProblem &problem, const zyfa_attn_desc &desc, cudaStream_t stream,
                                           const char *named) {
  ZYFA_ASSERT_CUDA(problem.poison(stream));
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  auto capture = [&](zyfa_status *status, std::string *message, cudaGraph_t *graph) {
    ZYFA_ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    *status = zyfa_attn_fwd(&desc, stream);
    *message = zyfa_last_error();
    ZYFA_ASSERT_CUDA(cudaStreamEndCapture(stream, graph));
  };
  zyfa_status refused = ZYFA_STATUS_SUCCESS;
  std::string message;
  cudaGraph_t graph = nullptr;
  capture(&refused, &message, &graph);
  ASSERT_NE(graph, nullptr);
  size_t nodes = 0;
  const cudaError_t counted = cudaGraphGetNodes(graph, nullptr, &nodes);
  ZYFA_EXPECT_CUDA(cudaGraphDestroy(graph));
  EXPECT_EQ(refused, ZYFA_STATUS_NOT_PREPARED);
  EXPECT_NE(message.find(named), std::string::npos) << "the message should name " << named << ": " << message;
  ZYFA_ASSERT_CUDA(counted);
  EXPECT_EQ(nodes, 0u) << "the refused call added to the graph";

  // Prepared as it is, the same capture runs and computes the right thing.
  ASSERT_EQ(zyfa_attn_prepare(&desc, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  zyfa_status accepted = ZYFA_STATUS_INTERNAL;
  graph = nullptr;
  capture(&accepted, &message, &graph);
  ASSERT_NE(graph, nullptr);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  ZYFA_EXPECT_CUDA(cudaGraphDestroy(graph));
  ASSERT_EQ(accepted, ZYFA_STATUS_SUCCESS) << message;
  ZYFA_ASSERT_CUDA(instantiated);
  const cudaError_t launched = cudaGraphLaunch(exec, stream);
  const cudaError_t synced = cudaStreamSynchronize(stream);
  ZYFA_EXPECT_CUDA(cudaGraphExecDestroy(exec));
  ZYFA_ASSERT_CUDA(launched);
  ZYFA_ASSERT_CUDA(synced);
  ASSERT_EQ(problem.download(), "");
  EXPECT_TRUE(matches_fp64(problem.host()));
}

TEST(ReliabilityChild, DISABLED_CaptureOfAnotherPRoundingIsRefused) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  Stream stream;
  ZYFA_ASSERT_CUDA(stream.error());
  AttentionShape shape = attention_shape(ZYFA_DTYPE_FP8_E4M3, 128, 1, 300, 4, 2, Layout::kBSHD, true);
  shape.p_rounding = ZYFA_P_ROUNDING_EXACT;
  DeviceProblem problem(shape, seed);
  ASSERT_EQ(problem.status(), "");
  const zyfa_attn_desc desc = problem.desc();
  zyfa_attn_desc lean = desc;
  lean.p_rounding = ZYFA_P_ROUNDING_LEAN;
  ASSERT_EQ(zyfa_attn_prepare(&lean, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  expect_capture_refused_until_prepared(problem, desc, stream, "p_rounding");
}

TEST(ReliabilityChild, DISABLED_CaptureOfAnotherStridesKernelIsRefused) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  Stream stream;
  ZYFA_ASSERT_CUDA(stream.error());
  DeviceProblem problem(attention_shape(ZYFA_DTYPE_BF16, 128, 2, 300, 6, 2), seed);  // group 3: no pairs
  ASSERT_EQ(problem.status(), "");
  ASSERT_EQ(problem.share_batch0_kv(), "");
  const zyfa_attn_desc mappable = problem.desc();
  ASSERT_EQ(zyfa_attn_fwd(&mappable, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();  // the plan, uncaptured
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  expect_capture_refused_until_prepared(problem, problem.broadcast_kv_desc(), stream, "fallback");
}

}  // namespace
}  // namespace zyfa::test::reliability
