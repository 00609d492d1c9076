// The installed C++ layer (zyfa.hpp): one CPU-backend call through the builder, the same bits as the C call,
// and a refused call as a zyfa::Error naming the field. Exits 0 only if all of that holds.
#include <zyfa/zyfa.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  constexpr int64_t kSeqlen = 3, kDim = 128;
  std::vector<uint16_t> q(kSeqlen * kDim, 0x3f80), k(q), v(q), out(q.size(), 0xffff), out_c(q.size(), 0xffff);
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint16_t(0x3f80 + i % 4);  // bf16 1.0 and its next three
  zyfa::Attention attn;
  attn.shape(1, kSeqlen, 1, 1).tensors(q.data(), k.data(), v.data(), out.data());
  try {
    attn.forward_host();
  } catch (const zyfa::Error &e) {
    std::printf("forward_host threw: %s\n", e.what());
    return 1;
  }
  zyfa_attn_desc desc = attn.desc();
  desc.out = out_c.data();
  if (zyfa_attn_fwd_host(&desc) != ZYFA_STATUS_SUCCESS || out != out_c || out[0] != v[0]) {
    std::printf("the C++ layer's output differs from the C call's (or row 0 from v[0])\n");
    return 1;
  }
  attn.shape(1, kSeqlen, 3, 2);  // 3 query heads over 2 kv heads: refused
  try {
    attn.forward_host();
    std::printf("a head ratio of 3:2 did not throw\n");
    return 1;
  } catch (const zyfa::Error &e) {
    if (e.status() != ZYFA_STATUS_BAD_HEAD_RATIO) {
      std::printf("3:2 heads threw %s\n", e.what());
      return 1;
    }
  }
  std::printf("consumer (C++): zyfa %d ok, library matches header: %d\n", zyfa_version(), zyfa::library_matches_header());
  return zyfa::library_matches_header() ? 0 : 1;
}
