// File: base/log.hpp
// The one logging facility outside SimGrid: progress and notes to stderr, never results.
#pragma once

#include <string_view>

namespace hetsim {

enum class LogLevel { kQuiet = 0, kInfo = 1, kDebug = 2 };

void set_log_level(LogLevel level);
[[nodiscard]] LogLevel log_level();  // quiet on a thread inside a QuietThread
void log_info(std::string_view message);
void log_debug(std::string_view message);

// While it lives, this thread logs nothing (and the simulations it starts show no progress): for
// work run beside the thread whose progress the user watches.
class QuietThread {
 public:
  QuietThread();
  ~QuietThread();
  QuietThread(const QuietThread&) = delete;
  QuietThread& operator=(const QuietThread&) = delete;

 private:
  bool was_;
};

}  // namespace hetsim
