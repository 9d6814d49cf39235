// File: sim/program_codec.hpp
// A Program as bytes and back, for handing it to the process that simulates it
// (platform_server.hpp). Native byte order and sizes: both ends are the same executable.
#pragma once

#include <string>
#include <string_view>

#include "sim/program.hpp"

namespace hetsim {

// Appends `p` to `out`.
void encode_program(const Program& p, std::string& out);

// Reads a Program that encode_program wrote at the front of `in` and advances `in` past it.
// Throws std::runtime_error on bytes that end early or carry an unknown tag (never user input).
[[nodiscard]] Program decode_program(std::string_view& in);

}  // namespace hetsim
