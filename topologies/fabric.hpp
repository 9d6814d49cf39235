// File: topologies/fabric.hpp
// The links of a cluster and the route between any two endpoints, as plain data: what the
// simulator builds its network from and what analytic estimates read. Every link is simplex
// (one direction); a physical full-duplex link is two of them.
//
// Endpoints: GPU g is endpoint g; the pinned host buffer that stages GPU g's cross-vendor
// traffic is endpoint staging(g) = gpu_count + g; on NVSwitch nodes, the switches of an NVLink
// domain (a node, or the nodes of a rack-scale domain such as NVL72) as the target of GPU stores
// and the source of multicasts are switch_port(domain) = 2 gpu_count + domain, and their
// reduction engine (NVLink SHARP) is switch_reduce(domain) = 2 gpu_count + domains + domain.
//
// Link bandwidths are what collectives achieve: the wire rate times the link class's achievable
// fraction (topologies/link_class.hpp); each link keeps its wire rate and fraction for reports.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "topologies/cluster.hpp"

namespace hetsim {

enum class LinkKind { kGpuPort, kNvlink, kXgmi, kPcie, kHostBridge, kNic, kSwitch, kLeafUplink, kSpine, kRailUplink, kSwitchReduce, kPodUplink, kCore, kCable };
[[nodiscard]] std::string_view link_kind_name(LinkKind k);

struct FabricLink {
  std::string name;
  LinkKind kind = LinkKind::kSwitch;
  double bandwidth_Bps = 0;  // achievable: wire_Bps * achievable
  double latency_s = 0;
  bool shared = true;  // false: a fat pipe (switch crossbar), every flow gets the full bandwidth
  double wire_Bps = 0;
  double achievable = 1;
};

struct Route {
  std::vector<int> links;  // indices into Fabric::links(), in order
  double latency_s = 0;
};

class Fabric {
 public:
  explicit Fabric(const Cluster& cluster);

  [[nodiscard]] const std::vector<FabricLink>& links() const { return links_; }
  [[nodiscard]] int gpu_count() const { return gpus_; }
  [[nodiscard]] int endpoint_count() const { return 2 * gpus_ + 2 * domains_; }
  [[nodiscard]] int staging(int gpu) const { return gpus_ + gpu; }
  [[nodiscard]] int switch_port(int domain) const { return 2 * gpus_ + domain; }
  [[nodiscard]] int switch_reduce(int domain) const { return 2 * gpus_ + domains_ + domain; }
  [[nodiscard]] bool is_switch(int endpoint) const { return endpoint >= 2 * gpus_; }
  // True when NVLink domain `domain` reduces in its switches (NVLS): its switch endpoints have routes.
  [[nodiscard]] bool has_switch_reduction(int domain) const { return reduce_[domain] >= 0; }

  // The links from endpoint `src` to endpoint `dst` (src != dst). GPU-to-GPU routes between
  // vendors without RDMA are not direct: use staged() and route the three legs. GPUs of one
  // NVLink domain on different nodes route as inside a node (GPU port up, port down). Switch
  // endpoints route only to and from the GPUs of their domain: GPU -> switch_port (GPU port up),
  // switch_port -> GPU (port down), switch_reduce -> GPU (reduction engine, port down).
  void route(int src, int dst, Route& out) const;
  [[nodiscard]] Route route(int src, int dst) const;
  // True when data from GPU `a` to GPU `b` is staged through host memory (NVIDIA <-> AMD
  // without cross-vendor RDMA): device-to-host copy, network, host-to-device copy.
  [[nodiscard]] bool staged(int a, int b) const;
  // The smallest bandwidth on a route (nominal, without contention).
  [[nodiscard]] double bottleneck_Bps(const Route& r) const;

  [[nodiscard]] int node_of(int gpu) const { return cluster_.gpus[gpu].node; }

 private:
  int add(std::string name, LinkKind kind, double bw, double lat, bool shared = true);
  void append(Route& r, int link) const;
  void intra_node(int a, int b, Route& r) const;
  // GPU or its staging buffer -> its NIC, or NIC `nic` of its node when given.
  void to_network(int gpu, bool from_gpu, Route& r, int nic = -1) const;
  void from_network(int gpu, bool to_gpu, Route& r) const;   // NIC -> GPU or its staging buffer
  // Switch fabric, NIC of a (or NIC `nic_a` of a's node) to NIC of b.
  void between_nodes(int a, int b, Route& r, int nic_a = -1) const;
  [[nodiscard]] int nic_index(int gpu) const;

  void switch_route(int sw, int gpu, bool to_switch, Route& r) const;

  const Cluster& cluster_;
  int gpus_ = 0;
  int domains_ = 0;
  std::vector<int> reduce_;  // per NVLink domain: NVLS reduction engine link, -1: none
  std::vector<FabricLink> links_;
  // Per GPU: intra-node port (nvswitch) and PCIe link, each direction.
  std::vector<int> port_up_, port_down_, pcie_up_, pcie_down_;
  // Per node: NIC links (each direction), the host bridge (pcie fabric), the host hop between
  // GPUs without a direct link (nvlink-mesh), and mesh links by local pair (a * gpus + b; -1: none).
  std::vector<std::vector<int>> nic_up_, nic_down_, mesh_;
  std::vector<int> bridge_, host_hop_;
  // Network: single switch / leaf switches / rail switches, their uplinks, the rails' spine; the
  // pods of clos3 (their spine crossbar and uplinks; a fat-tree is one pod) and the core.
  int switch_ = -1, spine_ = -1, core_ = -1;
  std::vector<int> leaf_switch_, leaf_up_, leaf_down_, rail_switch_, rail_up_, rail_down_;
  std::vector<int> pod_switch_, pod_up_, pod_down_;
  int nodes_per_leaf_ = 1, leaves_per_pod_ = 1;
  // Multi-plane rails: rails_per_plane_ consecutive rails share a plane's spine (0: one plane).
  int rails_per_plane_ = 0;
  std::vector<int> plane_spine_;
  // Graph networks: the graph's switches (crossbars) and cables start at these links.
  int graph_switch_ = -1, graph_cable_ = -1;
  void add_graph(const Cluster& c, double switch_latency);
  void graph_route(int a, int b, int nic_a, Route& r) const;
  // The leaves of a fat-tree or clos3: a crossbar and an uplink pair each, over `over`.
  void add_leaves(const Cluster& c, double over, double switch_latency);
};

// NVLinks between GPU a and GPU b (local indices) in a DGX-1 hybrid cube mesh with `links`
// NVLinks per GPU (4: P100, 6: V100); 0 when they have no direct link.
[[nodiscard]] int dgx1_nvlinks(int links, int a, int b);

// A ring order of GPUs (local indices) that uses only direct links where the fabric has them.
[[nodiscard]] const std::array<int, 8>& dgx1_ring();

// Edge-disjoint rings (local indices) covering a whole 8-GPU mesh node, so that using each in
// both directions puts every point-to-point link to work, as NCCL/RCCL channels do: 3 on a
// DGX-1 V100 or a full xGMI mesh, 2 on a DGX-1 P100. Empty for switched and PCIe nodes, where
// one ring already reaches each GPU's full bandwidth.
[[nodiscard]] std::vector<std::array<int, 8>> disjoint_rings(const NodeType& node);

}  // namespace hetsim
