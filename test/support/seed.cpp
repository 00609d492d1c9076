#include "support/seed.hpp"

#include <cstdlib>
#include <random>

namespace zyfa::test {

uint64_t fresh_seed() {
  if (const char *s = std::getenv("ZYFA_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  std::random_device entropy;
  return (uint64_t(entropy()) << 32) | entropy();
}

}  // namespace zyfa::test
