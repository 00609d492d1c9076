/* zyfa.h compiled as strict C99 and linked against libzyfa.so: the header stays C, the initializer
 * macros are valid C, and the exported entry points resolve. Prints the plain closing line CI reads. */
#include <stdio.h>
#include <string.h>

#include "zyfa/zyfa.h"

static int failures = 0;
static int checks = 0;

static void expect(int ok, const char *what) {
  ++checks;
  if (!ok) {
    ++failures;
    printf("FAILED: %s\n", what);
  }
}

int main(void) {
  zyfa_attn_desc desc = ZYFA_ATTN_DESC_INIT;
  zyfa_quantize_desc qdesc = ZYFA_QUANTIZE_DESC_INIT;
  zyfa_plan_cache_stats stats = ZYFA_PLAN_CACHE_STATS_INIT;
  expect(desc.struct_size == sizeof(zyfa_attn_desc), "ZYFA_ATTN_DESC_INIT sets struct_size");
  expect(desc.causal == 1 && desc.d_qk == 128 && desc.d_v == 128, "ZYFA_ATTN_DESC_INIT defaults");
  expect(desc.p_rounding == ZYFA_P_ROUNDING_DEFAULT, "ZYFA_ATTN_DESC_INIT leaves the P rounding to the default");
  expect(qdesc.struct_size == sizeof(zyfa_quantize_desc), "ZYFA_QUANTIZE_DESC_INIT sets struct_size");
  expect(stats.struct_size == sizeof(zyfa_plan_cache_stats), "ZYFA_PLAN_CACHE_STATS_INIT sets struct_size");
  expect(zyfa_version() == ZYFA_VERSION, "zyfa_version matches the header");

  /* A bad call through the C ABI: a distinct status and a message naming the field. */
  desc.batch = 1;
  desc.seqlen = 1;
  desc.nheads = 1;
  desc.nheads_k = 1;
  desc.d_qk = 64;
  expect(zyfa_attn_fwd_host(&desc) == ZYFA_STATUS_UNSUPPORTED_HEAD_DIM, "d_qk = 64 is refused");
  expect(strstr(zyfa_last_error(), "d_qk") != NULL, "the message names d_qk");
  expect(strncmp(zyfa_status_string(ZYFA_STATUS_UNSUPPORTED_HEAD_DIM), "ZYFA_STATUS_UNSUPPORTED_HEAD_DIM", 32) == 0,
         "zyfa_status_string names the status");
  expect(zyfa_attn_fwd_host(NULL) == ZYFA_STATUS_NULL_ARGUMENT, "NULL descriptor");

  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures != 0;
}
