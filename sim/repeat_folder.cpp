// File: sim/repeat_folder.cpp
#include "sim/repeat_folder.hpp"

#include <stdexcept>

namespace hetsim {

bool RepeatFolder::is_next_unit(int a, int b, int size) const {
  const std::vector<Task>& t = program_.tasks;
  for (int i = 0; i < size; ++i) {
    const Task& was = t[static_cast<size_t>(b - size + i)];
    const Task& now = t[static_cast<size_t>(b + i)];
    if (now.deps.size() != was.deps.size() || !(now.body == was.body)) return false;
    for (size_t k = 0; k < was.deps.size(); ++k) {
      const int d = was.deps[k];
      if (now.deps[k] != (d >= a ? d + size : d)) return false;
    }
  }
  return true;
}

bool RepeatFolder::leave_out(int a, int start, int size, const HeldTasks& held) {
  // Leaving the unit out makes the held units stand one unit later: nothing may still refer to
  // the first of them (it would then mean a unit that is no longer there).
  bool reaches_back = false;
  held([&](int& i) { reaches_back = reaches_back || (i >= a && i < a + size); });
  if (reaches_back) return false;
  program_.tasks.resize(static_cast<size_t>(start));
  held([&](int& i) {
    if (i >= a + size && i < a + 3 * size) i -= size;
  });
  ++more_;
  return true;
}

int RepeatFolder::end_round(int start, const HeldTasks& held) {
  if (closed_) return 0;
  const int end = static_cast<int>(program_.tasks.size());
  if (first_ >= 0) {
    if (++rounds_in_unit_ < period_) {
      if (end - (first_ + 2 * size_) > size_) closed_ = true;  // already longer than a unit
      return 0;
    }
    rounds_in_unit_ = 0;
    const int at = first_ + 2 * size_;
    if (end - at != size_ || !is_next_unit(first_, at, size_) || !leave_out(first_, at, size_, held)) {
      closed_ = true;  // the repetition ended: this unit and all after it are kept as written
      return 0;
    }
    return period_;
  }
  starts_.push_back(start);
  if (starts_.size() > static_cast<size_t>(3 * max_period_)) starts_.erase(starts_.begin());
  matched_.resize(static_cast<size_t>(max_period_), 0);
  const int n = static_cast<int>(starts_.size());
  for (int k = 1; k <= max_period_; ++k) {
    int& matched = matched_[static_cast<size_t>(k - 1)];
    bool repeats = false;
    if (3 * k <= n) {
      const int b2 = starts_[static_cast<size_t>(n - k)], b1 = starts_[static_cast<size_t>(n - 2 * k)],
                b0 = starts_[static_cast<size_t>(n - 3 * k)];
      const int size = end - b2;
      repeats = size > 0 && b2 - b1 == size && b1 - b0 == size && is_next_unit(b0, b2, size);
    }
    matched = repeats ? matched + 1 : 0;
  }
  for (int k = 1; k <= max_period_; ++k) {
    if (matched_[static_cast<size_t>(k - 1)] < settle_ * k) continue;
    const int b2 = starts_[static_cast<size_t>(n - k)], b0 = starts_[static_cast<size_t>(n - 3 * k)];
    const int size = end - b2;
    if (program_.repeated_step) throw std::logic_error("RepeatFolder: the program already has a repeated step");
    if (!leave_out(b0, b2, size, held)) continue;
    first_ = b0;
    size_ = size;
    period_ = k;
    starts_.clear();
    matched_.clear();
    return k;
  }
  return 0;
}

void RepeatFolder::finish() {
  closed_ = true;
  if (more_ > 0) program_.repeated_step = RepeatedStep{first_, size_, more_};
}

}  // namespace hetsim
