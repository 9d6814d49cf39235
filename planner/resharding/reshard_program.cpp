// File: planner/resharding/reshard_program.cpp
#include "planner/resharding/reshard_program.hpp"

#include <algorithm>


namespace hetsim {

ReshardTasks emit_reshard(Program& p, const ReshardWorks& w, const ReshardSchedule& s, const std::vector<int>& deps,
                          const std::string& label) {
  ReshardTasks out;
  // Per destination tile (local all-gather): the sends into its replicas.
  std::map<int, std::vector<int>> into;
  for (int i : s.order) {
    const ReshardWork& work = w.works[i];
    const int sender = s.sender[i];
    std::string name = label;
    name.append(".w").append(std::to_string(i));
    int task = 0;
    if (work.receivers.size() == 1) {
      SendTask send{sender, work.receivers.front(), work.bytes};
      task = p.add({std::move(name), std::move(send), deps});
    } else {
      std::vector<int> group = work.receivers;
      group.push_back(sender);
      std::sort(group.begin(), group.end());
      CollectiveTask b = collective(CollectiveOp::kBroadcast, std::move(group), work.bytes);
      b.root = sender;
      b.algorithm = Algorithm::kChain;
      b.stream = CommStream::kPipeline;
      task = p.add({name.append(".broadcast"), std::move(b), deps});
    }
    out.tasks.push_back(task);
    for (int r : work.receivers) {
      out.ready[r].push_back(task);
      into[r].push_back(task);
    }
  }
  for (const LocalGather& g : w.gathers) {
    std::vector<int> after;
    for (int r : g.group) after.insert(after.end(), into[r].begin(), into[r].end());
    std::sort(after.begin(), after.end());
    after.erase(std::unique(after.begin(), after.end()), after.end());
    std::vector<int> group = g.group;
    std::sort(group.begin(), group.end());
    CollectiveTask t = collective(CollectiveOp::kAllGather, std::move(group), g.bytes);
    t.stream = CommStream::kPipeline;
    std::string name = label;
    name.append(".gather").append(std::to_string(g.dst_tile));
    const int task = p.add({std::move(name), std::move(t), std::move(after)});
    out.tasks.push_back(task);
    for (int r : g.group) out.ready[r].push_back(task);
  }
  return out;
}

}  // namespace hetsim
