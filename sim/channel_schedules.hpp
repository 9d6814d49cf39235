// File: sim/channel_schedules.hpp
// The schedules NCCL/RCCL build beyond a single ring, as plain Schedule builders:
//   channel rings   k rings over whole nodes, ring c entering every node at its c-th GPU and
//                   leaving from the one before it (on a full xGMI mesh: each ring its own path
//                   through the node's links), so every GPU's NIC carries one ring's boundary
//                   crossing (NCCL's rail-aligned channels); on a DGX-1 NVLink mesh the rings
//                   follow the mesh's edge-disjoint cycles in both directions;
//   NVLS            NVLink SHARP on NVSwitch nodes: each GPU stores its data into the switch,
//                   the switch's reduction engine returns the reduced slice, multicast returns
//                   the whole result (intra-node reduce-scatter + all-gather through the switch);
//   mesh direct     on a full point-to-point mesh, reduce-scatter and all-gather as direct
//                   sends to every peer at once, so all n-1 links of each GPU carry traffic;
//   pipelining      phases of a hierarchical collective run concurrently on pieces of the
//                   buffer (NCCL's ring/tree/NVLSTree pipeline through intra- and inter-node parts).
#pragma once

#include <vector>

#include "sim/schedule.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// Members grouped by NVLink domain (a node, or the nodes of a rack-scale domain such as NVL72: the
// GPUs that reach each other without a NIC), consecutive members of one domain together, in the
// given order. The schedules below say "node" for such a group.
[[nodiscard]] std::vector<std::vector<int>> domain_groups(const std::vector<int>& ordered, const Cluster& c);
// The same, empty when the domains hold different member counts (hierarchical phases pair them).
[[nodiscard]] std::vector<std::vector<int>> members_by_domain(const std::vector<int>& ordered, const Cluster& c);

// k channel rings over whole nodes (see above), k the fewest members of any node. Requires >= 2
// nodes. Each enters a node at one member and leaves it from another, no member leaving in two
// rings (its NIC): in a node of k members every member leaves in one; in a larger one (72 and 56
// members of two NVL72 racks) k of its m crossing orders, spread evenly, k of its NICs carrying a
// ring each, as NCCL gives every node the same channels (the fewest any rank's search found:
// NVIDIA/nccl src/init.cc, the minimum of every rank's graphInfo nChannels). Inside NVSwitch nodes
// a ring visits the members in turn from its entry; inside full xGMI meshes (an even count of
// members) each ring takes its own order, so that the rings together use every link of the mesh
// once, as RCCL's channels do (the same order in every ring would send 7 rings of 8 over one link
// of each GPU); inside whole DGX-1 NVLink meshes the rings follow the mesh's edge-disjoint cycles
// in both directions, in turn.
[[nodiscard]] std::vector<std::vector<int>> channel_rings(const std::vector<std::vector<int>>& nodes, const Cluster& c);

// Adds each ring (visiting members in order, wrapping) with `steps` chunks of `bytes`.
void add_ring(Schedule& s, const std::vector<int>& ring, int steps, double bytes);

// True when every member of `node_members` (all in one NVLink domain) can use NVLS: NVSwitches
// that reduce (topologies/link_class.hpp: switch_reduction).
[[nodiscard]] bool nvls_capable(const std::vector<int>& node_members, const Cluster& c);

// NVLS inside one node over `members`, on a buffer of `bytes` per member:
//   reduce-scatter: each GPU -> switch `bytes`; switch reduction engine -> each GPU bytes / m
//   all-gather:     each GPU -> switch bytes / m; switch multicast -> each GPU `bytes`
void add_nvls_reduce_scatter(Schedule& s, const std::vector<int>& members, double bytes, const Cluster& c);
void add_nvls_all_gather(Schedule& s, const std::vector<int>& members, double bytes, const Cluster& c);

// Direct reduce-scatter (or all-gather) among `members`: every GPU sends bytes / m to every
// other member at once.
void add_direct_exchange(Schedule& s, const std::vector<int>& members, double bytes);

// The phases run as one pipeline on `pieces` pieces of the buffer: every phase is stretched to
// the same number of rounds L = pieces x (the most rounds of any phase), carrying its bytes
// evenly over them, and phase i starts i rounds after phase 0 (one round of fill per phase).
[[nodiscard]] Schedule pipelined(const std::vector<Schedule>& phases, int pieces);

// Pieces for pipelining `bytes` per GPU through phases of at most `max_rounds` rounds: chunks
// of at least kPipelinePieceBytes, at most kMaxPipelinePieces.
inline constexpr double kPipelinePieceBytes = 4.0 * 1024 * 1024;
inline constexpr int kMaxPipelinePieces = 8;
[[nodiscard]] int pipeline_pieces(double bytes, int max_rounds);

}  // namespace hetsim
