// File: base/progress.cpp
#include "base/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/log.hpp"

namespace hetsim {
namespace {

// How long the units after the first must take before their pace gives a paced bar's ETA.
constexpr double kPaceSpanS = 1.0;

std::string duration(double s) {
  char buf[32];
  if (s < 90) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 5400) {
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

}  // namespace

Progress::Progress(size_t total, std::string unit, double quiet_s)
    : total_(total),
      unit_(std::move(unit)),
      quiet_s_(quiet_s),
      start_(std::chrono::steady_clock::now()),
      tty_(::isatty(STDERR_FILENO) != 0) {}

void Progress::update(size_t done, const std::string& note) {
  if (log_level() < LogLevel::kInfo || total_ == 0) return;
  if (drawn_ && !held_ && done == done_ && note == note_) return;  // drawn already (a run's last count, told twice)
  done_ = done;
  note_ = note;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (first_s_ < 0 && done > 0) {
    first_s_ = elapsed;
    first_done_ = done;
  }
  held_ = true;
  if (elapsed < quiet_s_) return;
  if (tty_) {
    if (drawn_at_s_ >= 0 && elapsed - drawn_at_s_ < 0.25 && done != total_) return;
  } else {
    const size_t decile = done * 10 / total_;
    const double since = elapsed - (drawn_at_s_ >= 0 ? drawn_at_s_ : quiet_s_);
    if (decile == last_decile_ && done != total_ && since < line_every_s_) return;
    last_decile_ = decile;
  }
  draw(elapsed);
}

void Progress::set_total(size_t total) {
  if (total == total_) return;
  total_ = total;
  last_decile_ = total_ > 0 ? std::min(done_, total_) * 10 / total_ : 0;
}

void Progress::draw(double elapsed) {
  constexpr int kWidth = 30;
  const size_t done = std::min(done_, total_);
  const int filled = static_cast<int>(kWidth * done / total_);
  std::string line = "hetsim: [" + std::string(filled, '=') + std::string(kWidth - filled, ' ') + "] " + std::to_string(done_) +
                     "/" + std::to_string(total_) + " " + unit_;
  if (!note_.empty()) line += ", " + note_;
  line += ", " + duration(elapsed);
  if (done > 0 && done < total_) {
    const double left = static_cast<double>(total_ - done);
    if (!from_first_) {
      line += ", ETA " + duration(elapsed / static_cast<double>(done) * left);
    } else if (done > first_done_ && elapsed - first_s_ >= std::min(first_s_, kPaceSpanS)) {
      // The pace since the first unit, once it spans the set-up or kPaceSpanS, whichever is
      // shorter: a set-up of seconds would otherwise triple the first ETAs (an all-to-all over 384
      // GPUs: 3.2 s before its first transfer, then 25 000 a second), and the span keeps the burst
      // of units that arrive together first from setting the pace. Before it, no ETA.
      line += ", ETA " + duration((elapsed - first_s_) / static_cast<double>(done - first_done_) * left);
    }
  }
  std::fputs(tty_ ? ("\r" + line + "\033[K").c_str() : (line + "\n").c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
  drawn_at_s_ = elapsed;
  held_ = false;
}

void Progress::finish() {
  if (drawn_ && held_ && log_level() >= LogLevel::kInfo) {
    draw(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  if (tty_ && drawn_ && log_level() >= LogLevel::kInfo) std::fputs("\n", stderr);
  drawn_ = false;
}

}  // namespace hetsim
