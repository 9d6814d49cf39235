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
  int t = 0;
  for (size_t i = 1; i < n; ++i) {
    if (result.tasks[i].end_s > result.tasks[t].end_s) t = static_cast<int>(i);
  }
  // Program::repeated_step: a predecessor in its copies really ended in the last copy, the left-out
  // time later, and the copy the walk enters stands for every copy the program leaves out.
  const RepeatedStep rs = program.repeated_step.value_or(RepeatedStep{});
  const int a = rs.first, b = rs.first + rs.size, c = rs.first + 2 * rs.size;
  int copy_begin = -1, copy_end = -1;
  auto in_copies = [&](int task) { return task >= a && task < c; };
  auto ready_of = [&](int p, int from) { return result.tasks[p].end_s + (from >= c && in_copies(p) ? result.repeat_gap_s : 0); };
  std::map<std::string, double> kinds;
  while (t >= 0) {
    path.tasks.push_back(t);
    const TaskTiming& timing = result.tasks[t];
    const double weight = t >= copy_begin && t < copy_end ? 1.0 + static_cast<double>(rs.more) : 1.0;
    kinds[label_kind(program.tasks[t].label)] += weight * (timing.end_s - timing.start_s);
    int next = -1;
    for (int p : before[t]) {  // earlier in program order, so the walk ends
      if (next < 0 || ready_of(p, t) > ready_of(next, t)) next = p;
    }
    const double ready = next >= 0 ? ready_of(next, t) : 0.0;
    if (timing.start_s > ready) kinds["(waiting)"] += weight * (timing.start_s - ready);
    if (next >= 0 && t >= c && in_copies(next) && rs.more > 0) {
      copy_begin = next >= b ? b : a;
      copy_end = next >= b ? c : b;
    }
    t = next;
  }
  std::reverse(path.tasks.begin(), path.tasks.end());
  path.by_kind.assign(kinds.begin(), kinds.end());
  std::stable_sort(path.by_kind.begin(), path.by_kind.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return path;
}

}  // namespace hetsim
