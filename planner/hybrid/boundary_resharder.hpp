// File: planner/hybrid/boundary_resharder.hpp
// How a pipeline program moves one boundary tensor between two stage copies' layouts: the works
// (planner/resharding/reshard_works.hpp, Megatron's matching ranks offered first) and their
// schedule under the plan's load balancing, with the senders' loads kept over the whole program.
// Without load balancing the answer follows from the two layouts alone, and a program meets the
// same pair once per micro-batch: each pair is worked out once and given back after.
#pragma once

#include <unordered_map>
#include <vector>

#include "planner/hybrid/hybrid_plan.hpp"
#include "planner/resharding/reshard_works.hpp"
#include "planner/resharding/sender_choice.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

class BoundaryResharder {
 public:
  struct Moves {
    MeshLayout from, into;
    ReshardWorks works;
    ReshardSchedule schedule;
  };

  BoundaryResharder(const ReshardingChoice& choice, const Cluster& cluster) : choice_(choice), cluster_(cluster) {}
  // The works and schedule moving `from` into `into`; valid until the next call.
  [[nodiscard]] const Moves& moves(const MeshLayout& from, const MeshLayout& into);

 private:
  const ReshardingChoice& choice_;
  const Cluster& cluster_;
  SenderLoads loads_;  // resharding senders' bytes, over the whole program
  std::unordered_map<size_t, std::vector<Moves>> known_;  // by the hash of both layouts (no load balancing)
  Moves last_;                                             // with load balancing: the latest
};

}  // namespace hetsim
