// File: base/progress.hpp
// A progress bar with ETA on stderr for long runs (quiet under -q): redrawn in place on a
// terminal, a line every tenth of the way otherwise.
#pragma once

#include <chrono>
#include <string>

namespace hetsim {

class Progress {
 public:
  Progress(size_t total, std::string unit);
  // `done` of the total have finished; `note` is shown after the counts (e.g. "2 failed").
  void update(size_t done, const std::string& note = "");
  // Ends the bar's line.
  void finish();

 private:
  size_t total_;
  std::string unit_;
  std::chrono::steady_clock::time_point start_;
  bool tty_ = false;
  size_t last_decile_ = 0;
  bool drawn_ = false;
};

}  // namespace hetsim
