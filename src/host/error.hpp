// The thread-local last-error message behind zyfa_last_error(). The library never prints: it records.
#ifndef ZYFA_HOST_ERROR_HPP_
#define ZYFA_HOST_ERROR_HPP_

#include "zyfa/zyfa.h"

namespace zyfa {

// Records "<field>: <message>" for this thread and returns `status`, so a check reads
//   if (bad) return fail(ZYFA_STATUS_BAD_SHAPE, "desc->batch = %lld: must be >= 1", (long long)b);
zyfa_status fail(zyfa_status status, const char *format, ...) __attribute__((format(printf, 2, 3)));
// Clears this thread's message; every entry point calls it first, so success leaves "".
void clear_error();
const char *last_error();

}  // namespace zyfa

#endif  // ZYFA_HOST_ERROR_HPP_
