// File: base/progress.hpp
// A progress bar with ETA on stderr for long runs (quiet under -q): redrawn in place on a
// terminal, at most four times a second; otherwise (a log file) a line every tenth of the way, and
// at least one every kProgressLineEveryS, so that a slow tenth is never minutes of silence.
#pragma once

#include <chrono>
#include <string>

namespace hetsim {

// How long work that may be short (a simulation, a planner's search) runs before it shows a bar:
// the CLI shows one on everything that runs longer than this.
inline constexpr double kProgressAfterS = 3;
// Off a terminal, the longest span between two lines of a bar.
inline constexpr double kProgressLineEveryS = 30;

class Progress {
 public:
  // `quiet_s`: nothing is drawn before the run has taken that long, so work that may be short
  // (a simulation, a planner's search) shows a bar only when it is not.
  Progress(size_t total, std::string unit, double quiet_s = 0);
  // `done` of the total have finished; `note` is shown after the counts (e.g. "2 failed").
  void update(size_t done, const std::string& note = "");
  // The total, estimated again (a first phase of the work has shown how much is left).
  void set_total(size_t total);
  // Where a bar was drawn: draws the last update if it was held back, and ends the bar's line.
  void finish();
  // For work that pays a set-up of its own before its first unit is done (a large set of transfers:
  // the actors made and the first solve of every flow at once): the ETA takes the pace since the
  // first unit was done, not the pace since the bar began, and is shown once that span is as long as
  // the set-up or a second, whichever is shorter.
  void pace_from_first_unit() { from_first_ = true; }
  // Off a terminal, a line at least every `s` seconds (kProgressLineEveryS unless set; for tests).
  void line_every(double s) { line_every_s_ = s; }

 private:
  void draw(double elapsed);

  size_t total_;
  std::string unit_;
  double quiet_s_;
  std::chrono::steady_clock::time_point start_;
  bool tty_ = false;
  size_t last_decile_ = 0;
  bool drawn_ = false;
  double drawn_at_s_ = -1;  // elapsed time of the last draw
  size_t done_ = 0;         // the last update's
  std::string note_;
  bool held_ = false;  // the last update was not drawn (too soon after the one before)
  bool from_first_ = false;
  double line_every_s_ = kProgressLineEveryS;
  double first_s_ = -1;     // elapsed time of the first update with a unit done
  size_t first_done_ = 0;   // its count
};

}  // namespace hetsim
