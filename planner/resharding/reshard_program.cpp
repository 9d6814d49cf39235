// File: planner/resharding/reshard_program.cpp
#include "planner/resharding/reshard_program.hpp"

#include <algorithm>
#include <optional>


namespace hetsim {

int emit_local_gather(Program& p, const LocalGather& g, std::vector<int> deps, const std::string& label,
                      CommStream stream) {
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  std::vector<int> group = g.group;
  std::sort(group.begin(), group.end());
  CollectiveTask t = collective(CollectiveOp::kAllGather, std::move(group), g.bytes);
  t.stream = stream;
  return p.add({label, std::move(t), std::move(deps)});
}

ReshardTasks emit_reshard(Program& p, const ReshardWorks& w, const ReshardSchedule& s, const std::vector<int>& deps,
                          const std::string& label, bool lockstep, bool with_gathers, CommStream stream) {
  ReshardTasks out;
  // Per destination GPU: the sends into it (a local all-gather waits for those of its group).
  std::map<int, std::vector<int>> into;
  auto record = [&](int task, const std::vector<int>& receivers) {
    out.tasks.push_back(task);
    for (int r : receivers) {
      out.ready[r].push_back(task);
      into[r].push_back(task);
    }
  };
  // Sends gathered into one lockstep task: the first is the task's own, the rest its mirrors.
  std::optional<SendTask> group;
  std::vector<int> group_receivers;
  std::string group_name;
  auto flush = [&] {
    if (!group) return;
    record(p.add({group_name, std::move(*group), deps}), group_receivers);
    group.reset();
    group_receivers.clear();
  };
  for (int i : s.order) {
    const ReshardWork& work = w.works[i];
    const int sender = s.sender[i];
    std::string name = label;
    name.append(".w").append(std::to_string(i));
    if (work.receivers.size() == 1) {
      const int to = work.receivers.front();
      if (lockstep && group && group->size_bytes == work.bytes) {
        const std::vector<std::pair<int, int>> pairs = group->transfers();
        const bool distinct = std::none_of(pairs.begin(), pairs.end(), [&](const std::pair<int, int>& x) {
          return x.first == sender || x.second == to;
        });
        if (distinct) {
          group->mirrors.emplace_back(sender, to);
          group_receivers.push_back(to);
          continue;
        }
      }
      flush();
      group = SendTask{sender, to, work.bytes, stream};
      group_receivers = {to};
      group_name = std::move(name);
      if (!lockstep) flush();
      continue;
    }
    flush();
    std::vector<int> members = work.receivers;
    members.push_back(sender);
    std::sort(members.begin(), members.end());
    CollectiveTask b = collective(CollectiveOp::kBroadcast, std::move(members), work.bytes);
    b.root = sender;
    b.algorithm = Algorithm::kChain;
    b.stream = stream;
    record(p.add({name.append(".broadcast"), std::move(b), deps}), work.receivers);
  }
  flush();
  if (!with_gathers) return out;
  for (const LocalGather& g : w.gathers) {
    std::vector<int> after;
    for (int r : g.group) after.insert(after.end(), into[r].begin(), into[r].end());
    std::string name = label;
    name.append(".gather").append(std::to_string(g.dst_tile));
    const int task = emit_local_gather(p, g, std::move(after), name, stream);
    out.tasks.push_back(task);
    for (int r : g.group) out.ready[r].push_back(task);
  }
  return out;
}

}  // namespace hetsim
