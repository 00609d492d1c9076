// The error norms of src/ref (the one definition the tests, the bench and the zyfa command share), under
// the test namespace.
#ifndef ZYFA_TEST_SUPPORT_ERROR_NORMS_HPP_
#define ZYFA_TEST_SUPPORT_ERROR_NORMS_HPP_

#include "ref/error_norms.hpp"

namespace zyfa::test {

using ref::compare_to_reference;
using ref::ErrorStats;

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_ERROR_NORMS_HPP_
