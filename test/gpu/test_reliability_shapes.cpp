// Odd and huge tensors through the public API.
//  - Odd: seqlen 1, 2, 3, one either side of every tile boundary, and a few primes, in every layout
//    (strided ones with gaps that must stay untouched), for every kernel; each against fp64.
//  - Huge: q, k and out each over 4 GiB (offsets past 2^31 elements and 2^32 bytes). The inputs are a pool of
//    kPool distinct batches repeated over the batch dimension (kPool is prime, so no power-of-two wrap of
//    an offset lands on a batch with the same data); every batch's output must be bitwise equal to that of
//    its pool batch, and the pool's outputs must match fp64.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "reliability.hpp"

namespace zyfa::test::reliability {
namespace {

// ---------------------------------------------------------------- odd shapes

struct OddCase {
  std::string name;
  AttentionShape shape;
};

std::vector<OddCase> odd_cases() {
  const int64_t kSeqlens[] = {1, 2, 3, 63, 127, 128, 129, 255, 257, 383, 1021};
  const struct {
    zyfa_dtype dtype;
    int64_t d_qk;
  } kKernels[] = {{ZYFA_DTYPE_BF16, 128}, {ZYFA_DTYPE_BF16, 192}, {ZYFA_DTYPE_FP8_E4M3, 128}, {ZYFA_DTYPE_FP8_E4M3, 192}};
  const Layout kLayouts[] = {Layout::kBSHD, Layout::kBHSD, Layout::kStrided};
  const struct {
    int64_t nheads, nheads_k;
  } kHeads[] = {{2, 2}, {6, 3}, {4, 1}};  // MHA, GQA 2:1, MQA 4:1
  std::vector<OddCase> cases;
  for (int j = 0; j < int(std::size(kSeqlens)); ++j) {
    for (int k = 0; k < int(std::size(kKernels)); ++k) {
      // Layout, batch, heads and the descale form each rotate on their own step across seqlens (j) and
      // kernels (k), so that every kernel meets every layout, both batch counts and every head ratio.
      const Layout layout = kLayouts[(j + k) % 3];
      const int64_t batch = 1 + (j + k) % 2;
      const auto heads = kHeads[(j + 2 * k) % 3];
      const bool per_head_descale = kKernels[k].dtype == ZYFA_DTYPE_FP8_E4M3 && j % 2 == 0;
      AttentionShape shape = attention_shape(kKernels[k].dtype, kKernels[k].d_qk, batch, kSeqlens[j], heads.nheads,
                                             heads.nheads_k, layout, per_head_descale);
      cases.push_back({shape.name(), shape});
    }
  }
  return cases;
}

class ReliabilityOddShapes : public ::testing::TestWithParam<OddCase> {};

TEST_P(ReliabilityOddShapes, MatchesFp64AndWritesOnlyItsOutput) {
  ZYFA_SKIP_WITHOUT_GPU();
  ZYFA_TRACED_SEED(seed);
  Stream stream;
  ZYFA_ASSERT_CUDA(stream.error());
  DeviceProblem problem(GetParam().shape, seed);
  ASSERT_EQ(problem.status(), "");
  const zyfa_attn_desc desc = problem.desc();
  ASSERT_EQ(zyfa_attn_fwd(&desc, stream), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_ASSERT_CUDA(cudaStreamSynchronize(stream));
  ASSERT_EQ(problem.download(), "");
  EXPECT_TRUE(matches_fp64(problem.host()));
}

INSTANTIATE_TEST_SUITE_P(Seqlens, ReliabilityOddShapes, ::testing::ValuesIn(odd_cases()),
                         [](const ::testing::TestParamInfo<OddCase> &param_info) { return param_info.param.name; });

// ---------------------------------------------------------------- huge tensors

constexpr int64_t kPool = 61;  // prime
constexpr uint64_t kFourGiB = uint64_t(1) << 32;
// Room left on the device beyond the tensors (plans, the CUDA context).
constexpr uint64_t kDeviceMargin = uint64_t(1) << 30;

struct HugeCase {
  std::string name;
  zyfa_dtype dtype;
  int64_t d_qk, batch, seqlen, nheads, nheads_k;
};

// Batches chosen so that q and k pass 4 GiB: BF16 d 128 at 614400 bytes per batch, FP8 d 192 at 460800.
std::vector<HugeCase> huge_cases() {
  return {{"bf16_d128", ZYFA_DTYPE_BF16, 128, 7000, 300, 8, 8}, {"fp8_d192", ZYFA_DTYPE_FP8_E4M3, 192, 9400, 300, 8, 8}};
}

// A device tensor whose batch b holds pool batch b % kPool; every tensor is BSHD, so batches are
// contiguous blocks of `batch_bytes`.
std::string replicate(const void *pool, size_t batch_bytes, int64_t batch, DeviceBuffer *out) {
  std::string s = out->allocate(batch_bytes * size_t(batch));
  if (!s.empty()) return s;
  auto *base = static_cast<uint8_t *>(out->get());
  s = cuda_message("upload pool", cudaMemcpy(base, pool, batch_bytes * kPool, cudaMemcpyHostToDevice));
  // Doubling copies of a prefix of whole pools keep batch b = pool batch b % kPool.
  for (int64_t filled = kPool; s.empty() && filled < batch;) {
    const int64_t pools = filled / kPool;
    const int64_t count = std::min(pools * kPool, batch - filled);
    s = cuda_message("replicate", cudaMemcpy(base + filled * batch_bytes, base, size_t(count) * batch_bytes,
                                             cudaMemcpyDeviceToDevice));
    filled += count;
  }
  return s;
}

class ReliabilityHuge : public ::testing::TestWithParam<HugeCase> {};

TEST_P(ReliabilityHuge, TensorsPastFourGiBAreCorrectInEveryBatch) {
  ZYFA_SKIP_WITHOUT_GPU();
  const HugeCase &c = GetParam();
  ZYFA_TRACED_SEED(seed);
  AttentionShape pool_shape = attention_shape(c.dtype, c.d_qk, kPool, c.seqlen, c.nheads, c.nheads_k);
  HostAttention pool(pool_shape);
  pool.set_inputs(generate_activations(pool_shape.qkv(), ActivationSpec{}, seed));
  pool.poison_outputs();

  const size_t q_batch = pool.q.size_bytes() / kPool, k_batch = pool.k.size_bytes() / kPool;
  const size_t v_batch = pool.v.size_bytes() / kPool, out_batch = pool.out.size_bytes() / kPool;
  const size_t lse_batch = size_t(c.nheads * c.seqlen);  // floats
  ASSERT_GT(q_batch * c.batch, kFourGiB) << "the case must put q past 4 GiB";
  ASSERT_GT(k_batch * c.batch, kFourGiB) << "the case must put k past 4 GiB";
  ASSERT_GT(out_batch * c.batch, kFourGiB) << "the case must put out past 4 GiB";
  const uint64_t needed = (q_batch + k_batch + v_batch + out_batch + lse_batch * 4) * uint64_t(c.batch);
  size_t free_bytes = 0, total_bytes = 0;
  ZYFA_ASSERT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < needed + kDeviceMargin) {
    GTEST_SKIP() << "needs " << (needed + kDeviceMargin) / (1 << 20) << " MiB of device memory, "
                 << free_bytes / (1 << 20) << " MiB free";
  }

  DeviceBuffer q, k, v, out, lse;
  ASSERT_EQ(replicate(pool.q.data(), q_batch, c.batch, &q), "");
  ASSERT_EQ(replicate(pool.k.data(), k_batch, c.batch, &k), "");
  ASSERT_EQ(replicate(pool.v.data(), v_batch, c.batch, &v), "");
  ASSERT_EQ(out.allocate(out_batch * c.batch), "");
  ASSERT_EQ(lse.allocate(lse_batch * 4 * c.batch), "");
  ZYFA_ASSERT_CUDA(cudaMemset(out.get(), 0xff, out.size()));
  ZYFA_ASSERT_CUDA(cudaMemset(lse.get(), 0xff, lse.size()));

  zyfa_attn_desc d = pool.desc();
  d.batch = c.batch;
  d.q = q.get();
  d.k = k.get();
  d.v = v.get();
  d.out = out.get();
  d.lse = static_cast<float *>(lse.get());
  ASSERT_EQ(zyfa_attn_fwd(&d, nullptr), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  ZYFA_ASSERT_CUDA(cudaDeviceSynchronize());

  std::vector<uint8_t> all_out(out.size()), all_lse(lse.size());
  ASSERT_EQ(out.download(all_out.data(), all_out.size()), "");
  ASSERT_EQ(lse.download(all_lse.data(), all_lse.size()), "");
  int64_t differing = 0, first_differing = -1;
  for (int64_t b = kPool; b < c.batch; ++b) {
    const int64_t p = b % kPool;
    const bool same =
        std::memcmp(&all_out[size_t(b) * out_batch], &all_out[size_t(p) * out_batch], out_batch) == 0 &&
        std::memcmp(&all_lse[size_t(b) * lse_batch * 4], &all_lse[size_t(p) * lse_batch * 4], lse_batch * 4) == 0;
    if (!same && differing++ == 0) first_differing = b;
  }
  EXPECT_EQ(differing, 0) << "batches whose output differs from their pool batch; first: " << first_differing
                          << " (byte offset of its q: " << uint64_t(first_differing) * q_batch << ")";
  std::memcpy(pool.out.data(), all_out.data(), pool.out.size_bytes());
  std::memcpy(pool.lse.data(), all_lse.data(), pool.lse.size() * sizeof(float));
  EXPECT_TRUE(matches_fp64(pool));
  std::printf("[ huge ] %s: batch %lld, q %.2f GiB, k %.2f GiB, out %.2f GiB; %lld batches bitwise equal to their "
              "pool batch, the pool of %lld against fp64\n",
              c.name.c_str(), (long long)c.batch, double(q_batch * c.batch) / kFourGiB * 4,
              double(k_batch * c.batch) / kFourGiB * 4, double(out_batch * c.batch) / kFourGiB * 4,
              (long long)(c.batch - kPool - differing), (long long)kPool);
}

INSTANTIATE_TEST_SUITE_P(Tensors, ReliabilityHuge, ::testing::ValuesIn(huge_cases()),
                         [](const ::testing::TestParamInfo<HugeCase> &param_info) { return param_info.param.name; });

}  // namespace
}  // namespace zyfa::test::reliability
