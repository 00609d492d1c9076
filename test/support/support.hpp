// Umbrella header of the test support library: include what a test needs from here.
#ifndef ZYFA_TEST_SUPPORT_SUPPORT_HPP_
#define ZYFA_TEST_SUPPORT_SUPPORT_HPP_

#include "support/activations.hpp"
#include "support/backend_ratio.hpp"
#include "support/checks.hpp"
#include "support/error_norms.hpp"
#include "support/gpu.hpp"
#include "support/host_attention.hpp"
#include "support/quantize.hpp"
#include "support/seed.hpp"

#endif  // ZYFA_TEST_SUPPORT_SUPPORT_HPP_
