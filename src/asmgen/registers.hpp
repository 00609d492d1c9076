// Named, typed PTX registers. The schedule names every register after what it holds ("o_3_2" is output
// tile 3, element 2), so the emitted PTX reads like the schedule that wrote it; ptxas allocates them.
#ifndef ZYFA_ASMGEN_REGISTERS_HPP_
#define ZYFA_ASMGEN_REGISTERS_HPP_

#include <stdexcept>
#include <string>
#include <vector>

#include "asmgen/ptx_types.hpp"

namespace zyfa::asmgen {

// A handle into a RegisterFile; cheap to copy.
struct Reg {
  int id = -1;
  bool valid() const { return id >= 0; }
};

class RegisterFile {
 public:
  // A new register called %<name>. Names must be unique; a repeated name is a schedule bug (throws).
  Reg make(Type type, const std::string &name);
  // A new register called %<prefix>_<n>, n counting up per prefix: for short-lived temporaries.
  Reg temp(Type type, const std::string &prefix);

  Type type(Reg r) const { return types_[checked(r)]; }
  const std::string &name(Reg r) const { return names_[checked(r)]; }
  int count() const { return int(types_.size()); }

 private:
  size_t checked(Reg r) const {
    if (!r.valid() || size_t(r.id) >= types_.size()) throw std::logic_error("a register never made (an unset Reg)");
    return size_t(r.id);
  }
  std::vector<Type> types_;
  std::vector<std::string> names_;
  std::vector<std::pair<std::string, int>> temp_counters_;
};

// "o" + (3, 2) -> "o_3_2": the name of one element of a register array.
std::string indexed(const std::string &base, int i);
std::string indexed(const std::string &base, int i, int j);

}  // namespace zyfa::asmgen

#endif  // ZYFA_ASMGEN_REGISTERS_HPP_
