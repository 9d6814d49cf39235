// File: sim/network_overlap.cpp
#include "sim/network_overlap.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

namespace hetsim {

namespace {

// The streams that hold `task` (for_each_stream), sorted.
void streams_of(const Task& task, std::vector<size_t>& out) {
  out.clear();
  for_each_stream(task, [&](size_t s) { out.push_back(s); });
  std::sort(out.begin(), out.end());
}

// True when the sorted lists have an element in common (linear: groups reach 10^5 members).
bool share_one(const std::vector<size_t>& a, const std::vector<size_t>& b) {
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end();) {
    if (*i == *j) return true;
    if (*i < *j) {
      ++i;
    } else {
      ++j;
    }
  }
  return false;
}

// Sets of streams held once each, by number: a link keeps the number of the streams its tasks hold
// in common, and each intersection of two sets is computed once (a collective over 16 384 GPUs
// holds as many streams and crosses tens of thousands of links).
class StreamSets {
 public:
  int id(const std::vector<size_t>& streams) {
    const auto [it, fresh] = ids_.try_emplace(streams, static_cast<int>(sets_.size()));
    if (fresh) sets_.push_back(&it->first);
    return it->second;
  }
  int common(int a, int b) {
    if (a == b) return a;
    const auto key = std::minmax(a, b);
    if (const auto it = common_.find(key); it != common_.end()) return it->second;
    std::vector<size_t> both;
    std::set_intersection(sets_[a]->begin(), sets_[a]->end(), sets_[b]->begin(), sets_[b]->end(), std::back_inserter(both));
    const int c = id(both);
    common_.emplace(key, c);
    return c;
  }
  [[nodiscard]] bool empty(int set) const { return sets_[set]->empty(); }

 private:
  std::map<std::vector<size_t>, int> ids_;
  std::vector<const std::vector<size_t>*> sets_;  // by number (keys of ids_, which never move)
  std::map<std::pair<int, int>, int> common_;
};

}  // namespace

bool network_tasks_in_sequence(const Program& prog) {
  int previous = -1;
  std::vector<size_t> previous_streams, streams;
  for (size_t i = 0; i < prog.tasks.size(); ++i) {
    const Task& t = prog.tasks[i];
    if (std::holds_alternative<ComputeTask>(t.body)) continue;
    streams_of(t, streams);
    if (previous >= 0) {
      if (std::find(t.deps.begin(), t.deps.end(), previous) == t.deps.end() && !share_one(streams, previous_streams)) return false;
    }
    previous = static_cast<int>(i);
    previous_streams.swap(streams);
  }
  return true;
}

void SharedLinks::add_leg(int src, int dst, std::vector<int>& out) {
  ++legs_;
  const auto [it, fresh] = routes_.try_emplace((static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst));
  if (fresh) {
    fabric_.route(src, dst, scratch_);
    for (int l : scratch_.links) {
      if (fabric_.links()[static_cast<size_t>(l)].shared) it->second.push_back(l);
    }
  }
  out.insert(out.end(), it->second.begin(), it->second.end());
}

namespace {
void sort_unique(std::vector<int>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}
}  // namespace

std::vector<int> SharedLinks::of(const std::vector<Flow>& flows) {
  std::vector<int> out;
  for (const Flow& f : flows) {
    if (f.bytes <= 0) continue;
    const FlowLegs l = legs_of(fabric_, f);
    for (int i = 0; i < l.count; ++i) add_leg(l.legs[static_cast<size_t>(i)].first, l.legs[static_cast<size_t>(i)].second, out);
  }
  sort_unique(out);
  return out;
}

std::vector<int> SharedLinks::of(const std::vector<PreparedSchedule>& schedules) {
  std::vector<int> out;
  const auto add = [&](const std::vector<Flow>& flows) {
    const std::vector<int> some = of(flows);
    out.insert(out.end(), some.begin(), some.end());
  };
  for (const PreparedSchedule& s : schedules) {
    add(s.flows);
    for (const RoundGroup& g : s.rounds) add(g.flows);
  }
  sort_unique(out);
  return out;
}

std::vector<char> alone_on_links(const Program& prog, size_t link_count, const std::vector<const std::vector<int>*>& links) {
  StreamSets sets;
  std::vector<int> common(link_count, -1);  // per link: the streams its tasks so far hold in common (-1: none crossed it)
  std::vector<size_t> streams;
  for (size_t t = 0; t < prog.tasks.size(); ++t) {
    if (links[t] == nullptr) continue;
    streams_of(prog.tasks[t], streams);
    const int s = sets.id(streams);
    for (int l : *links[t]) {
      int& c = common[static_cast<size_t>(l)];
      c = c < 0 ? s : sets.common(c, s);
    }
  }
  std::vector<char> alone(prog.tasks.size(), 0);
  for (size_t t = 0; t < prog.tasks.size(); ++t) {
    if (links[t] == nullptr) continue;
    alone[t] = std::none_of(links[t]->begin(), links[t]->end(), [&](int l) { return sets.empty(common[static_cast<size_t>(l)]); }) ? 1 : 0;
  }
  return alone;
}

}  // namespace hetsim
