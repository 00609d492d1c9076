#include "asmgen/registers.hpp"

#include <algorithm>
#include <stdexcept>

namespace zyfa::asmgen {

namespace {
// PTX's special registers: a register of the same name would shadow them ("%tid.x" then fails to parse).
bool is_special_register_name(const std::string &name) {
  static const char *const kSpecial[] = {"tid",   "ntid",    "laneid", "warpid", "nwarpid", "ctaid", "nctaid",
                                         "smid",  "nsmid",   "gridid", "clock",  "clock64", "pm0",   "envreg0"};
  for (const char *s : kSpecial)
    if (name == s) return true;
  return false;
}
}  // namespace

Reg RegisterFile::make(Type type, const std::string &name) {
  if (is_special_register_name(name)) throw std::logic_error("register %" + name + " would shadow a special register");
  if (std::find(names_.begin(), names_.end(), name) != names_.end())
    throw std::logic_error("register %" + name + " declared twice");
  types_.push_back(type);
  names_.push_back(name);
  return Reg{int(types_.size()) - 1};
}

Reg RegisterFile::temp(Type type, const std::string &prefix) {
  auto it = std::find_if(temp_counters_.begin(), temp_counters_.end(),
                         [&](const auto &c) { return c.first == prefix; });
  if (it == temp_counters_.end()) {
    temp_counters_.emplace_back(prefix, 0);
    it = temp_counters_.end() - 1;
  }
  return make(type, prefix + "_t" + std::to_string(it->second++));
}

std::string indexed(const std::string &base, int i) { return base + "_" + std::to_string(i); }
std::string indexed(const std::string &base, int i, int j) { return indexed(indexed(base, i), j); }

}  // namespace zyfa::asmgen
