// e4m3 from the OCP format's definition and the nearest code by search over every code: the oracle that
// numerics.h's conversions (the kernels' own) and the quantizer are checked against. Slow on purpose.
#ifndef ZYFA_TEST_SUPPORT_E4M3_ORACLE_HPP_
#define ZYFA_TEST_SUPPORT_E4M3_ORACLE_HPP_

#include <cstdint>

namespace zyfa::test {

// OCP e4m3fn from its definition: bias 7, subnormals at exponent field 0, only S.1111.111 is NaN.
double e4m3_definition(int code);

// The finite e4m3 code nearest to v, ties to the even code, saturating at +-448; NaN gives 0x7f.
uint8_t e4m3_nearest_by_search(double v);

}  // namespace zyfa::test

#endif  // ZYFA_TEST_SUPPORT_E4M3_ORACLE_HPP_
