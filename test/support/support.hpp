// Umbrella header of the test support library: include what a test needs from here.
#ifndef ZYFA_TEST_SUPPORT_SUPPORT_HPP_
#define ZYFA_TEST_SUPPORT_SUPPORT_HPP_
#endif  // ZYFA_TEST_SUPPORT_SUPPORT_HPP_
