// File: planner/resharding/reshard_case.hpp
// One resharding on its own, as `hetsim reshard` and the microbenchmarks run it: two disjoint
// meshes, a spec on each, a tensor, a method and a load balancing; checked, then turned into a
// program of just its transfers.
#pragma once

#include <string>
#include <vector>

#include "planner/resharding/mesh_layout.hpp"
#include "planner/resharding/reshard_works.hpp"
#include "planner/resharding/sender_choice.hpp"
#include "sim/program.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

struct ReshardCase {
  Mesh src, dst;
  ShardingSpec src_spec, dst_spec;
  std::vector<long> tensor;
  double element_bytes = 4;
  ReshardMethod method = ReshardMethod::kBroadcast;
  LoadBalance balance = LoadBalance::kOrder;
  OrderOptions order;
};

// A problem with the case, for the user.
struct ReshardProblem {
  std::string field;  // "src", "dst", "tensor"
  std::string message;
};
// Every problem: mesh shapes against their device lists, a mesh row (host) whose GPUs are not on
// one cluster node, meshes sharing a GPU, specs that do not fit the tensor. Empty: valid.
[[nodiscard]] std::vector<ReshardProblem> check_reshard_case(const ReshardCase& c, const Cluster& cluster);

struct ReshardOutcome {
  MeshLayout src, dst;
  ReshardWorks works;
  ReshardSchedule schedule;
  Program program;  // the transfers alone, from time 0
  double tensor_bytes = 0;
  double network_bytes = 0;
};
// Precondition: check_reshard_case() is empty.
[[nodiscard]] ReshardOutcome build_reshard(const ReshardCase& c, const Cluster& cluster);

}  // namespace hetsim
