// File: base/progress.cpp
#include "base/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/log.hpp"

namespace hetsim {
namespace {

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
    if (decile == last_decile_ && done != total_) return;
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
    // The pace since the first unit, where asked and the span since then outweighs the set-up.
    const bool since_first = from_first_ && done > first_done_ && elapsed - first_s_ >= first_s_;
    const double eta = since_first ? (elapsed - first_s_) / static_cast<double>(done - first_done_) * left
                                   : elapsed / static_cast<double>(done) * left;
    line += ", ETA " + duration(eta);
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
