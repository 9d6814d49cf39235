// File: topologies/network_graph.hpp
// An explicit network between nodes, read from a graph file (topologies/README.md, "Graph
// files"): named switches, full-duplex cables between them, and the switch each node's NICs plug
// into; routed switch to switch by shortest paths (fewest hops), equal-cost paths split by a hash
// of the flow (ECMP).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace hetsim {

// What the loader knows of each node of the cluster (global node order). GPU g of a node (0-based
// within it) uses NIC g mod nics, as NicSpec says; 1 <= nics <= gpus.
struct GraphNodeInfo {
  int nics = 1;       // NIC count
  int first_gpu = 0;  // global index of its first GPU
  int gpus = 1;       // GPUs in the node
};

// A checked graph: every NIC attached to one switch, and every switch with NICs attached able to
// reach every other such switch. A plain value; copies share nothing.
class NetworkGraph {
 public:
  struct Link {              // one simplex link
    std::string name;        // "leaf0->spine1" (with "#k" appended where needed to keep names unique)
    int from = 0, to = 0;    // switch indices
    double bandwidth_Bps = 0;  // per direction, the cable's bandwidth x its count
    double latency_s = 0;
  };
  struct Path {
    std::vector<int> links;     // indices into links(), in order
    std::vector<int> switches;  // switches traversed, in order (first = from, last = to); size = links.size() + 1
  };

  // In file order.
  [[nodiscard]] const std::vector<std::string>& switches() const { return switches_; }
  // Links 2i and 2i+1 are the two directions of the file's i-th cable (`between: [a, b]`: a->b,
  // then b->a).
  [[nodiscard]] const std::vector<Link>& links() const { return links_; }
  // The switch NIC `nic` of node `node` plugs into. Throws std::out_of_range for a node or NIC
  // the graph was not loaded with.
  [[nodiscard]] int attached(int node, int nic) const;
  // One of the shortest paths (fewest hops) from switch `from` to switch `to`, chosen among the
  // equal-cost ones by `flow` (ECMP: a hash of the flow, e.g. source and destination endpoint):
  // at each hop the next switch is picked among those one hop closer to `to` (out-links in link
  // order), by the hop-th number of a splitmix64 sequence seeded with `flow`. Same arguments,
  // same path. from == to: no links, switches = {from}. `to` must be an attached switch, and
  // `from` one that reaches it (throws std::logic_error otherwise; attached switches reach each
  // other).
  [[nodiscard]] Path path(int from, int to, std::uint64_t flow) const;
  // How many equal-cost shortest paths (sequences of links) lead from `from` to `to`, for tests and
  // reports; saturates at 1e300. 0 where `from` cannot reach `to`; `to` as for path().
  [[nodiscard]] double path_count(int from, int to) const;

 private:
  friend NetworkGraph load_network_graph(const std::filesystem::path& file, const std::vector<GraphNodeInfo>& nodes);

  // Hop counts to the k-th attached switch, indexed by switch; -1 where it cannot be reached.
  [[nodiscard]] const int* hops_to(int to) const;
  // Fills the out-link table and hops_ (Boost.Graph BFS from every attached switch).
  void index_routes();

  std::vector<std::string> switches_;
  std::vector<Link> links_;
  std::vector<int> out_begin_;  // switch s's out-links are out_links_[out_begin_[s] .. out_begin_[s + 1])
  std::vector<int> out_links_;  // link indices, ascending within each switch
  std::vector<int> nic_begin_;  // node n's NICs are nic_switch_[nic_begin_[n] .. nic_begin_[n + 1])
  std::vector<int> nic_switch_;
  std::vector<int> destination_;  // switch -> k, its row in hops_, or -1 when no NIC is attached to it
  std::vector<int> hops_;         // attached switches x switches, row-major
};

// Reads and checks a graph file for a cluster whose nodes are `nodes`. Throws InputError with
// every problem (file:line:col), including a disconnected graph. Throws std::invalid_argument for
// `nodes` outside GraphNodeInfo's contract (a caller's bug, not the file's).
[[nodiscard]] NetworkGraph load_network_graph(const std::filesystem::path& file, const std::vector<GraphNodeInfo>& nodes);

}  // namespace hetsim
