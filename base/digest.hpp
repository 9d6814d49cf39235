// File: base/digest.hpp
// A 128-bit hex digest of text (two FNV-1a passes): the key of a scenario in a results database and
// the file name of a cache entry. Not cryptographic: whoever reads a keyed file checks the whole key.
#pragma once

#include <string>
#include <string_view>

namespace hetsim {

[[nodiscard]] std::string digest(std::string_view text);

}  // namespace hetsim
