// File: base/build_id.hpp
// The identity of the running code: the GNU build ID (the linker's hash of the code and data it
// linked) of the binary or shared library holding hetsim's code. It changes with every rebuild
// that changes the code, where the version string ("0.1.0+COMMIT") is set at configure time only:
// what a cache of computed results is keyed by, so that no result of older code is ever reused.
#pragma once

#include <string>

namespace hetsim {

// Hex build ID of the object holding this function's code; "" when it has none (linked without
// --build-id): then nothing computed may be cached.
[[nodiscard]] const std::string& build_id();

}  // namespace hetsim
