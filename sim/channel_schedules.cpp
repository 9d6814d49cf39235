// File: sim/channel_schedules.cpp
#include "sim/channel_schedules.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "topologies/fabric.hpp"
#include "topologies/link_class.hpp"

namespace hetsim {

std::vector<std::vector<int>> domain_groups(const std::vector<int>& ordered, const Cluster& c) {
  std::vector<std::vector<int>> nodes;
  for (int g : ordered) {
    if (nodes.empty() || !c.same_domain(nodes.back().front(), g)) nodes.emplace_back();
    nodes.back().push_back(g);
  }
  return nodes;
}

std::vector<std::vector<int>> members_by_domain(const std::vector<int>& ordered, const Cluster& c) {
  std::vector<std::vector<int>> nodes = domain_groups(ordered, c);
  for (const auto& n : nodes) {
    if (n.size() != nodes.front().size()) return {};
  }
  return nodes;
}

namespace {

// Every member to every other of one node over a link of its own (a full xGMI mesh).
bool full_mesh(const std::vector<int>& node, const Cluster& c) {
  return c.node_type_of_gpu(node.front()).intra.fabric == IntraFabric::kXgmiMesh && c.same_domain(node.front(), node.back());
}

// The m (even) orders of a node's members that Walecki's zigzag gives: the path 0, 1, m-1, 2,
// m-2, ..., m/2 turned by k = 0 .. m/2 - 1 is a decomposition of the complete graph into m/2
// Hamiltonian paths; each path and its reverse use every directed link exactly once. Path k starts
// at k and ends at m/2 + k, its reverse the other way round: each member starts one and ends one.
std::vector<std::vector<size_t>> zigzag_orders(size_t m) {
  std::vector<size_t> zigzag(m);
  for (size_t i = 1; i < m; ++i) zigzag[i] = i % 2 == 1 ? (i + 1) / 2 : m - i / 2;
  std::vector<std::vector<size_t>> orders;
  for (size_t k = 0; k < m / 2; ++k) {
    std::vector<size_t> path(m);
    for (size_t i = 0; i < m; ++i) path[i] = (zigzag[i] + k) % m;
    orders.push_back(path);
    std::reverse(path.begin(), path.end());
    orders.push_back(std::move(path));
  }
  return orders;
}

}  // namespace

namespace {

// The m orders (positions in `node`) in which the channel rings cross one node, each member the
// last of exactly one (it leaves through its NIC):
//   full xGMI mesh (m even):  Walecki's zigzag paths and their reverses (every directed link once);
//   whole DGX-1 NVLink mesh:  the node's edge-disjoint Hamiltonian cycles in both directions
//                             (topologies/fabric.hpp: disjoint_rings), ring c opened so that it
//                             leaves from member c - 1, the cycles taken in turn: the rings spread
//                             over every NVLink of the mesh, as NCCL's channels do, instead of all
//                             following one cycle's single links;
//   part of a DGX-1 mesh (an even count): every other ring runs the members backwards;
//   otherwise (NVSwitch, PCIe, part of a node): enter at member c, visit the members in turn.
std::vector<std::vector<size_t>> crossing_orders(const std::vector<int>& node, const Cluster& c) {
  const size_t m = node.size();
  if (m % 2 == 0 && full_mesh(node, c)) return zigzag_orders(m);
  std::vector<std::vector<size_t>> orders(m);
  const NodeType& nt = c.node_type_of_gpu(node.front());
  std::vector<std::vector<int>> cycles;  // directed, local indices
  if (nt.intra.fabric == IntraFabric::kNvlinkMesh && static_cast<int>(m) == nt.gpus_per_node) {
    for (const auto& cycle : disjoint_rings(nt)) {
      cycles.emplace_back(cycle.begin(), cycle.end());
      cycles.emplace_back(cycle.rbegin(), cycle.rend());
    }
  }
  if (cycles.empty()) {
    // Enter at member ch, leave from member ch - 1. On part of an NVLink mesh (an even count of
    // members) every other ring runs the members backwards, entering at ch and leaving from ch + 1:
    // the links between consecutive members carry traffic both ways, each member still leaving
    // (and being entered) in one ring.
    const bool both_ways = nt.intra.fabric == IntraFabric::kNvlinkMesh && m % 2 == 0;
    for (size_t ch = 0; ch < m; ++ch) {
      const bool back = both_ways && ch % 2 == 1;
      for (size_t j = 0; j < m; ++j) orders[ch].push_back(back ? (ch + m - j) % m : (ch + j) % m);
    }
    return orders;
  }
  // Ring ch leaves from member ch - 1 and enters at its successor on the cycle it takes. The cycles
  // are assigned (depth-first, in turn) so that every member is also entered exactly once (each NIC
  // receives as many rings as it sends) and no cycle carries more than its share of the rings.
  std::vector<size_t> position(m);
  for (size_t j = 0; j < m; ++j) position[static_cast<size_t>(c.gpus[node[j]].local)] = j;
  auto at_of = [](const std::vector<int>& cycle, int local) {
    return static_cast<size_t>(std::find(cycle.begin(), cycle.end(), local) - cycle.begin());
  };
  const size_t cap = (m + cycles.size() - 1) / cycles.size();
  std::vector<size_t> taken(m, 0), uses(cycles.size(), 0);
  std::vector<bool> entered(m, false);
  auto assign = [&](auto&& self, size_t ch) -> bool {
    if (ch == m) return true;
    const int leaves = c.gpus[node[(ch + m - 1) % m]].local;
    for (size_t k = 0; k < cycles.size(); ++k) {
      const size_t d = (ch + k) % cycles.size();
      const std::vector<int>& cycle = cycles[d];
      const auto enters = static_cast<size_t>(cycle[(at_of(cycle, leaves) + 1) % m]);
      if (uses[d] == cap || entered[enters]) continue;
      ++uses[d];
      entered[enters] = true;
      taken[ch] = d;
      if (self(self, ch + 1)) return true;
      --uses[d];
      entered[enters] = false;
    }
    return false;
  };
  if (!assign(assign, 0)) {
    for (size_t ch = 0; ch < m; ++ch) taken[ch] = ch % cycles.size();  // balance the cycles only
  }
  for (size_t ch = 0; ch < m; ++ch) {
    const std::vector<int>& cycle = cycles[taken[ch]];
    const size_t at = at_of(cycle, c.gpus[node[(ch + m - 1) % m]].local);
    for (size_t j = 1; j <= m; ++j) orders[ch].push_back(position[static_cast<size_t>(cycle[(at + j) % m])]);
  }
  return orders;
}

}  // namespace

std::vector<std::vector<int>> channel_rings(const std::vector<std::vector<int>>& nodes, const Cluster& c) {
  size_t k = nodes.front().size();
  for (const auto& node : nodes) k = std::min(k, node.size());
  // A node's orders depend on its type and member count only (whole nodes, or the same part of
  // one): computed once per pair.
  std::map<std::pair<int, size_t>, std::vector<std::vector<size_t>>> orders_of;
  std::vector<std::vector<int>> rings(k);
  for (const auto& node : nodes) {
    const size_t m = node.size();
    const std::pair<int, size_t> key{c.gpus[node.front()].node_type, m};
    auto it = orders_of.find(key);
    if (it == orders_of.end()) it = orders_of.emplace(key, crossing_orders(node, c)).first;
    // k of the node's m orders, spread evenly: distinct members leave (one NIC a ring at most).
    for (size_t ch = 0; ch < k; ++ch) {
      for (size_t j : it->second[ch * m / k]) rings[ch].push_back(node[j]);
    }
  }
  return rings;
}

void add_ring(Schedule& s, const std::vector<int>& ring, int steps, double bytes) {
  const size_t n = ring.size();
  if (n < 2 || steps <= 0) return;
  for (size_t k = 0; k < n; ++k) s.edges.push_back({ring[k], ring[(k + 1) % n], 0, steps, bytes});
}

bool nvls_capable(const std::vector<int>& members, const Cluster& c) {
  if (members.size() < 2) return false;
  for (int g : members) {
    if (!c.same_domain(g, members.front())) return false;
  }
  return switch_reduction(c.node_type_of_gpu(members.front())).bandwidth_Bps > 0;
}

namespace {
// Endpoint numbering of topologies/fabric.hpp: the NVLink domains' switch ports after the GPUs and
// staging buffers, then their reduction engines.
int switch_port(const Cluster& c, int domain) { return 2 * c.gpu_count() + domain; }
int switch_reduce(const Cluster& c, int domain) { return 2 * c.gpu_count() + c.domain_count() + domain; }
}  // namespace

void add_nvls_reduce_scatter(Schedule& s, const std::vector<int>& members, double bytes, const Cluster& c) {
  const int node = c.gpus[members.front()].domain;
  const double m = static_cast<double>(members.size());
  for (int g : members) {
    s.edges.push_back({g, switch_port(c, node), 0, 1, bytes});          // the switch reads every slice
    s.edges.push_back({switch_reduce(c, node), g, 0, 1, bytes / m});    // and returns the reduced one
  }
}

void add_nvls_all_gather(Schedule& s, const std::vector<int>& members, double bytes, const Cluster& c) {
  const int node = c.gpus[members.front()].domain;
  const double m = static_cast<double>(members.size());
  for (int g : members) {
    s.edges.push_back({g, switch_port(c, node), 0, 1, bytes / m});  // each GPU stores its slice once
    s.edges.push_back({switch_port(c, node), g, 0, 1, bytes});      // multicast delivers all of them
  }
}

void add_direct_exchange(Schedule& s, const std::vector<int>& members, double bytes) {
  const double m = static_cast<double>(members.size());
  for (int a : members) {
    for (int b : members) {
      if (a != b) s.edges.push_back({a, b, 0, 1, bytes / m});
    }
  }
}

Schedule pipelined(const std::vector<Schedule>& phases, int pieces) {
  int most = 1;
  for (const Schedule& p : phases) most = std::max(most, p.rounds());
  const int rounds = std::max(1, pieces) * most;
  Schedule out;
  int delay = 0;
  for (const Schedule& p : phases) {
    if (!p.chains.ring.empty() || !p.shifts.ring.empty()) {
      throw std::logic_error("pipelined: ring chains and shifts are not pipelined with other phases");
    }
    if (p.edges.empty()) continue;
    const double stretch = static_cast<double>(rounds) / p.rounds();
    for (const PipeEdge& e : p.edges) {
      const int chunks = std::max(1, static_cast<int>(std::lround(e.chunks * stretch)));
      const int offset = static_cast<int>(std::lround(e.offset * stretch)) + delay;
      out.edges.push_back({e.src, e.dst, offset, chunks, e.chunk_bytes * e.chunks / chunks});
    }
    out.setup_s = std::max(out.setup_s, p.setup_s);
    ++delay;
  }
  return out;
}

int pipeline_pieces(double bytes, int max_rounds) {
  const double pieces = std::floor(bytes / (std::max(1, max_rounds) * kPipelinePieceBytes));
  return static_cast<int>(std::clamp(pieces, 1.0, static_cast<double>(kMaxPipelinePieces)));
}

}  // namespace hetsim
