// mbarrier: the shared-memory barrier that TMA copies complete on, and that consumers hand stages back
// through (PTX ISA, "Parallel synchronization and communication: mbarrier").
#ifndef ZYFA_KERNELS_HOPPER_MBARRIER_CUH_
#define ZYFA_KERNELS_HOPPER_MBARRIER_CUH_

#include <cstdint>

namespace zyfa::hopper {

// One 64-bit barrier object in shared memory, addressed by its shared-state-space address.
class Mbarrier {
 public:
  __device__ void init(uint32_t arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(address()), "r"(arrivals) : "memory");
  }
  // The producer's arrival, announcing `bytes` that asynchronous copies will complete on this phase.
  __device__ void arrive_expecting(uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(address()), "r"(bytes)
                 : "memory");
  }
  __device__ void arrive() {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(address()) : "memory");
  }
  // Blocks until the phase of parity `parity` has completed. A fresh barrier is in phase 0, so waiting
  // for parity 1 returns at once: that is how a producer sees every stage empty at the start.
  __device__ void wait(uint32_t parity) {
    while (!try_wait(parity)) {
    }
  }
  __device__ uint32_t address() const {
    return static_cast<uint32_t>(__cvta_generic_to_shared(&state_));
  }

 private:
  __device__ bool try_wait(uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(address()), "r"(parity)
        : "memory");
    return done != 0;
  }
  uint64_t state_;
};

// Makes barrier initializations by this thread visible to the other threads and to the copy engine
// (the async proxy) before the CTA-wide sync that follows.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;" ::: "memory");
}

// Where a ring of `kStages` buffers stands: the slot in use and the parity of its barriers' phase, which
// flips every time the ring wraps.
template <int kStages>
struct PipelineState {
  static_assert(kStages >= 1, "a pipeline needs a stage");
  uint32_t index = 0;
  uint32_t phase = 0;
  __device__ void advance() {
    if (++index == kStages) {
      index = 0;
      phase ^= 1u;
    }
  }
};

}  // namespace zyfa::hopper

#endif  // ZYFA_KERNELS_HOPPER_MBARRIER_CUH_
