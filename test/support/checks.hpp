// GoogleTest forms of the support checks, so that a failure prints what was found.
#ifndef ZYFA_TEST_SUPPORT_CHECKS_HPP_
#define ZYFA_TEST_SUPPORT_CHECKS_HPP_

#include <gtest/gtest.h>

#include "support/error_norms.hpp"
#include "support/host_attention.hpp"

namespace zyfa::test {

// Every logical output and LSE element written and finite, no gap element touched.
::testing::AssertionResult outputs_written(const HostAttention &h);

// rel_rms <= max_rel_rms with every value finite.
::testing::AssertionResult within_rel_rms(const ErrorStats &e, double max_rel_rms);

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_CHECKS_HPP_
