// File: base/digest.cpp
#include "base/digest.hpp"

#include <cstdint>
#include <cstdio>

namespace hetsim {

std::string digest(std::string_view text) {
  auto fnv = [&](uint64_t h) {
    for (unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    return h;
  };
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(fnv(14695981039346656037ULL)),
                static_cast<unsigned long long>(fnv(0x9e3779b97f4a7c15ULL)));
  return buf;
}

}  // namespace hetsim
