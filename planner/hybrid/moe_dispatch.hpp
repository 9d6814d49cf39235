// File: planner/hybrid/moe_dispatch.hpp
// What one GPU sends when a mixture-of-experts layer dispatches its tokens to the GPUs of their
// experts (the combine sends the same bytes back), for each dispatcher of Megatron-Core
// (MoeDispatcher), and the groups the flex dispatcher's two all-to-alls run over. Routing is taken
// uniform: each token's top_k distinct experts drawn from all of them alike, the busiest GPU moving
// router_imbalance times the mean. Internal to planner/hybrid/.
#pragma once

#include <vector>

#include "planner/hybrid/hybrid_plan.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

// The share of tokens none of whose top_k (distinct, uniformly drawn) experts is among `held` of
// the `experts`: C(experts - held, top_k) / C(experts, top_k).
[[nodiscard]] double routing_misses(double experts, double held, long top_k);

// One GPU's dispatch, as collective sizes in nccl-tests' conventions (sim/program.hpp).
struct DispatchTraffic {
  double all_to_all = 0;       // alltoall: over the EP group; flex: over each node's GPUs of the group
  double all_gather = 0;       // allgather: the gathered tokens (the combine's reduce-scatter is as large)
  double rail_all_to_all = 0;  // flex: over each rail of the group (its GPUs of one local rank, one per node)
};

// An EP group of `ep` GPUs laid over `nodes` nodes, ep / nodes in each.
struct EpSpan {
  int ep = 1;
  int nodes = 1;
};

// The traffic of dispatching `tokens` tokens of `token_bytes` each (this GPU's, after its TP split)
// whose `copies` routed rows (tokens x top_k, or the padded slots of a capacity) go to the experts:
//   alltoall  every routed row to its expert's GPU: a buffer of copies rows, (ep - 1)/ep of it sent;
//   allgather every token to every GPU: an all-gather of ep x tokens rows (no imbalance: every GPU
//             gets all of them);
//   flex      each token once to each other node holding one of its experts ((nodes - 1) x (1 -
//             misses of a node's experts) copies over the NICs, to the GPU of the same local rank),
//             and inside each node once to each GPU holding one of its experts from the GPU it landed
//             on (nodes x (ep/nodes - 1) x (1 - misses of a GPU's experts) copies over NVLink).
[[nodiscard]] DispatchTraffic dispatch_traffic(MoeDispatcher d, const MoeSpec& moe, double tokens, double copies,
                                               double token_bytes, EpSpan span);

// The NVLink domains (nodes, or rack-scale domains) an EP group of ep GPUs (each expert_tp apart)
// starting at a domain boundary spans on domains of `gpus_per_domain` GPUs. Dispatch says "node"
// for a domain: the GPUs a token reaches without a NIC.
[[nodiscard]] int ep_nodes(int ep, int expert_tp, int gpus_per_domain);

// The flex dispatcher's groups of an EP group (sorted devices): its GPUs in each NVLink domain, and
// its rails (the k-th GPU of the group in every domain, for each k). One domain: no rails.
struct FlexGroups {
  std::vector<std::vector<int>> nodes;
  std::vector<std::vector<int>> rails;
};
[[nodiscard]] FlexGroups flex_groups(const std::vector<int>& ep_group, const Cluster& cluster);

}  // namespace hetsim
