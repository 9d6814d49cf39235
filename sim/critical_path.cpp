// File: sim/critical_path.cpp
#include "sim/critical_path.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace hetsim {

std::string label_kind(const std::string& label) {
  std::string out;
  bool in_number = false;
  for (size_t i = 0; i < label.size(); ++i) {
    const char c = label[i];
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    // A range of numbers ("mb1-6": steps 1 to 6 as one task) is a number too.
    if (c == '-' && in_number && i + 1 < label.size() && std::isdigit(static_cast<unsigned char>(label[i + 1])) != 0) continue;
    if (!digit) out += c;
    else if (!in_number) out += 'N';
    in_number = digit;
  }
  return out;
}

CriticalPath critical_path(const Program& program, const SimResult& result) {
  CriticalPath path;
  const size_t n = program.tasks.size();
  if (n == 0 || result.tasks.size() != n) return path;
  // Predecessors: the dependencies, and the task before it on each stream it runs on
  // (for_each_stream: the streams as the executor orders them).
  std::vector<std::vector<int>> before(n);
  std::vector<int> last(program.devices.size() * kStreamsPerDevice, -1);  // stream -> its latest task
  for (size_t i = 0; i < n; ++i) {
    const int t = static_cast<int>(i);
    before[t] = program.tasks[i].deps;
    for_each_stream(program.tasks[i], [&](size_t s) {
      if (last[s] >= 0) before[t].push_back(last[s]);
      last[s] = t;
    });
  }
  // Program::repeated_step: the second copy stands for the last one, which really ran
  // result.repeat_gap_s later (the tasks after the copies already carry that shift). The walk goes
  // over these real times, so it spans the whole iteration; where it leaves the last copy for an
  // earlier task, the copies left out lie in the wait between them, and that time is counted as the
  // path through the two simulated copies was made of (an estimate: each left-out copy assumed alike).
  const RepeatedStep rs = program.repeated_step.value_or(RepeatedStep{});
  const int a = rs.first, b = rs.first + rs.size, c = rs.first + 2 * rs.size;
  const double gap = rs.more > 0 ? result.repeat_gap_s : 0.0;
  auto in_last_copy = [&](int task) { return task >= b && task < c; };
  auto in_copies = [&](int task) { return task >= a && task < c; };
  auto shift = [&](int task) { return in_last_copy(task) ? gap : 0.0; };
  int t = 0;
  for (size_t i = 1; i < n; ++i) {
    const int k = static_cast<int>(i);
    if (result.tasks[i].end_s + shift(k) > result.tasks[t].end_s + shift(t)) t = k;
  }
  std::map<std::string, double> kinds, copy_kinds;
  double left_out = 0;  // the copies left out, where the walk crossed them
  while (t >= 0) {
    path.tasks.push_back(t);
    const TaskTiming& timing = result.tasks[t];
    auto& into = in_copies(t) ? copy_kinds : kinds;
    into[label_kind(program.tasks[t].label)] += timing.end_s - timing.start_s;
    int next = -1;
    for (int p : before[t]) {  // earlier in program order, so the walk ends
      if (next < 0 || result.tasks[p].end_s + shift(p) > result.tasks[next].end_s + shift(next)) next = p;
    }
    double wait = timing.start_s + shift(t) - (next >= 0 ? result.tasks[next].end_s + shift(next) : 0.0);
    if (gap > 0 && in_last_copy(t) && (next < 0 || !in_last_copy(next))) {
      left_out += gap;  // leaving the last copy: the wait holds the copies left out
      wait -= gap;
    }
    if (wait > 0) (in_copies(t) ? copy_kinds : kinds)["(waiting)"] += wait;
    t = next;
  }
  double in_copies_s = 0;
  for (const auto& [kind, seconds] : copy_kinds) in_copies_s += seconds;
  for (const auto& [kind, seconds] : copy_kinds) kinds[kind] += seconds * (in_copies_s > 0 ? 1.0 + left_out / in_copies_s : 1.0);
  if (in_copies_s <= 0 && left_out > 0) kinds["(waiting)"] += left_out;
  std::reverse(path.tasks.begin(), path.tasks.end());
  for (const auto& [kind, seconds] : kinds) {
    if (seconds > 0) path.by_kind.emplace_back(kind, seconds);  // a kind of no time on the path says nothing
  }
  std::stable_sort(path.by_kind.begin(), path.by_kind.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return path;
}

}  // namespace hetsim
