#include "host/dispatch.hpp"

#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "host/cuda_api.hpp"
#include "host/error.hpp"
#include "host/fp8_asm_attention.hpp"
#include "host/plan_cache.hpp"
#include "kernels/launch.hpp"

namespace zyfa {
namespace {

// A kernel the dispatcher can pick: the first whose `supports` accepts the problem runs. The fallback,
// last, supports everything the descriptor can express.
struct KernelChoice {
  const char *name;
  bool (*supports)(const Problem &);
  int (*ctas_per_sm)();
  int (*launch)(const Problem &, const kernels::Schedule &, void *stream);
  // Work a launch would otherwise do the first time (loading a code object), done by zyfa_attn_prepare so
  // that a captured first call stays a pure launch. nullptr: nothing to prepare.
  int (*prepare)(const Problem &) = nullptr;
  // Query heads of one kv head per job the kernel prefers (a cluster of as many CTAs sharing K and V), and how
  // many such clusters the current context holds at once (a cudaError_t value). nullptr: one head per job.
  int (*heads_per_job)(const Problem &) = nullptr;
  int (*max_active_clusters)(const Problem &, int heads_per_job, int *clusters) = nullptr;
  // Query rows per tile of the job table the kernel walks. nullptr: numerics::kQueryTile.
  int (*query_tile_rows)(const Problem &) = nullptr;
  // Whether `prepare`'s work is done in the current context, without doing it (a cudaError_t value): a
  // captured call checks it, since the plan's key does not name everything that picks the code (p_rounding).
  // nullptr: a runtime kernel, which LoadedRuntimeKernels follows instead.
  int (*prepared)(const Problem &, bool *) = nullptr;
};

bool always(const Problem &) { return true; }

const KernelChoice kKernels[] = {
    {"bf16 hopper attention", kernels::bf16_attention_supports, kernels::bf16_attention_ctas_per_sm,
     kernels::launch_bf16_attention, kernels::prepare_bf16_attention, kernels::bf16_attention_heads_per_job,
     kernels::bf16_attention_max_active_clusters},
    {"fp8 asm attention (wgmma)", kernels::fp8_wgmma_attention_supports, kernels::fp8_attention_ctas_per_sm,
     kernels::launch_fp8_wgmma_attention, kernels::prepare_fp8_wgmma_attention, nullptr, nullptr,
     kernels::fp8_wgmma_query_tile_rows, kernels::fp8_wgmma_attention_loaded},
    {"fp8 asm attention (mma.sync)", kernels::fp8_asm_attention_supports, kernels::fp8_attention_ctas_per_sm,
     kernels::launch_fp8_asm_attention, kernels::prepare_fp8_asm_attention, nullptr, nullptr, nullptr,
     kernels::fp8_asm_attention_loaded},
    {"fallback attention", always, kernels::fallback_ctas_per_sm, kernels::launch_fallback_attention,
     kernels::prepare_fallback_attention},
};

const KernelChoice &choose_kernel(const Problem &problem) {
  for (const KernelChoice &k : kKernels) {
    if (k.supports(problem)) return k;
  }
  return kKernels[sizeof kKernels / sizeof kKernels[0] - 1];
}

// Split P where `kernel`, the one the dispatcher picked for `problem`, rounds P once: see check_split_p.
zyfa_status check_split_p(const Problem &problem, const KernelChoice &kernel) {
  if (!problem.split_p || kernel.supports != always) return ZYFA_STATUS_SUCCESS;
  // Only the wgmma kernels have split-P code objects (code_objects.cpp): the mma.sync ones and the fallback
  // round P once. Say why the wgmma kernels refuse the problem.
  const std::string reason = kernels::fp8_wgmma_refusal(problem);
  return fail(ZYFA_STATUS_BAD_ARGUMENT,
              "desc->p_rounding = ZYFA_P_ROUNDING_SPLIT (3): split P needs the TMA/wgmma kernels, and this problem "
              "falls to a kernel that rounds P once because %s; use ZYFA_P_ROUNDING_EXACT, or q, k and v that TMA "
              "can map",
              reason.c_str());
}

// How `kernel` walks `problem`'s plan. Query heads per job: the kernel's preference where the current context
// holds a cluster of that many CTAs, else one (an MPS or green-context partition may hold none, and a clustered
// launch there would fail rather than run); and the grid capped at the clusters it holds at once. Asked once per
// device, context (the plan's: `plan`), kernel and head dim (a failed query is asked again next call).
GridShape grid_shape(const KernelChoice &kernel, const Problem &problem, const PlanKey &plan) {
  const int rows = kernel.query_tile_rows ? kernel.query_tile_rows(problem) : numerics::kQueryTile;
  const int preferred = kernel.heads_per_job ? kernel.heads_per_job(problem) : 1;
  if (preferred == 1 || kernel.max_active_clusters == nullptr) return GridShape{kernel.ctas_per_sm(), preferred, 0, rows};
  const GridShape unpaired{kernel.ctas_per_sm(), 1, 0, rows};
  static std::mutex &mutex = *new std::mutex;  // never destroyed, like the plan cache (exit-time calls)
  static auto &held = *new std::map<std::tuple<int, uint64_t, const KernelChoice *, int64_t, int>, int>;
  const auto key = std::make_tuple(plan.device, plan.context_id, &kernel, problem.d_qk, preferred);
  int clusters = 0;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = held.find(key); it != held.end()) clusters = it->second, known = true;
  }
  if (!known) {
    if (kernel.max_active_clusters(problem, preferred, &clusters) != 0) return unpaired;
    std::lock_guard<std::mutex> lock(mutex);
    held.emplace(key, clusters);
  }
  return clusters > 0 ? GridShape{kernel.ctas_per_sm(), preferred, clusters, rows} : unpaired;
}

// `kernel`'s plan for `problem`: found, or built unless capturing (a plan returned under capture is pinned).
zyfa_status acquire_plan(PlanCache &cache, const PlanKey &key, const KernelChoice &kernel, const Problem &problem,
                         bool capturing, std::shared_ptr<const Plan> *plan) {
  return cache.acquire(key, grid_shape(kernel, problem, key), /*may_build=*/!capturing, /*pin=*/capturing, plan);
}

// The runtime kernels (those without a `prepared` hook: CUDA loads them lazily, at their first launch in a
// context) that a prepare or an uncaptured launch has loaded, per context, kernel, head dim, dtype and heads per
// job (the BF16 kernel's paired and unpaired variants are two kernels). The plan alone does not say: the BF16
// kernel and the fallback share one plan where neither pairs heads, so a shape run in strides TMA maps has a
// plan that a capture in strides it cannot map would find.
class LoadedRuntimeKernels {
 public:
  void mark(uint64_t context_id, const KernelChoice &kernel, const Problem &problem, int heads_per_job) {
    std::lock_guard<std::mutex> lock(mutex_);
    loaded_.insert(key(context_id, kernel, problem, heads_per_job));
  }
  bool contains(uint64_t context_id, const KernelChoice &kernel, const Problem &problem, int heads_per_job) {
    std::lock_guard<std::mutex> lock(mutex_);
    return loaded_.count(key(context_id, kernel, problem, heads_per_job)) != 0;
  }

 private:
  using Key = std::tuple<uint64_t, const KernelChoice *, int64_t, int, int>;
  static Key key(uint64_t context_id, const KernelChoice &kernel, const Problem &problem, int heads_per_job) {
    return Key{context_id, &kernel, problem.d_qk, int(problem.dtype), heads_per_job};
  }
  std::mutex mutex_;
  std::set<Key> loaded_;
};

LoadedRuntimeKernels &loaded_runtime_kernels() {
  static LoadedRuntimeKernels &loaded = *new LoadedRuntimeKernels;  // never destroyed, like the plan cache
  return loaded;
}

// A prepare's work for one kernel: its plan and its code loaded.
zyfa_status prepare_kernel(PlanCache &cache, const PlanKey &key, const KernelChoice &kernel, const Problem &problem,
                           bool capturing) {
  std::shared_ptr<const Plan> plan;
  if (zyfa_status s = acquire_plan(cache, key, kernel, problem, capturing, &plan)) return s;
  if (kernel.prepare == nullptr || capturing) return ZYFA_STATUS_SUCCESS;
  if (zyfa_status s = cuda::from_cuda_error(kernel.prepare(problem), kernel.name)) return s;
  if (kernel.prepared == nullptr) {
    // A prepare loads the variant of one head per job too, which the plan takes where clusters do not fit.
    loaded_runtime_kernels().mark(key.context_id, kernel, problem, plan->schedule.heads_per_job);
    loaded_runtime_kernels().mark(key.context_id, kernel, problem, 1);
  }
  return ZYFA_STATUS_SUCCESS;
}

// Under capture, `kernel`'s code must be loaded already (a load allocates device memory), and a plan for the
// shape does not prove it. An FP8 code object: a prepare with another p_rounding made the plan.
zyfa_status check_code_object_loaded(const KernelChoice &kernel, const Problem &problem) {
  if (kernel.prepared == nullptr) return ZYFA_STATUS_SUCCESS;
  bool prepared = false;
  if (const int e = kernel.prepared(problem, &prepared)) return cuda::from_cuda_error(e, kernel.name);
  if (prepared) return ZYFA_STATUS_SUCCESS;
  return fail(ZYFA_STATUS_NOT_PREPARED,
              "the %s-P kernel that desc->p_rounding selects for this shape is not loaded in this context and the "
              "stream is being captured: call zyfa_attn_prepare with this descriptor, p_rounding included, before "
              "capturing",
              problem.split_p ? "split" : problem.lean_p ? "lean" : "exact");
}

// A runtime kernel: a call of the shape in other strides, which ran another kernel, made the plan. (The lookup
// before this check pinned the plan; a capture after the prepare this asks for would pin it anyway.)
zyfa_status check_runtime_kernel_loaded(const KernelChoice &kernel, const Problem &problem, uint64_t context_id,
                                        const Plan &plan) {
  if (kernel.prepared != nullptr || kernel.prepare == nullptr) return ZYFA_STATUS_SUCCESS;
  if (loaded_runtime_kernels().contains(context_id, kernel, problem, plan.schedule.heads_per_job))
    return ZYFA_STATUS_SUCCESS;
  return fail(ZYFA_STATUS_NOT_PREPARED,
              "the %s kernel that these strides select for this shape has not been loaded in this context (by a "
              "prepare or an uncaptured call) and the stream is being captured: call zyfa_attn_prepare with this "
              "descriptor, its strides included, before capturing",
              kernel.name);
}

}  // namespace

zyfa_status check_split_p(const Problem &problem) { return check_split_p(problem, choose_kernel(problem)); }

zyfa_status run_attention(const Problem &problem, void *stream, bool launch) {
  // The kernel and split P's refusal need no GPU: an argument error is reported before any device is looked for.
  const KernelChoice &kernel = choose_kernel(problem);
  if (zyfa_status s = check_split_p(problem, kernel)) return s;
  int device = 0;
  if (zyfa_status s = cuda::current_hopper_device(&device)) return s;
  bool capturing = false;
  if (zyfa_status s = cuda::stream_is_capturing(stream, &capturing)) return s;
  // Plans are per context: a table allocated in one context cannot be read from another of the same device.
  // Read once per call: the grid shapes below take it from the key.
  unsigned long long context_id = 0;
  if (const int e = cuda::current_context_id(&context_id)) return cuda::from_cuda_error(e, "cuCtxGetId");
  PlanCache &cache = PlanCache::global();
  const PlanKey key = plan_key_of(problem, device, context_id);
  zyfa_status status = ZYFA_STATUS_SUCCESS;
  if (launch) {
    // The FP8 code object is checked before the plan lookup, the runtime kernel after it: a shape that was never
    // prepared is refused for its missing plan, which counts as the cache's miss.
    if (capturing) status = check_code_object_loaded(kernel, problem);
    std::shared_ptr<const Plan> plan;
    if (status == ZYFA_STATUS_SUCCESS) status = acquire_plan(cache, key, kernel, problem, capturing, &plan);
    if (status == ZYFA_STATUS_SUCCESS && capturing)
      status = check_runtime_kernel_loaded(kernel, problem, context_id, *plan);
    if (status == ZYFA_STATUS_SUCCESS) {
      const int error = kernel.launch(problem, plan->schedule, stream);  // a cudaError_t value
      // Another thread may evict the plan at any time: its table is freed only after this launch's event.
      // A captured launch records none; its plan is pinned.
      if (error == 0 && !capturing) {
        cache.record_launch(*plan, stream);
        if (kernel.prepared == nullptr)
          loaded_runtime_kernels().mark(context_id, kernel, problem, plan->schedule.heads_per_job);
      }
      status = cuda::from_cuda_error(error, kernel.name);
    }
  } else {
    // A prepare readies the kernel these strides run and, as a courtesy, every later one that takes the shape
    // (kKernels is the fallback order): a call captured later in strides TMA cannot map falls to one of those,
    // and finds its plan (another grid shape: one head per job, 128-row tiles) and its loaded code. The later
    // ones go first, so that the plan of these strides is the most recently used (the last a small cache
    // evicts), and a failure of theirs is not the prepare's: only the kernel these strides run must be ready.
    // Not under capture (which builds nothing), nor for split P (which the later kernels refuse).
    const ptrdiff_t chosen = &kernel - kKernels;
    if (!capturing && !problem.split_p) {
      for (ptrdiff_t i = ptrdiff_t(std::size(kKernels)) - 1; i > chosen; --i) {
        if (!kKernels[i].supports(problem)) continue;
        if (prepare_kernel(cache, key, kKernels[i], problem, false) != ZYFA_STATUS_SUCCESS) clear_error();
      }
    }
    status = prepare_kernel(cache, key, kernel, problem, capturing);
  }
  // Tables evicted before whose launches have finished; never while this stream is being captured.
  if (!capturing) cache.release_finished();
  return status;
}

}  // namespace zyfa
