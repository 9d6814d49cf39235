// File: sim/mirror_copies.cpp
#include "sim/mirror_copies.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/critical_path.hpp"

namespace hetsim {

namespace {

size_t copies_of(const Task& t) {
  if (const auto* c = std::get_if<ComputeTask>(&t.body)) return static_cast<size_t>(c->copies);
  if (const auto* s = std::get_if<SendTask>(&t.body)) return static_cast<size_t>(s->copies);
  return std::get<CollectiveTask>(t.body).parts();
}

// Copy k of `t`'s body.
Task copy_of(const Task& t, size_t k) {
  Task out;
  out.label = t.label;  // (a copy's own label would be a kind of its own in the critical path)
  if (const auto* c = std::get_if<ComputeTask>(&t.body)) {
    const size_t run = (1 + c->mirrors.size()) / static_cast<size_t>(c->copies);
    const auto at = [&](size_t i) { return i == 0 ? c->device : c->mirrors[i - 1]; };
    ComputeTask one = *c;
    one.device = at(k * run);
    one.mirrors.clear();
    for (size_t i = k * run + 1; i < (k + 1) * run; ++i) one.mirrors.push_back(at(i));
    one.copies = 1;
    out.body = std::move(one);
  } else if (const auto* s = std::get_if<SendTask>(&t.body)) {
    const std::vector<std::pair<int, int>> transfers = s->copy_transfers(k);
    SendTask one = *s;
    one.src = transfers.front().first;
    one.dst = transfers.front().second;
    one.mirrors.assign(transfers.begin() + 1, transfers.end());
    one.copies = 1;
    out.body = std::move(one);
  } else {
    out.body = std::get<CollectiveTask>(t.body).part(k);
  }
  return out;
}

// The devices a task runs on, sorted.
std::vector<int> devices_of(const Task& t) {
  std::vector<int> d;
  if (const auto* c = std::get_if<ComputeTask>(&t.body)) {
    d.push_back(c->device);
    d.insert(d.end(), c->mirrors.begin(), c->mirrors.end());
  } else if (const auto* s = std::get_if<SendTask>(&t.body)) {
    for (const auto& [src, dst] : s->transfers()) d.insert(d.end(), {src, dst});
  } else {
    std::get<CollectiveTask>(t.body).for_each_member([&](int x) { d.push_back(x); });
  }
  std::sort(d.begin(), d.end());
  return d;
}

bool share_a_device(const std::vector<int>& a, const std::vector<int>& b) {
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) return true;
    a[i] < b[j] ? ++i : ++j;
  }
  return false;
}

}  // namespace

bool has_copies(const Program& p) {
  return std::any_of(p.tasks.begin(), p.tasks.end(), [](const Task& t) { return copies_of(t) > 1; });
}

WrittenOut written_out(const Program& p) {
  WrittenOut w;
  w.program = p;
  w.program.tasks.clear();
  w.first.resize(p.tasks.size());
  w.count.resize(p.tasks.size());
  std::vector<std::vector<int>> devices;  // of each copy of a task with several, once looked at
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const size_t n = copies_of(p.tasks[i]);
    w.first[i] = w.program.tasks.size();
    w.count[i] = n;
    std::vector<int> deps = p.tasks[i].deps;  // (a collective over mirrored devices names a task once per device)
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (size_t k = 0; k < n; ++k) {
      Task t = copy_of(p.tasks[i], k);
      std::vector<int> mine;
      for (const int dep : deps) {
        const size_t j = static_cast<size_t>(dep), m = w.count[j];
        if (m == 1) {
          t.deps.push_back(static_cast<int>(w.first[j]));
        } else if (m == n) {
          t.deps.push_back(static_cast<int>(w.first[j] + k));
        } else {
          if (mine.empty()) mine = devices_of(t);
          if (devices.size() < w.program.tasks.size()) devices.resize(w.program.tasks.size());
          std::vector<int> sharing, every;
          for (size_t c = 0; c < m; ++c) {
            const size_t index = w.first[j] + c;
            every.push_back(static_cast<int>(index));
            if (devices[index].empty()) devices[index] = devices_of(w.program.tasks[index]);
            if (share_a_device(mine, devices[index])) sharing.push_back(static_cast<int>(index));
          }
          const std::vector<int>& take = sharing.empty() ? every : sharing;
          t.deps.insert(t.deps.end(), take.begin(), take.end());
        }
      }
      w.program.tasks.push_back(std::move(t));
    }
  }
  if (p.repeated_step) {
    const RepeatedStep& rs = *p.repeated_step;
    const auto at = [&](size_t i) { return i < w.first.size() ? w.first[i] : w.program.tasks.size(); };
    const size_t first = at(static_cast<size_t>(rs.first)), second = at(static_cast<size_t>(rs.first + rs.size));
    w.program.repeated_step = RepeatedStep{static_cast<int>(first), static_cast<int>(second - first), rs.more};
  }
  return w;
}

SimResult onto_copies(const Program& p, const WrittenOut& w, SimResult r) {
  if (r.critical_path_by_kind.empty()) r.critical_path_by_kind = critical_path(w.program, r).by_kind;
  std::vector<TaskTiming> tasks(p.tasks.size());
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    TaskTiming t = r.tasks[w.first[i]];
    for (size_t k = 1; k < w.count[i]; ++k) {
      t.start_s = std::min(t.start_s, r.tasks[w.first[i] + k].start_s);
      t.end_s = std::max(t.end_s, r.tasks[w.first[i] + k].end_s);
    }
    tasks[i] = t;
  }
  r.tasks = std::move(tasks);
  return r;
}

}  // namespace hetsim
