// File: sim/collective.hpp
// Collective algorithms as schedules (sim/schedule.hpp), modelled on how NCCL/RCCL run them:
//   all-reduce      ring (reduce-scatter + all-gather, 2(n-1) steps of S/n; over whole nodes one
//                   channel ring per GPU of a node, each crossing node boundaries through its own
//                   NIC), tree (double binary tree, pipelined reduce + broadcast, each tree
//                   carrying S/2), hierarchical (intra-node reduce-scatter -> inter-node
//                   all-reduce -> intra-node all-gather, pipelined), nvls (NVLink SHARP inside
//                   H100/H200 NVSwitch nodes, rail rings between nodes, pipelined), mesh (direct
//                   reduce-scatter + all-gather over every link of a full xGMI mesh)
//   all-gather      ring (n-1 steps), hierarchical, mesh; uneven shards: ring = padded to the largest
//   reduce-scatter  shard, grouped = one pipelined broadcast (reduce) per member
//   broadcast/reduce pipelined chain from (to) the root
//   all-to-all      pairwise: n-1 rounds, round s sends S/n from rank r to rank r+s
// Pipelined algorithms cut data into chunks of kPipelineChunkBytes. Every link runs at its
// achievable fraction of the wire rate (topologies/link_class.hpp). Schedule builders beyond
// single rings and trees live in sim/channel_schedules.hpp.
#pragma once

#include <string>
#include <vector>

#include "sim/program.hpp"
#include "sim/schedule.hpp"

namespace hetsim {

// NCCL's default 4 MiB channel buffer in 8 slices: the unit a pipelined algorithm forwards.
inline constexpr double kPipelineChunkBytes = 512.0 * 1024;
// The largest buffer one collective may move, 1 TiB: more than any GPU's memory holds (MI300X:
// 192 GB, H200: 141 GB). Pipelined algorithms hold a piece per kPipelineChunkBytes, so memory grows
// with the size (256 TiB took 12.6 GB), and past 8 EiB byte counts overflow 64 bits.
inline constexpr double kMaxCollectiveBytes = 1099511627776.0;

// nccl-tests' element: a 4-byte float (its count column is the size over this).
inline constexpr double kCollectiveElementBytes = 4;

// Why `bytes` is no collective's size, as a phrase to follow the size ("is not a whole number of
// 4-byte elements ..."): nccl-tests' conventions, whole 4-byte elements up to kMaxCollectiveBytes
// (3 B or 1kb, 125 B, move no whole element and read 0 elements and 0 GB/s). Empty when it is one.
[[nodiscard]] std::string collective_size_problem(double bytes);

// Members of `group` in the order rings and chains visit them: node by node (nodes ascending),
// inside a node along direct links where the fabric has them (DGX-1: 0-1-2-3-7-6-5-4).
[[nodiscard]] std::vector<int> topology_order(const std::vector<int>& group, const Cluster& cluster);

// Why `algorithm` cannot run `task` on this cluster; empty when it can. kAuto always can.
[[nodiscard]] std::string unsupported_reason(const CollectiveTask& task, Algorithm algorithm, const Cluster& cluster);

// The schedules `task` runs as, back to back, with `algorithm` (not kAuto). With the cluster's
// `fabric`, pipelined chains (broadcast, reduce) take the chunk count that suits their hops' latency
// and bandwidth (see collective.cpp: chain_chunks); without it, chunks of kPipelineChunkBytes.
[[nodiscard]] std::vector<Schedule> collective_schedules(const CollectiveTask& task, Algorithm algorithm,
                                                         const Cluster& cluster, const Fabric* fabric = nullptr);

struct AlgorithmChoice {
  Algorithm algorithm = Algorithm::kRing;
  double estimate_s = 0;  // alpha-beta estimate on idle links, with call_latency
};
// The algorithm to run: the task's own unless kAuto, else the applicable one with the smallest
// estimate among those the group's library runs (hierarchical only for NVIDIA + AMD groups; ties
// to the first of ring, tree, hierarchical, chain, pairwise, grouped, nvls, mesh).
[[nodiscard]] AlgorithmChoice choose_algorithm(const CollectiveTask& task, const Cluster& cluster, const Fabric& fabric);

// The fixed time a call of `task` takes before its data moves: the calibration profile's
// collective_latency (FittedCosts) of its members' GPU types, the largest; 0 without a profile.
[[nodiscard]] double call_latency(const CollectiveTask& task, const Cluster& cluster);

// A collective over `group` as alpha + beta * bytes: the line through the estimates of the
// algorithm the simulator would choose at `small_bytes` and `large_bytes` (alpha at least 0).
struct AlphaBetaFit {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
};
[[nodiscard]] AlphaBetaFit fit_alpha_beta(CollectiveOp op, const std::vector<int>& group, const Cluster& cluster,
                                          const Fabric& fabric, double small_bytes, double large_bytes);

// The collective of `program` that starts the most flows at once at phase fidelity (each of its
// schedules' GPU pairs; schedules run back to back): its task index and flow count (-1, 0: none).
// What simulating a program costs grows with it: an all-to-all over n GPUs starts n(n-1).
struct LargestCollective {
  int task = -1;
  size_t flows = 0;
};
[[nodiscard]] LargestCollective largest_collective(const Program& program, const Cluster& cluster);

// nccl-tests bus bandwidth factor: busbw = algbw * factor.
[[nodiscard]] double busbw_factor(CollectiveOp op, int n);

// Closed forms on a uniform idle network (every step alpha + bytes / B), for tests and estimates.
[[nodiscard]] double ring_allreduce_time(int n, double size_bytes, double bandwidth_Bps, double latency_s);

}  // namespace hetsim
