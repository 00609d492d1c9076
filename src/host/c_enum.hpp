// The integer a C caller stored in an enum field. C enums hold any int; in C++ loading a value outside
// the enumerators' range through the enum type is undefined (UBSan's -fsanitize=enum flags it), so every
// enum that crosses the C ABI is read through this before it is checked.
#ifndef ZYFA_HOST_C_ENUM_HPP_
#define ZYFA_HOST_C_ENUM_HPP_

#include <cstring>

namespace zyfa {

template <class Enum>
int c_enum_value(const Enum &field) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums of the ABI are int-sized");
  int value;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

}  // namespace zyfa

#endif  // ZYFA_HOST_C_ENUM_HPP_
