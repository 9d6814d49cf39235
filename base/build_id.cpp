// File: base/build_id.cpp
#include "base/build_id.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <link.h>

namespace hetsim {

namespace {

struct Search {
  uintptr_t address = 0;  // inside the object sought
  std::string id;
};

// The NT_GNU_BUILD_ID note among an object's PT_NOTE segments, once the object holding
// `search->address` is found.
int visit(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum && !holds; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    holds = ph.p_type == PT_LOAD && search->address >= start && search->address < start + ph.p_memsz;
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* at = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = at + ph.p_memsz;
    auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, at, sizeof note);
      const unsigned char* name = at + sizeof note;
      const unsigned char* desc = name + align4(note.n_namesz);
      if (desc + note.n_descsz > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        for (size_t k = 0; k < note.n_descsz; ++k) {
          char hex[3];
          std::snprintf(hex, sizeof hex, "%02x", desc[k]);
          search->id += hex;
        }
        return 1;
      }
      at = desc + align4(note.n_descsz);
    }
  }
  return 1;  // the object holding the code, without a build ID
}

}  // namespace

const std::string& build_id() {
  static const std::string id = [] {
    Search s;
    s.address = reinterpret_cast<uintptr_t>(&visit);
    dl_iterate_phdr(visit, &s);
    return s.id;
  }();
  return id;
}

}  // namespace hetsim
