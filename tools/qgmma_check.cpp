// Here: holds ref::qgmma_columns (src/ref/tensor_core_sums.hpp) to what tools/device/qgmma_probe.cu recorded on
// the GPU: prints how many outputs it reproduces bit for bit, A from shared memory and from registers, per
// input kind, and with --sample writes one output of every case (its row of A, column of B, accumulator
// and result) as the fixture test_tensor_core_sums.cpp reads.
// Usage: qgmma_check PROBE_FILE [--sample OUT_FILE]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/numerics.h"
#include "ref/tensor_core_sums.hpp"

namespace {

constexpr int kM = 64, kN = 8, kK = 32, kMaxSteps = 4, kOut = kM * kN, kKinds = 5;
constexpr int kModes = 4;  // qgmma_probe's run modes: bit 0 the descriptor reading, bit 1 A from registers
const char *const kKindNames[kKinds] = {"any code", "normal", "exact", "P-like", "sparse"};

struct Case {  // as qgmma_probe.cu writes it
  int steps;
  uint8_t a[kMaxSteps][kM][kK];
  uint8_t b[kMaxSteps][kN][kK];
  float c[kM][kN];
};

int kind_of(size_t i) { return int(i / 4) % kKinds; }

bool read_probe(const char *path, std::vector<Case> &cases, std::vector<float> (&out)[kModes]) {
  FILE *f = std::fopen(path, "rb");
  if (!f) return false;
  uint32_t h[5];
  bool ok = std::fread(h, sizeof h, 1, f) == 1 && h[0] == 0x5147474du && h[2] == sizeof(Case) && h[3] == kOut &&
            h[4] == kModes;
  if (ok) {
    cases.resize(h[1]);
    ok = std::fread(cases.data(), sizeof(Case), h[1], f) == h[1];
    for (auto &o : out) {
      o.resize(size_t(h[1]) * kOut);
      ok = ok && std::fread(o.data(), sizeof(float), o.size(), f) == o.size();
    }
  }
  std::fclose(f);
  return ok;
}

double value(uint8_t code) { return zyfa::numerics::e4m3_value(code); }

// Output (m, n) of the case as the model sums it: row m of A and column n of B over the case's k-steps.
float model(const Case &c, int m, int n) {
  float a[kMaxSteps * kK], b[kMaxSteps * kK];
  int16_t ea[kMaxSteps * kK], eb[kMaxSteps * kK];
  for (int s = 0; s < c.steps; ++s)
    for (int k = 0; k < kK; ++k) {
      a[s * kK + k] = zyfa::numerics::e4m3_value(c.a[s][m][k]);
      b[s * kK + k] = zyfa::numerics::e4m3_value(c.b[s][n][k]);
      ea[s * kK + k] = zyfa::ref::fp8_exponent(c.a[s][m][k]);
      eb[s * kK + k] = zyfa::ref::fp8_exponent(c.b[s][n][k]);
    }
  float acc = c.c[m][n];
  zyfa::ref::qgmma_columns(&acc, a, ea, b, eb, 1, 1, c.steps * kK);
  return acc;
}

bool same_bits(float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2 && !(argc == 4 && !std::strcmp(argv[2], "--sample"))) {
    std::fprintf(stderr, "usage: qgmma_check PROBE_FILE [--sample OUT_FILE]\n");
    return 2;
  }
  std::vector<Case> cases;
  std::vector<float> out[kModes];
  if (!read_probe(argv[1], cases, out)) {
    std::fprintf(stderr, "qgmma_check: cannot read %s\n", argv[1]);
    return 1;
  }
  // The descriptor reading that is right reproduces the exact cases (codes 0, +-1, +-2, no accumulator).
  int layout = -1;
  for (int mode = 0; mode < 2 && layout < 0; ++mode) {
    long wrong = 0;
    for (size_t i = 0; i < cases.size(); ++i)
      if (kind_of(i) == 2)
        for (int m = 0; m < kM; ++m)
          for (int n = 0; n < kN; ++n) {
            double exact = 0;
            for (int s = 0; s < cases[i].steps; ++s)
              for (int k = 0; k < kK; ++k) exact += value(cases[i].a[s][m][k]) * value(cases[i].b[s][n][k]);
            wrong += double(out[mode][i * kOut + size_t(m * kN + n)]) != exact;
          }
    std::printf("descriptor reading %d: %ld exact outputs wrong\n", mode, wrong);
    if (wrong == 0) layout = mode;
  }
  if (layout < 0) return 1;
  long total_misses = 0;
  for (int mode : {layout, layout + 2}) {
    long misses[kKinds] = {}, seen[kKinds] = {};
    for (size_t i = 0; i < cases.size(); ++i)
      for (int m = 0; m < kM; ++m)
        for (int n = 0; n < kN; ++n) {
          ++seen[kind_of(i)];
          misses[kind_of(i)] += !same_bits(model(cases[i], m, n), out[mode][i * kOut + size_t(m * kN + n)]);
        }
    std::printf("%s:", mode < 2 ? "A from shared memory" : "A from registers");
    for (int k = 0; k < kKinds; ++k) {
      std::printf("  %s %ld of %ld missed", kKindNames[k], misses[k], seen[k]);
      total_misses += misses[k];
    }
    std::printf("\n");
  }
  if (argc == 4) {  // one output per case: record = steps, A row, B column, accumulator, result
    FILE *f = std::fopen(argv[3], "wb");
    if (!f) return 1;
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case &c = cases[i];
      const int m = int(i % kM), n = int(i / kM) % kN;
      const uint8_t steps = uint8_t(c.steps);
      std::fwrite(&steps, 1, 1, f);
      for (int s = 0; s < c.steps; ++s) std::fwrite(c.a[s][m], 1, kK, f);
      for (int s = 0; s < c.steps; ++s) std::fwrite(c.b[s][n], 1, kK, f);
      std::fwrite(&c.c[m][n], sizeof(float), 1, f);
      std::fwrite(&out[layout][i * kOut + size_t(m * kN + n)], sizeof(float), 1, f);
    }
    std::fclose(f);
  }
  return total_misses == 0 ? 0 : 1;
}
