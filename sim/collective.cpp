// File: sim/collective.cpp
#include "sim/collective.hpp"

#include "sim/channel_schedules.hpp"
#include "topologies/link_class.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace hetsim {

namespace {

int chunks_for(double bytes) { return std::max(1, static_cast<int>(std::ceil(bytes / kPipelineChunkBytes))); }

// Chunks of pipelined chains of `bytes` each along `chains` (one count for all: a schedule's rounds
// run in step). NCCL keeps several chunks of a chain in flight (NCCL_STEPS slots), so a chunk's
// latency hides under the transfer of the ones behind it and only the fill pays the hops'
// latencies. A schedule's rounds each pay their latency in full; the count k that minimises the
// rounds' time, (k + h - 1) (alpha + bytes / k / B) over h hops of at most alpha latency and at
// least B bandwidth (k* = sqrt((h - 1) bytes / (B alpha))), stands in for that, never in chunks
// smaller than kMinChainChunkBytes (NCCL's LL128 protocol moves mid-size messages in lines of a
// few KiB) and never more than kMaxChainChunks of them unless NCCL's own 512 KiB chunks are more
// (a step-fidelity run sends every chunk). Without the fabric: chunks of kPipelineChunkBytes.
constexpr double kMinChainChunkBytes = 4096;
constexpr double kMaxChainChunks = 4096;
int chain_chunks(const std::vector<std::vector<int>>& chains, double bytes, const Fabric* fabric) {
  if (fabric == nullptr) return chunks_for(bytes);
  const int most = std::max(chunks_for(bytes), static_cast<int>(std::min(kMaxChainChunks, std::ceil(bytes / kMinChainChunkBytes))));
  double alpha = 0, bw = 1e300, fill = 0;
  for (const std::vector<int>& chain : chains) {
    fill = std::max(fill, static_cast<double>(chain.size()) - 2);
    for (size_t p = 0; p + 1 < chain.size(); ++p) {
      const Route r = fabric->route(chain[p], chain[p + 1]);
      alpha = std::max(alpha, r.latency_s);
      bw = std::min(bw, fabric->bottleneck_Bps(r));
    }
  }
  if (alpha <= 0 || bw >= 1e300) return most;
  const double best = std::sqrt(fill * bytes / (bw * alpha));
  return static_cast<int>(std::clamp(std::round(best), 1.0, static_cast<double>(most)));
}

// Pipelined chain broadcast from chain[0] (or reduce towards it): `bytes` in `k` chunks.
void add_chain(Schedule& s, const std::vector<int>& chain, double bytes, bool towards_root, int k) {
  const int n = static_cast<int>(chain.size());
  if (n < 2 || bytes <= 0) return;
  for (int p = 0; p + 1 < n; ++p) {
    if (towards_root) s.edges.push_back({chain[p + 1], chain[p], n - 2 - p, k, bytes / k});
    else s.edges.push_back({chain[p], chain[p + 1], p, k, bytes / k});
  }
}

std::vector<std::vector<int>> per_domain(const std::vector<int>& ordered, const Cluster& c) {
  return members_by_domain(ordered, c);
}

// At least 2 nodes of at least 2 members each: where channel rings apply.
bool crosses_domains(const std::vector<std::vector<int>>& nodes) {
  return nodes.size() >= 2 && std::all_of(nodes.begin(), nodes.end(), [](const auto& n) { return n.size() >= 2; });
}

// Every pair of members has its own link: one full xGMI mesh node.
bool on_full_mesh(const std::vector<int>& members, const Cluster& c) {
  const int node = c.gpus[members.front()].node;
  for (int g : members) {
    if (c.gpus[g].node != node) return false;
  }
  return c.node_type_of_gpu(members.front()).intra.fabric == IntraFabric::kXgmiMesh;
}

// Rings inside one node for the intra-node phases of a hierarchical collective: every
// edge-disjoint ring of a whole mesh node in both directions (each carrying its share), else the
// one topology-ordered ring.
std::vector<std::vector<int>> node_rings(const std::vector<int>& members, const Cluster& c) {
  const GpuSlot& first = c.gpus[members.front()];
  const NodeType& nt = c.node_types[first.node_type];
  const std::vector<std::array<int, 8>> cycles =
      static_cast<int>(members.size()) == nt.gpus_per_node ? disjoint_rings(nt) : std::vector<std::array<int, 8>>{};
  if (cycles.empty()) return {members};
  const int base = members.front() - first.local;  // GPU index of local 0
  std::vector<std::vector<int>> rings;
  for (const auto& cycle : cycles) {
    std::vector<int> ring;
    for (int local : cycle) ring.push_back(base + local);
    rings.push_back(ring);
    std::reverse(ring.begin(), ring.end());
    rings.push_back(ring);
  }
  return rings;
}

// The j-th member of every node: the inter-node rings of a hierarchical collective.
std::vector<std::vector<int>> cross_rings(const std::vector<std::vector<int>>& nodes) {
  std::vector<std::vector<int>> rings(nodes.front().size());
  for (const auto& n : nodes) {
    for (size_t j = 0; j < n.size(); ++j) rings[j].push_back(n[j]);
  }
  return rings;
}

// Balanced binary tree over positions [lo, hi) of `order`: parent of each position, and heights.
int build_tree(int lo, int hi, int parent, std::vector<int>& parent_of, std::vector<int>& height) {
  if (lo >= hi) return -1;
  const int mid = (lo + hi) / 2;
  parent_of[mid] = parent;
  const int l = build_tree(lo, mid, mid, parent_of, height);
  const int r = build_tree(mid + 1, hi, mid, parent_of, height);
  height[mid] = 1 + std::max(l, r);
  return height[mid];
}

// One binary tree of a double binary tree: reduce up, then broadcast down, pipelined in
// `chunks` chunks (0: chunks of kPipelineChunkBytes).
void add_tree(Schedule& s, const std::vector<int>& order, double bytes, int chunks = 0) {
  const int n = static_cast<int>(order.size());
  std::vector<int> parent(n, -1), height(n, 0), depth(n, 0);
  build_tree(0, n, -1, parent, height);
  const int root = static_cast<int>(std::find(parent.begin(), parent.end(), -1) - parent.begin());
  // Depth from the root: parents come before children when walking from the root's height down.
  std::vector<int> by_height(n);
  std::iota(by_height.begin(), by_height.end(), 0);
  std::sort(by_height.begin(), by_height.end(), [&](int a, int b) { return height[a] > height[b]; });
  for (int v : by_height) depth[v] = parent[v] < 0 ? 0 : depth[parent[v]] + 1;
  const int k = chunks > 0 ? chunks : chunks_for(bytes);
  const int h_root = height[root];
  for (int v = 0; v < n; ++v) {
    if (parent[v] < 0) continue;
    s.edges.push_back({order[v], order[parent[v]], height[v], k, bytes / k});                 // reduce
    s.edges.push_back({order[parent[v]], order[v], h_root + depth[parent[v]], k, bytes / k});  // broadcast
  }
}

// The rings NCCL's channels run over the members in topology order `ring`: over nodes (NVLink
// domains) of at least 2 members each, one channel per member of the smallest (each leaving
// through its own NIC); over one whole 8-GPU mesh node (DGX-1 NVLink, xGMI) its edge-disjoint
// cycles in both directions, so every link carries traffic, not only the single links of one
// cycle; over part of a mesh node (or a 4-GPU one) the ring both ways, so each link of it carries
// traffic in both directions; else the one ring. Ring, broadcast and reduce spread over these.
std::vector<std::vector<int>> channels(const std::vector<int>& ring, const Cluster& c) {
  const std::vector<std::vector<int>> nodes = domain_groups(ring, c);
  if (crosses_domains(nodes)) return channel_rings(nodes, c);
  const IntraFabric f = c.node_type_of_gpu(ring.front()).intra.fabric;
  const bool mesh = f == IntraFabric::kNvlinkMesh || f == IntraFabric::kXgmiMesh;
  if (nodes.size() == 1 && mesh && ring.size() >= 3) {  // one mesh node (a mesh's NVLink domain is its node)
    std::vector<std::vector<int>> rings = node_rings(ring, c);
    if (rings.size() > 1) return rings;
    return {ring, std::vector<int>(ring.rbegin(), ring.rend())};
  }
  return {ring};
}

std::vector<int> rotated(const std::vector<int>& v, size_t by) {
  std::vector<int> out(v.begin() + static_cast<long>(by % v.size()), v.end());
  out.insert(out.end(), v.begin(), v.begin() + static_cast<long>(by % v.size()));
  return out;
}

double max_shard(const CollectiveTask& t, int n) {
  if (t.shard_bytes.empty()) return t.size_bytes / n;
  return *std::max_element(t.shard_bytes.begin(), t.shard_bytes.end());
}

// Shard of each member in topology order.
std::map<int, double> shards_by_device(const CollectiveTask& t) {
  std::map<int, double> out;
  const int n = static_cast<int>(t.group.size());
  for (int i = 0; i < n; ++i) out[t.group[i]] = t.shard_bytes.empty() ? t.size_bytes / n : t.shard_bytes[i];
  return out;
}

bool is_gather_or_scatter(CollectiveOp op) { return op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter; }

}  // namespace

std::vector<int> topology_order(const std::vector<int>& group, const Cluster& c) {
  auto rank_in_node = [&](int g) {
    const GpuSlot& s = c.gpus[g];
    const NodeType& nt = c.node_types[s.node_type];
    if (nt.intra.fabric == IntraFabric::kNvlinkMesh) {
      const auto& ring = dgx1_ring();
      return static_cast<int>(std::find(ring.begin(), ring.end(), s.local) - ring.begin());
    }
    return s.local;
  };
  std::vector<int> out = group;
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    if (c.gpus[a].node != c.gpus[b].node) return c.gpus[a].node < c.gpus[b].node;
    return rank_in_node(a) < rank_in_node(b);
  });
  return out;
}

std::string unsupported_reason(const CollectiveTask& t, Algorithm a, const Cluster& c) {
  const bool uneven = !t.shard_bytes.empty();
  switch (a) {
    case Algorithm::kAuto: return "";
    case Algorithm::kRing:
      if (t.op == CollectiveOp::kAllReduce || is_gather_or_scatter(t.op)) return "";
      return "ring runs allreduce, allgather and reducescatter; use chain for broadcast/reduce, pairwise for alltoall";
    case Algorithm::kTree:
      return t.op == CollectiveOp::kAllReduce ? "" : "tree runs allreduce only";
    case Algorithm::kHierarchical:
      if (t.op != CollectiveOp::kAllReduce && !is_gather_or_scatter(t.op)) return "hierarchical runs allreduce, allgather and reducescatter";
      if (uneven) return "hierarchical needs even shards";
      if (per_domain(topology_order(t.group, c), c).empty()) return "hierarchical needs the same number of members on every node";
      return "";
    case Algorithm::kChain:
      return t.op == CollectiveOp::kBroadcast || t.op == CollectiveOp::kReduce ? "" : "chain runs broadcast and reduce";
    case Algorithm::kPairwise:
      return t.op == CollectiveOp::kAllToAll ? "" : "pairwise runs alltoall";
    case Algorithm::kGrouped:
      return is_gather_or_scatter(t.op) ? "" : "grouped (one broadcast or reduce per member) runs allgather and reducescatter";
    case Algorithm::kNvls: {
      if (t.op != CollectiveOp::kAllReduce) return "nvls (NVLink SHARP) runs allreduce only";
      const std::vector<std::vector<int>> nodes = per_domain(topology_order(t.group, c), c);
      if (nodes.empty()) return "nvls needs the same number of members on every node";
      for (const auto& n : nodes) {
        if (!nvls_capable(n, c)) {
          return "nvls needs at least 2 members per node on NVSwitch nodes that reduce in the switch (H100/H200, or "
                 "intra_node.switch_reduction)";
        }
      }
      return "";
    }
    case Algorithm::kPxn: {
      if (t.op != CollectiveOp::kAllToAll) return "pxn runs alltoall only";
      if (uneven) return "pxn needs even shards";
      const std::vector<std::vector<int>> nodes = per_domain(topology_order(t.group, c), c);
      if (nodes.size() < 2 || nodes.front().size() < 2) {
        return "pxn needs at least 2 members on each of at least 2 nodes, the same number on every node";
      }
      for (const auto& n : nodes) {
        for (size_t j = 0; j < n.size(); ++j) {
          if (c.gpus[n[j]].in_domain != c.gpus[nodes.front()[j]].in_domain) return "pxn needs every node's members at the same local positions (rails)";
        }
        const IntraFabric f = c.node_type_of_gpu(n.front()).intra.fabric;
        if (c.device_of(n.front()).vendor != Vendor::kNvidia || (f != IntraFabric::kNvswitch && f != IntraFabric::kNvlinkMesh)) {
          return "pxn (NCCL's PCI x NVLink all-to-all) needs NVIDIA GPUs on NVLink nodes";
        }
      }
      return "";
    }
    case Algorithm::kMesh:
      if (t.op == CollectiveOp::kBroadcast || t.op == CollectiveOp::kReduce) return "mesh runs allreduce, allgather, reducescatter and alltoall";
      if (uneven) return "mesh needs even shards";
      if (t.op != CollectiveOp::kAllToAll && !on_full_mesh(t.group, c)) {
        return "mesh (direct sends to every peer) runs allreduce, allgather and reducescatter inside one xgmi-mesh node; alltoall on any group";
      }
      return "";
  }
  return "unknown algorithm";
}

std::vector<Schedule> collective_schedules(const CollectiveTask& t, Algorithm a, const Cluster& c, const Fabric* fabric) {
  const std::vector<int> ring = topology_order(t.group, c);
  const int n = static_cast<int>(ring.size());
  const double s = t.size_bytes;
  std::vector<Schedule> out;
  if (n < 2 || s <= 0) return out;
  Schedule one;
  switch (a) {
    case Algorithm::kAuto: throw std::logic_error("collective_schedules: resolve kAuto with choose_algorithm first");
    case Algorithm::kRing: {
      const std::vector<std::vector<int>> rings = channels(ring, c);
      const double k = static_cast<double>(rings.size());
      for (const auto& r : rings) {
        if (t.op == CollectiveOp::kAllReduce) add_ring(one, r, 2 * (n - 1), s / n / k);
        else add_ring(one, r, n - 1, max_shard(t, n) / k);  // uneven shards padded to the largest
      }
      out.push_back(std::move(one));
      break;
    }
    case Algorithm::kTree:
      add_tree(one, ring, s / 2);
      add_tree(one, rotated(ring, 1), s / 2);  // the second tree: leaves of the first become inner nodes
      out.push_back(std::move(one));
      break;
    case Algorithm::kHierarchical: {
      const std::vector<std::vector<int>> nodes = per_domain(ring, c);
      const int m = static_cast<int>(nodes.front().size());
      const int nn = static_cast<int>(nodes.size());
      Schedule intra, inter;
      const int inter_steps = t.op == CollectiveOp::kAllReduce ? 2 * (nn - 1) : nn - 1;
      const double inter_chunk = t.op == CollectiveOp::kAllReduce ? s / m / nn : s / n;
      for (const auto& node : nodes) {
        const std::vector<std::vector<int>> rings = node_rings(node, c);
        for (const auto& r : rings) add_ring(intra, r, m - 1, s / m / static_cast<double>(rings.size()));
      }
      for (const auto& r : cross_rings(nodes)) add_ring(inter, r, inter_steps, inter_chunk);
      // The phases run as one pipeline on pieces of the buffer, as NCCL's do.
      std::vector<Schedule> phases;
      if (t.op == CollectiveOp::kAllReduce) {  // reduce-scatter, all-reduce, all-gather
        phases = {intra, inter, intra};
      } else if (t.op == CollectiveOp::kAllGather) {  // across nodes first, then inside
        phases = {inter, intra};
      } else {  // reduce-scatter: inside first, then across nodes
        phases = {intra, inter};
      }
      std::erase_if(phases, [](const Schedule& x) { return x.edges.empty(); });
      if (phases.empty()) break;
      int most = 1;
      for (const Schedule& p : phases) most = std::max(most, p.rounds());
      out.push_back(phases.size() == 1 ? phases.front() : pipelined(phases, pipeline_pieces(s / m, most)));
      break;
    }
    case Algorithm::kNvls: {
      // NVLS inside each node; across nodes a double binary tree on each rail all-reduces each
      // GPU's reduced slice (NCCL's NVLSTree), all pipelined.
      const std::vector<std::vector<int>> nodes = per_domain(ring, c);
      const int m = static_cast<int>(nodes.front().size());
      const int nn = static_cast<int>(nodes.size());
      Schedule rs, inter, ag;
      for (const auto& node : nodes) {
        add_nvls_reduce_scatter(rs, node, s, c);
        add_nvls_all_gather(ag, node, s, c);
      }
      const double setup = switch_reduction(c.node_type_of_gpu(ring.front())).latency_s;
      if (nn == 1) {
        one.edges = rs.edges;
        one.edges.insert(one.edges.end(), ag.edges.begin(), ag.edges.end());
        one.setup_s = setup;
        out.push_back(std::move(one));
        break;
      }
      // Tree chunks of at least kPipelinePieceBytes, at most 128: the fill (2 x depth rounds)
      // stays a few percent while per-chunk latencies stay small against the chunk's transfer.
      const double per_tree = s / m / 2;
      const int k = static_cast<int>(std::clamp(std::floor(per_tree / kPipelinePieceBytes), 1.0, 128.0));
      for (const auto& r : cross_rings(nodes)) {
        add_tree(inter, r, per_tree, k);
        add_tree(inter, rotated(r, 1), per_tree, k);
      }
      Schedule all = pipelined({rs, inter, ag}, 1);
      all.setup_s = setup;
      out.push_back(std::move(all));
      break;
    }
    case Algorithm::kMesh: {
      // Direct sends to every peer: all n-1 links of each GPU at once. An all-to-all sends every
      // peer its pair share at once, on any group: NCCL and RCCL post an all-to-all's sends and
      // receives as one group of point-to-point operations, spread over their p2p channels and
      // run by one kernel (enqueue.cc, scheduleP2pTasksToPlan), not peer after peer as the
      // pairwise rounds would; the flows then share the links (held as shifts at once: n(n-1)
      // transfers, not edges).
      if (t.op == CollectiveOp::kAllReduce) {
        Schedule ag;
        add_direct_exchange(one, ring, s);
        add_direct_exchange(ag, ring, s);
        out = {one, ag};
      } else if (t.op == CollectiveOp::kAllToAll) {
        one.shifts = {ring, s / n, true};
        out.push_back(std::move(one));
      } else {
        add_direct_exchange(one, ring, s);
        out.push_back(std::move(one));
      }
      break;
    }
    case Algorithm::kChain: {
      // NCCL's broadcast and reduce: a pipelined chain from the root along each channel's ring,
      // each channel carrying its share of the buffer.
      const std::vector<std::vector<int>> rings = channels(ring, c);
      const double share = s / static_cast<double>(rings.size());
      std::vector<std::vector<int>> chains;
      for (const auto& r : rings) chains.push_back(rotated(r, static_cast<size_t>(std::find(r.begin(), r.end(), t.root) - r.begin())));
      const int k = chain_chunks(chains, share, fabric);
      for (const auto& chain : chains) add_chain(one, chain, share, t.op == CollectiveOp::kReduce, k);
      out.push_back(std::move(one));
      break;
    }
    case Algorithm::kPxn: {
      // NCCL's all-to-all with PXN (NCCL 2.12+, on by default): a GPU hands what it sends to a
      // remote GPU on rail r to its own node's GPU on rail r over NVLink, which sends it, together
      // with its node's other GPUs' data for that destination, as one message over its own NIC:
      // no transfer crosses rails. Inside each node every GPU sends every other m pair shares
      // (its own and the m - 1 remote nodes' on that rail); on each rail every node sends every
      // other node g pair shares. The two phases run as one pipeline on pieces of the buffer.
      // Held as its nodes (sim/rail_exchange.hpp): 33.5 M edges over 16 384 GPUs otherwise.
      one.rails = {per_domain(ring, c), s / n, pipeline_pieces(s, 1)};
      out.push_back(std::move(one));
      break;
    }
    case Algorithm::kPairwise:  // step k: every member to the one k places on (n(n-1) sends, held as shifts)
      one.shifts = {ring, s / n};
      out.push_back(std::move(one));
      break;
    case Algorithm::kGrouped: {
      // One pipelined chain per member along the ring: broadcasts of each shard (all-gather) or
      // reductions of each member's part towards it (reduce-scatter), all at once.
      // Held as ring chains (n chains, not n(n-1) edges): the chunks add_chain would lay out.
      const std::map<int, double> shard = shards_by_device(t);
      RingChains& chains = one.chains;
      chains.ring = ring;
      chains.towards_root = t.op == CollectiveOp::kReduceScatter;
      for (int i = 0; i < n; ++i) {
        const double bytes = shard.at(ring[i]);
        const int k = n < 2 || bytes <= 0 ? 0 : chunks_for(bytes);
        chains.chunks.push_back(k);
        chains.chunk_bytes.push_back(k > 0 ? bytes / k : 0.0);
      }
      out.push_back(std::move(one));
      break;
    }
  }
  return out;
}

LargestCollective largest_collective(const Program& program, const Cluster& cluster) {
  LargestCollective out;
  std::unique_ptr<Fabric> fabric;
  // Programs repeat a few collectives many times: each kind is counted once.
  std::map<std::tuple<CollectiveOp, Algorithm, double, int, std::vector<int>, std::vector<double>>, size_t> seen;
  for (size_t i = 0; i < program.tasks.size(); ++i) {
    const auto* t = std::get_if<CollectiveTask>(&program.tasks[i].body);
    if (t == nullptr || t->group.size() < 2) continue;
    auto key = std::make_tuple(t->op, t->algorithm, t->size_bytes, t->root, t->group, t->shard_bytes);
    auto it = seen.find(key);
    if (it == seen.end()) {
      size_t flows = 0;
      if (!fabric) fabric = std::make_unique<Fabric>(cluster);
      const Algorithm a = choose_algorithm(*t, cluster, *fabric).algorithm;
      for (const Schedule& s : collective_schedules(*t, a, cluster, fabric.get())) {  // shifts: every ordered pair (not built)
        flows = std::max(flows, s.shifts.ring.size() >= 2 ? s.shifts.ring.size() * (s.shifts.ring.size() - 1) : merged_flows(s).size());
      }
      it = seen.emplace(std::move(key), flows).first;
    }
    const size_t flows = it->second * t->parts();  // mirror groups run theirs at once
    if (flows > out.flows) out = {static_cast<int>(i), flows};
  }
  return out;
}

std::string collective_size_problem(double bytes) {
  if (bytes != std::floor(bytes)) return "is not a whole number of bytes";
  if (bytes < kCollectiveElementBytes) return "is less than one 4-byte element (nccl-tests' float); expected at least 4B";
  if (bytes > kMaxCollectiveBytes) return "is more than one collective moves; expected at most 1TiB (more than any GPU's memory)";
  if (std::fmod(bytes, kCollectiveElementBytes) != 0) {
    return "is not a whole number of 4-byte elements (nccl-tests' float, its count column): round it to a multiple of 4 bytes";
  }
  return "";
}

double call_latency(const CollectiveTask& task, const Cluster& cluster) {
  double most = 0;
  int type = -1;  // a run of members of one node type (a node's GPUs) is looked at once
  for (const int g : task.group) {
    if (cluster.gpus[g].node_type == type) continue;
    type = cluster.gpus[g].node_type;
    most = std::max(most, cluster.device_of(g).fitted.collective_latency_s);
  }
  return most;
}

namespace {

// choose_algorithm without the call's fixed cost.
AlgorithmChoice choose_on_links(const CollectiveTask& t, const Cluster& c, const Fabric& fabric) {
  auto time_of = [&](Algorithm a) {
    double total = 0;
    for (const Schedule& s : collective_schedules(t, a, c, &fabric)) total += step_estimate(s, fabric);
    return total;
  };
  if (t.algorithm != Algorithm::kAuto) return {t.algorithm, time_of(t.algorithm)};
  // NCCL routes an all-to-all's cross-node messages through PXN wherever it can (NCCL_PXN_DISABLE
  // defaults to 0), whatever it costs: not a choice by estimate.
  if (unsupported_reason(t, Algorithm::kPxn, c).empty()) return {Algorithm::kPxn, time_of(Algorithm::kPxn)};
  // NCCL and RCCL have no hierarchical all-reduce: a group that one library runs chooses among
  // that library's algorithms; hierarchical stays for groups spanning NVIDIA and AMD GPUs.
  bool one_library = true;
  for (int g : t.group) one_library = one_library && c.device_of(g).vendor == c.device_of(t.group.front()).vendor;
  AlgorithmChoice best{Algorithm::kRing, -1};
  // Pairwise rounds never beat every peer at once where every flow is one leg (each link's load
  // summed over the rounds is its load at once, and each round waits on its slowest flow): not
  // priced there. A flow staged through host memory is priced as its three legs in turn, each
  // against its own link's load, for which that bound is not proven: both are priced.
  const bool staged = !one_library && !c.network.cross_vendor_rdma;
  const bool direct = unsupported_reason(t, Algorithm::kMesh, c).empty() && !staged;
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kHierarchical, Algorithm::kChain,
                      Algorithm::kPairwise, Algorithm::kGrouped, Algorithm::kNvls, Algorithm::kMesh, Algorithm::kPxn}) {
    if (!unsupported_reason(t, a, c).empty()) continue;
    if (a == Algorithm::kHierarchical && one_library) continue;
    if (a == Algorithm::kPairwise && direct) continue;
    const double e = time_of(a);
    if (best.estimate_s < 0 || e < best.estimate_s) best = {a, e};
  }
  return best;
}

}  // namespace

AlgorithmChoice choose_algorithm(const CollectiveTask& t, const Cluster& c, const Fabric& fabric) {
  AlgorithmChoice chosen = choose_on_links(t, c, fabric);
  chosen.estimate_s += call_latency(t, c);  // the same for every algorithm: not a reason to choose
  return chosen;
}

double busbw_factor(CollectiveOp op, int n) {
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll: return static_cast<double>(n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce: return 1.0;
  }
  return 1.0;
}

AlphaBetaFit fit_alpha_beta(CollectiveOp op, const std::vector<int>& group, const Cluster& cluster, const Fabric& fabric,
                            double small_bytes, double large_bytes) {
  const double t1 = choose_algorithm(collective(op, group, small_bytes), cluster, fabric).estimate_s;
  const double t2 = choose_algorithm(collective(op, group, large_bytes), cluster, fabric).estimate_s;
  const double beta = (t2 - t1) / (large_bytes - small_bytes);
  return {std::max(0.0, t1 - beta * small_bytes), beta};
}

double ring_allreduce_time(int n, double size_bytes, double bandwidth_Bps, double latency_s) {
  if (n < 2) return 0;
  return 2.0 * (n - 1) / n * size_bytes / bandwidth_Bps + 2.0 * (n - 1) * latency_s;
}

}  // namespace hetsim
