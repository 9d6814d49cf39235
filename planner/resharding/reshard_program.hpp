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

// The local all-gather `g` on `stream`, after `deps`; returns the task.
int emit_local_gather(Program& p, const LocalGather& g, std::vector<int> deps, const std::string& label,
                      CommStream stream);

// Adds the works of `w` to `p` as `s` orders them, each depending on `deps` (the tasks producing
// the tensor). Labels are `label` plus the work's index. `lockstep`: consecutive sends of equal
// size between distinct GPUs start together (the ranks of a TP group sending their parts) and
// become one task with mirrors, which simulates the same and faster; off, every send is a task of
// its own on its sender's stream, so the submission order holds per sender.
// `stream`: where the sends and broadcasts run. `with_gathers` false: the local all-gathers are left to the caller (emit_local_gather), who may
// issue them when the receivers are about to compute; `ready` then lists the sends only.
ReshardTasks emit_reshard(Program& p, const ReshardWorks& w, const ReshardSchedule& s, const std::vector<int>& deps,
                          const std::string& label, bool lockstep = false, bool with_gathers = true,
                          CommStream stream = CommStream::kPipeline);

}  // namespace hetsim
