// File: sim/critical_path.cpp
#include "sim/critical_path.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace hetsim {

std::string label_kind(const std::string& label) {
  std::string out;
  bool in_number = false;
  for (char c : label) {
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
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
  // Predecessors: the dependencies, and the task before it on each stream it runs on (as the
  // executor orders streams: compute per device, a collective on every member's stream, a send
  // on its sender's).
  std::vector<std::vector<int>> before(n);
  std::map<std::pair<int, int>, int> last;  // (device, stream: 0 compute, 1 + CommStream) -> task
  auto on_stream = [&](int t, int device, int stream) {
    const auto key = std::make_pair(device, stream);
    if (const auto it = last.find(key); it != last.end()) before[t].push_back(it->second);
    last[key] = t;
  };
  for (size_t i = 0; i < n; ++i) {
    const int t = static_cast<int>(i);
    before[t] = program.tasks[i].deps;
    if (const auto* c = std::get_if<ComputeTask>(&program.tasks[i].body)) {
      on_stream(t, c->device, 0);
    } else if (const auto* g = std::get_if<CollectiveTask>(&program.tasks[i].body)) {
      for (int d : g->group) on_stream(t, d, 1 + static_cast<int>(g->stream));
    } else if (const auto* s = std::get_if<SendTask>(&program.tasks[i].body)) {
      on_stream(t, s->src, 1 + static_cast<int>(s->stream));
    }
  }
  int t = 0;
  for (size_t i = 1; i < n; ++i) {
    if (result.tasks[i].end_s > result.tasks[t].end_s) t = static_cast<int>(i);
  }
  std::map<std::string, double> kinds;
  while (t >= 0) {
    path.tasks.push_back(t);
    const TaskTiming& timing = result.tasks[t];
    kinds[label_kind(program.tasks[t].label)] += timing.end_s - timing.start_s;
    int next = -1;
    for (int p : before[t]) {  // earlier in program order, so the walk ends
      if (next < 0 || result.tasks[p].end_s > result.tasks[next].end_s) next = p;
    }
    const double ready = next >= 0 ? result.tasks[next].end_s : 0.0;
    if (timing.start_s > ready) kinds["(waiting)"] += timing.start_s - ready;
    t = next;
  }
  std::reverse(path.tasks.begin(), path.tasks.end());
  path.by_kind.assign(kinds.begin(), kinds.end());
  std::stable_sort(path.by_kind.begin(), path.by_kind.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return path;
}

}  // namespace hetsim
