// See interpreter_races.hpp.
#include "asmgen/interpreter_races.hpp"

#include <algorithm>

namespace zyfa::asmgen {

void SharedRaces::reset(int warps, size_t shared_bytes) {
  warps_ = warps;
  clocks_.assign(size_t(warps), empty_clocks());
  agent_epoch_.assign(size_t(warps), 0);
  for (int w = 0; w < warps; ++w) clocks_[size_t(w)][size_t(w)] = 1;  // epoch 0 means "never"
  write_clock_.assign(shared_bytes, 0);
  write_warp_.assign(shared_bytes, 0);
  read_clock_.assign(shared_bytes * size_t(warps), 0);
}

std::string SharedRaces::who(int index) const {
  if (index < warps_) return "warp " + std::to_string(index);
  return "the TMA copies issued by warp " + std::to_string(index - warps_);
}

std::string SharedRaces::race(const char *what, size_t addr, int index, const char *earlier, int other) const {
  return std::string(what) + " by " + who(index) + " races shared byte " + std::to_string(addr) + "'s " + earlier +
         " by " + who(other) + ": no mbarrier wait or barrier orders the two accesses";
}

std::string SharedRaces::read(int warp, size_t addr, size_t bytes, const char *what) {
  const Clocks &seen = clocks_[size_t(warp)];
  for (size_t a = addr; a < addr + bytes; ++a) {
    const int writer = write_warp_[a];
    if (writer != warp && write_clock_[a] > seen[size_t(writer)]) return race(what, a, warp, "write", writer);
    read_clock_[a * size_t(warps_) + size_t(warp)] = seen[size_t(warp)];
  }
  return "";
}

std::string SharedRaces::write(int warp, size_t addr, size_t bytes, const char *what) {
  return write_as(warp, clocks_[size_t(warp)], addr, bytes, what);
}

std::string SharedRaces::write_as(int issuer, const Clocks &seen, size_t addr, size_t bytes, const char *what) {
  return write_checked(issuer, seen, seen[size_t(issuer)], addr, bytes, what);
}

void SharedRaces::extend_read(int warp, size_t addr) {
  uint32_t &r = read_clock_[addr * size_t(warps_) + size_t(warp)];
  r = std::max(r, clocks_[size_t(warp)][size_t(warp)]);
}

std::string SharedRaces::write_checked(int issuer, const Clocks &seen, uint32_t stamp, size_t addr, size_t bytes,
                                       const char *what) {
  for (size_t a = addr; a < addr + bytes; ++a) {
    const int writer = write_warp_[a];
    if (writer != issuer && write_clock_[a] > seen[size_t(writer)]) return race(what, a, issuer, "write", writer);
    const uint32_t *reads = &read_clock_[a * size_t(warps_)];
    for (int r = 0; r < warps_; ++r)
      if (r != issuer && reads[r] > seen[size_t(r)]) return race(what, a, issuer, "read", r);
    write_warp_[a] = uint8_t(issuer);
    write_clock_[a] = stamp;
  }
  return "";
}

void SharedRaces::join(Clocks *into, const Clocks &from) {
  if (into->size() < from.size()) into->resize(from.size(), 0);  // a barrier's clocks start empty
  for (size_t i = 0; i < from.size(); ++i) (*into)[i] = std::max((*into)[i], from[i]);
}

void SharedRaces::release(int warp, Clocks *sync) {
  join(sync, clocks_[size_t(warp)]);
  next_epoch(warp);
}

void SharedRaces::acquire(int warp, const Clocks &sync) { join(&clocks_[size_t(warp)], sync); }

}  // namespace zyfa::asmgen
