// File: planner/resharding/reshard_program.hpp
// A scheduled resharding as simulator tasks: each broadcast work one chained broadcast from its
// sender to the tile's replicas, each send/recv work one send, each local all-gather one
// all-gather inside the destination host, all on the pipeline streams, in the schedule's order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "planner/resharding/reshard_works.hpp"
#include "planner/resharding/sender_choice.hpp"
#include "sim/program.hpp"

namespace hetsim {

struct ReshardTasks {
  std::vector<int> tasks;                 // every task added, in order
  std::map<int, std::vector<int>> ready;  // per destination GPU: the tasks after which it holds its tiles
};

// Adds the works of `w` to `p` as `s` orders them, each depending on `deps` (the tasks producing
// the tensor). Labels are `label` plus the work's index.
ReshardTasks emit_reshard(Program& p, const ReshardWorks& w, const ReshardSchedule& s, const std::vector<int>& deps,
                          const std::string& label);

}  // namespace hetsim
