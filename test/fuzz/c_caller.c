/* Calls a C caller may make and C++ may not express without undefined behaviour: any int where the ABI
 * takes an enum (C enums are plain ints). */
#include "zyfa/zyfa.h"

const char *zyfa_fuzz_status_string_of_int(int value);

const char *zyfa_fuzz_status_string_of_int(int value) { return zyfa_status_string((zyfa_status)value); }
