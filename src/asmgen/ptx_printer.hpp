// PTX text of a Program: the module header, one .entry with its parameter blob, the register
// declarations and one line per instruction. The same Program always prints the same bytes.
#ifndef ZYFA_ASMGEN_PTX_PRINTER_HPP_
#define ZYFA_ASMGEN_PTX_PRINTER_HPP_

#include <string>

#include "asmgen/program.hpp"

namespace zyfa::asmgen {

// The name of the kernel's only parameter (a byte blob holding the parameter struct).
constexpr const char *kParamName = "params";
// The dynamic shared memory array.
constexpr const char *kSmemName = "smem";

std::string print_ptx(const Program &program);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_PTX_PRINTER_HPP_
