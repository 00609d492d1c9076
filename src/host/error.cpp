#include "host/error.hpp"

#include <cstdarg>
#include <cstdio>

namespace zyfa {
namespace {
// Long enough for a field name, two values and a sentence; vsnprintf truncates anything longer.
constexpr int kMessageCapacity = 512;
thread_local char t_message[kMessageCapacity] = "";
}  // namespace

zyfa_status fail(zyfa_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(t_message, sizeof t_message, format, args);
  va_end(args);
  return status;
}

void clear_error() { t_message[0] = '\0'; }

const char *last_error() { return t_message; }

}  // namespace zyfa
