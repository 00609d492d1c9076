// Fresh random seeds for tests: every run draws new inputs, and ZYFA_TEST_SEED=<n> replays one (tests
// print the seed of every case they run).
#ifndef ZYFA_TEST_SUPPORT_SEED_HPP_
#define ZYFA_TEST_SUPPORT_SEED_HPP_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace zyfa::test {

uint64_t fresh_seed();

}  // namespace zyfa::test

// Declares `const uint64_t name`, a fresh seed, and traces it for the rest of the scope, so that every failure
// there names the ZYFA_TEST_SEED that replays it.
#define ZYFA_TRACED_SEED(name)                     \
  const uint64_t name = ::zyfa::test::fresh_seed(); \
  SCOPED_TRACE("ZYFA_TEST_SEED=" + std::to_string(name))

#endif  // ZYFA_TEST_SUPPORT_SEED_HPP_
