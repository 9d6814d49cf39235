// File: planner/reference_stand_in.hpp
// The smaller cluster an upper-bound reference of thousands of GPUs is derived from: the same
// node type, a whole fraction of its nodes, the same batch per GPU. Planning and simulating the
// reference there costs a fraction of it on every GPU; the planner's closed form then scales the
// figure to the whole type (planner/hybrid/hybrid_reference.hpp, hybrid_weak_scaling).
#pragma once

#include <optional>

#include "topologies/cluster.hpp"

namespace hetsim {

// References of up to this many GPUs are planned and simulated on the GPUs themselves.
inline constexpr int kReferenceDirectMaxGpus = 1024;

struct ReferenceStandIn {
  Cluster cluster;  // the same node type and network, fewer nodes
  long batch = 1;   // its global batch: the type's over `copies`, rounded when it does not divide
  int copies = 1;   // the type's GPUs over the stand-in's: a whole number
};

// The stand-in for `homogeneous` (one node type) with global batch `batch`, or nullopt where the
// reference is computed on the type's own GPUs: at most `max_gpus` of them; a graph network (its
// links are not a pattern that shrinks); degraded_nodes (they are not alike); or no node count
// that fits. Its node count is the largest that divides the type's, holds at most `max_gpus` and
// at least a quarter of that many GPUs, is made of whole NVLink domains, and tiles the leaves
// (and clos3 pods) of the network: whole leaves, or a whole fraction of one. Counts that also
// divide the batch over the copies are preferred, so that every GPU keeps exactly its share.
[[nodiscard]] std::optional<ReferenceStandIn> reference_stand_in(const Cluster& homogeneous, long batch,
                                                                 int max_gpus = kReferenceDirectMaxGpus);

}  // namespace hetsim
