/* Links against an installed libzyfa and runs one CPU-backend call: exits 0 only if it succeeds. */
#include <stdio.h>
#include <string.h>

#include <zyfa/zyfa.h>

int main(void) {
  enum { S = 3, D = 128 };
  static unsigned short q[S * D], k[S * D], v[S * D], out[S * D];
  for (int i = 0; i < S * D; ++i) {
    q[i] = k[i] = 0x3f80; /* bf16 1.0 */
    v[i] = (unsigned short)(0x3f80 + (i % 4));
  }
  zyfa_attn_desc desc = ZYFA_ATTN_DESC_INIT;
  desc.batch = 1;
  desc.seqlen = S;
  desc.nheads = 1;
  desc.nheads_k = 1;
  desc.q = q;
  desc.k = k;
  desc.v = v;
  desc.out = out;
  zyfa_status status = zyfa_attn_fwd_host(&desc);
  if (status != ZYFA_STATUS_SUCCESS) {
    printf("zyfa_attn_fwd_host: %s: %s\n", zyfa_status_string(status), zyfa_last_error());
    return 1;
  }
  /* Row 0 sees only key 0, so out[0] = v[0] exactly. */
  if (out[0] != v[0]) {
    printf("row 0: got 0x%04x, want 0x%04x\n", out[0], v[0]);
    return 1;
  }
  printf("consumer: zyfa %d ok\n", zyfa_version());
  return 0;
}
