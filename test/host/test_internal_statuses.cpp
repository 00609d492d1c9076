// The two statuses that the public API cannot reach on the machines we have, reached through the internal
// functions that produce them: UNSUPPORTED_DEVICE needs a GPU other than Hopper (the check is
// require_hopper, fed here with other compute capabilities), and INTERNAL means a bug in zyfa (every entry
// point's guarded() maps an unexpected C++ exception to it; bad_alloc to OUT_OF_MEMORY).
#include <gtest/gtest.h>

#include <new>
#include <string>

#include "host/cuda_api.hpp"
#include "host/error.hpp"
#include "zyfa/zyfa.h"

namespace {

TEST(InternalStatuses, NonHopperDevicesAreUnsupported) {
  struct Capability {
    int major, minor;
  };
  for (const Capability c : {Capability{8, 0}, Capability{8, 9}, Capability{10, 0}, Capability{12, 0}}) {
    SCOPED_TRACE(std::to_string(c.major) + "." + std::to_string(c.minor));
    EXPECT_EQ(zyfa::cuda::require_hopper(3, c.major, c.minor), ZYFA_STATUS_UNSUPPORTED_DEVICE);
    const std::string message = zyfa_last_error();
    EXPECT_NE(message.find("device 3"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(c.major) + "." + std::to_string(c.minor)), std::string::npos) << message;
  }
  EXPECT_EQ(zyfa::cuda::require_hopper(0, 9, 0), ZYFA_STATUS_SUCCESS);
}

TEST(InternalStatuses, UnexpectedExceptionsBecomeInternal) {
  const zyfa_status s = zyfa::guarded("zyfa_test_entry", []() -> zyfa_status { throw 42; });
  EXPECT_EQ(s, ZYFA_STATUS_INTERNAL);
  EXPECT_NE(std::string(zyfa_last_error()).find("zyfa_test_entry"), std::string::npos) << zyfa_last_error();
}

TEST(InternalStatuses, HostAllocationFailuresBecomeOutOfMemory) {
  const zyfa_status s = zyfa::guarded("zyfa_test_entry", []() -> zyfa_status { throw std::bad_alloc(); });
  EXPECT_EQ(s, ZYFA_STATUS_OUT_OF_MEMORY);
  EXPECT_NE(std::string(zyfa_last_error()).find("host memory"), std::string::npos) << zyfa_last_error();
}

TEST(InternalStatuses, GuardedClearsTheMessageOnSuccess) {
  (void)zyfa::guarded("zyfa_test_entry", []() -> zyfa_status { throw 1; });
  ASSERT_STRNE(zyfa_last_error(), "");
  EXPECT_EQ(zyfa::guarded("zyfa_test_entry", [] { return ZYFA_STATUS_SUCCESS; }), ZYFA_STATUS_SUCCESS);
  EXPECT_STREQ(zyfa_last_error(), "");
}

}  // namespace
