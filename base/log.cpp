// File: base/log.cpp
#include "base/log.hpp"

#include <atomic>
#include <cstdio>
#include <string>

namespace hetsim {
namespace {
// The level is process configuration set once by main(); atomic so a worker thread may read it.
std::atomic<LogLevel> g_level{LogLevel::kInfo};
thread_local bool t_quiet = false;

void emit(std::string_view tag, std::string_view message) {
  std::string line = "hetsim: ";
  line += tag;
  line += message;
  line += '\n';
  std::fflush(stdout);  // keep terminal output in order when both streams go to one place
  std::fputs(line.c_str(), stderr);
}
}  // namespace

void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return t_quiet ? LogLevel::kQuiet : g_level.load(); }
void log_info(std::string_view message) {
  if (log_level() >= LogLevel::kInfo) emit("", message);
}
void log_debug(std::string_view message) {
  if (log_level() >= LogLevel::kDebug) emit("debug: ", message);
}

QuietThread::QuietThread() : was_(t_quiet) { t_quiet = true; }
QuietThread::~QuietThread() { t_quiet = was_; }

}  // namespace hetsim
