// File: base/log.hpp
// The one logging facility outside SimGrid: progress and notes to stderr, never results.
#pragma once

#include <string_view>

namespace hetsim {

enum class LogLevel { kQuiet = 0, kInfo = 1, kDebug = 2 };

void set_log_level(LogLevel level);
[[nodiscard]] LogLevel log_level();
void log_info(std::string_view message);
void log_debug(std::string_view message);

}  // namespace hetsim
