// File: planner/resharding/reshard_works.hpp
// The unit works of one cross-mesh resharding under each method: send/recv (every receiving GPU
// pulls its slices), send/recv with a local all-gather (Alpa's rewrite, where its conditions
// hold), broadcast (one broadcast per destination tile slice to all the tile's replicas) and
// signal-only (a 1-byte message per send/recv work, as Alpa's signal mode: latency and
// dependencies kept, the payload dropped; the upper bound).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/resharding/mesh_layout.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

enum class ReshardMethod { kSendRecv, kLocalAllGather, kBroadcast, kSignal };
[[nodiscard]] std::string_view method_name(ReshardMethod m);  // send-recv, local-all-gather, broadcast, signal
[[nodiscard]] std::optional<ReshardMethod> method_from_name(std::string_view name);

// `bytes` of slice `slice` that one of `senders` (the replicas of its source tile) sends to every
// GPU of `receivers`.
struct ReshardWork {
  int slice = 0;
  double bytes = 0;
  std::vector<int> senders;
  std::vector<int> receivers;
};

// After the sends of a local all-gather: the replicas of a destination tile, one host's GPUs,
// all-gather their parts back into the whole tile (`bytes`, the all-gather's output).
struct LocalGather {
  int dst_tile = 0;
  std::vector<int> group;
  double bytes = 0;
};

struct ReshardWorks {
  ReshardMethod requested = ReshardMethod::kBroadcast;
  ReshardMethod method = ReshardMethod::kBroadcast;  // what runs: local all-gather falls back to send/recv
  std::string note;                                  // why it fell back; empty otherwise
  std::vector<Slice> slices;
  std::vector<ReshardWork> works;
  std::vector<LocalGather> gathers;
};

// The works moving `src` into `dst` (disjoint device sets) by `method`. Hosts are the cluster's
// nodes. Local all-gather applies, as in Alpa, only when no destination tile is replicated
// across hosts, some tile is replicated inside a host, and a dimension of every tile divides
// by its replica count; the widest such dimension (the first of equals) is split among the
// replicas.
[[nodiscard]] ReshardWorks make_works(const MeshLayout& src, const MeshLayout& dst, ReshardMethod method, const Cluster& cluster);

// Bytes crossing NICs when the works run: a send between hosts once, a broadcast once per
// receiving host other than the sender's (the chain enters each host once, NVLink inside).
[[nodiscard]] double network_bytes(const ReshardWorks& w, const std::vector<int>& sender, const Cluster& cluster);

}  // namespace hetsim
