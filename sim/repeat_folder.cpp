// File: sim/repeat_folder.cpp
#include "sim/repeat_folder.hpp"

#include <algorithm>
#include <stdexcept>

namespace hetsim {

bool RepeatFolder::leave_out(int a, int start, int size, const HeldTasks& held) {
  // Leaving the unit out makes the held units stand one unit later: nothing may still refer to
  // the first of them (it would then mean a unit that is no longer there).
  // One walk over what is held: the indices to move are noted, and moved only if none reaches back.
  bool reaches_back = false;
  moving_.clear();
  held([&](int& i) {
    reaches_back = reaches_back || (i >= a && i < a + size);
    if (i >= a + size && i < a + 3 * size) moving_.push_back(&i);
  });
  if (reaches_back) return false;
  program_.tasks.resize(static_cast<size_t>(start));
  for (int* i : moving_) *i -= size;
  ++more_;
  return true;
}

bool RepeatFolder::round_repeats(int a, int was, int now, int size, int shift) const {
  const std::vector<Task>& t = program_.tasks;
  for (int i = 0; i < size; ++i) {
    const Task& w = t[static_cast<size_t>(was + i)];
    const Task& n = t[static_cast<size_t>(now + i)];
    if (n.deps.size() != w.deps.size() || !(n.body == w.body)) return false;
    for (size_t k = 0; k < w.deps.size(); ++k) {
      const int d = w.deps[k];
      if (n.deps[k] != (d >= a ? d + shift : d)) return false;
    }
  }
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
    if (end - at != size_ || !round_repeats(first_, at - size_, at, size_, size_) || !leave_out(first_, at, size_, held)) {
      closed_ = true;  // the repetition ended: this unit and all after it are kept as written
      return 0;
    }
    return period_;
  }
  if (++rounds_ > 16L * max_period_) {
    closed_ = true;  // no period found where a steady state would have shown one
    return 0;
  }
  starts_.push_back(start);
  if (starts_.size() > static_cast<size_t>(3 * max_period_ + 1)) starts_.pop_front();
  matched_.resize(static_cast<size_t>(max_period_), 0);
  // starts_[n - 1] is this round's; with period k its twin is round n - 1 - k, one unit (the k
  // rounds between) earlier, and the units considered start at starts_[n - 3k]. Each round is
  // checked against its twin as it comes, so a unit is checked round by round (its whole check,
  // once, before it is left out).
  const int n = static_cast<int>(starts_.size());
  const int size_now = end - start;
  std::vector<int> eligible;
  for (int k = 1; k <= max_period_; ++k) {
    int& matched = matched_[static_cast<size_t>(k - 1)];
    bool repeats = false;
    if (3 * k <= n && size_now > 0) {
      const int twin = starts_[static_cast<size_t>(n - 1 - k)];
      const int twin_size = starts_[static_cast<size_t>(n - k)] - twin;
      const int shift = start - twin;
      repeats = twin_size == size_now && round_repeats(starts_[static_cast<size_t>(n - 3 * k)], twin, start, size_now, shift);
    }
    matched = repeats ? matched + 1 : 0;
    if (matched >= settle_ * k) eligible.push_back(k);
  }
  if (eligible.empty() || rounds_ < retry_at_) return 0;
  // Every index still held, sorted: a unit whose first copy one of them points into cannot go.
  std::vector<int> held_now;
  held([&](int& i) { held_now.push_back(i); });
  std::sort(held_now.begin(), held_now.end());
  for (int k : eligible) {
    const int b2 = starts_[static_cast<size_t>(n - k)], b1 = starts_[static_cast<size_t>(n - 2 * k)],
              b0 = starts_[static_cast<size_t>(n - 3 * k)];
    const int size = end - b2;
    if (b2 - b1 != size || b1 - b0 != size || !round_repeats(b0, b1, b2, size, size)) continue;
    const auto it = std::lower_bound(held_now.begin(), held_now.end(), b0);
    if (it != held_now.end() && *it < b0 + size) continue;
    if (program_.repeated_step) throw std::logic_error("RepeatFolder: the program already has a repeated step");
    if (!leave_out(b0, b2, size, held)) continue;
    first_ = b0;
    size_ = size;
    period_ = k;
    starts_.clear();
    matched_.clear();
    return k;
  }
  // Something still points back (a stage's inbox waiting on many micro-batches): try again later.
  retry_at_ = rounds_ + backoff_;
  backoff_ *= 2;
  return 0;
}

void RepeatFolder::finish() {
  closed_ = true;
  if (more_ == 0) return;
  program_.repeated_step = RepeatedStep{first_, size_, more_};
}

}  // namespace hetsim
