#include "support/e4m3_oracle.hpp"

#include <cmath>

namespace zyfa::test {

double e4m3_definition(int code) {
  const int e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return std::nan("");
  const double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return (code & 0x80) ? -v : v;
}

uint8_t e4m3_nearest_by_search(double v) {
  if (std::isnan(v)) return 0x7f;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(v);
  int best = 0;
  for (int c = 1; c <= 0x7e; ++c) {  // 0x7e is 448, the largest finite code
    const double err = std::fabs(e4m3_definition(c) - a), best_err = std::fabs(e4m3_definition(best) - a);
    if (err < best_err || (err == best_err && c % 2 == 0)) best = c;
  }
  return uint8_t(sign | best);
}

}  // namespace zyfa::test
