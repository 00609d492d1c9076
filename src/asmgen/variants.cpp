#include "asmgen/variants.hpp"

#include "kernels/numerics.h"

namespace zyfa::asmgen {

const std::vector<Variant> &variants() {
  static const std::vector<Variant> table = {
      {"fp8_d128", 128, 128, numerics::uses_lean_p(128)},
      {"fp8_d192", 192, 128, numerics::uses_lean_p(192)},
  };
  return table;
}

const Variant *find_variant(const std::string &name) {
  for (const Variant &v : variants())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace zyfa::asmgen
