// Fresh random seeds for tests: every run draws new inputs, and ZYFA_TEST_SEED=<n> replays one (tests
// print the seed of every case they run).
#ifndef ZYFA_TEST_SUPPORT_SEED_HPP_
#define ZYFA_TEST_SUPPORT_SEED_HPP_

#include <cstdint>

namespace zyfa::test {

uint64_t fresh_seed();

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_SEED_HPP_
