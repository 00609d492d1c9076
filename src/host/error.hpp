// The thread-local last-error message behind zyfa_last_error(). The library never prints: it records.
#ifndef ZYFA_HOST_ERROR_HPP_
#define ZYFA_HOST_ERROR_HPP_

#include <new>

#include "zyfa/zyfa.h"

namespace zyfa {

// Records "<field>: <message>" for this thread and returns `status`, so a check reads
//   if (bad) return fail(ZYFA_STATUS_BAD_SHAPE, "desc->batch = %lld: must be >= 1", (long long)b);
zyfa_status fail(zyfa_status status, const char *format, ...) __attribute__((format(printf, 2, 3)));
// Clears this thread's message; every entry point calls it first, so success leaves "".
void clear_error();
const char *last_error();

// The body of every exported entry point: clears this thread's message, runs `body`, and turns any C++
// exception into a status, since nothing may unwind through the C ABI.
template <typename Body>
zyfa_status guarded(const char *entry, Body &&body) {
  clear_error();
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(ZYFA_STATUS_OUT_OF_MEMORY, "%s: host memory allocation failed", entry);
  } catch (...) {
    return fail(ZYFA_STATUS_INTERNAL, "%s: unexpected C++ exception inside zyfa", entry);
  }
}

}  // namespace zyfa

#endif  // ZYFA_HOST_ERROR_HPP_
