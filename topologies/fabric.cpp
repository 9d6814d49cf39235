// File: topologies/fabric.cpp
// How each fabric routes:
//   inside a node:  nvswitch    GPU port up -> GPU port down (a star through the switch); also
//                               between the nodes of one rack-scale NVLink domain (NVL72)
//                   nvlink-mesh the direct NVLinks of the pair (DGX-1 hybrid cube mesh), else
//                               PCIe -> host -> PCIe
//                   xgmi-mesh   the pair's own point-to-point link (bandwidth / (GPUs - 1))
//                   pcie        PCIe up -> shared host bridge -> PCIe down
//   to the network: GPU PCIe (and the host bridge on pcie nodes) -> NIC (local index mod count)
//   between nodes:  single-switch one crossbar hop
//                   fat-tree      same leaf: leaf crossbar; else leaf uplink -> spine -> leaf downlink
//                   rail-optimized same NIC index: rail crossbar; else rail uplink -> spine -> rail downlink;
//                                 with planes, a spine per plane and none between them: a flow to
//                                 another plane first crosses NVLink to the GPU of its node on the
//                                 destination's rail (PXN), then that rail
//                   clos3         same leaf: leaf crossbar; same pod: leaf uplink -> pod spine -> leaf
//                                 downlink; else leaf up -> pod up -> core -> pod down -> leaf down,
//                                 the core one shared link of the pods' uplinks over its ratio
//                   graph         NIC's switch -> cables of a shortest path (ECMP by the GPU pair)
//                                 -> the destination NIC's switch, a crossbar at every switch
#include "topologies/fabric.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "topologies/link_class.hpp"

namespace hetsim {

std::string_view link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::kGpuPort: return "gpu-port";
    case LinkKind::kNvlink: return "nvlink";
    case LinkKind::kXgmi: return "xgmi";
    case LinkKind::kPcie: return "pcie";
    case LinkKind::kHostBridge: return "host-bridge";
    case LinkKind::kNic: return "nic";
    case LinkKind::kSwitch: return "switch";
    case LinkKind::kLeafUplink: return "leaf-uplink";
    case LinkKind::kSpine: return "spine";
    case LinkKind::kRailUplink: return "rail-uplink";
    case LinkKind::kSwitchReduce: return "switch-reduce";
    case LinkKind::kPodUplink: return "pod-uplink";
    case LinkKind::kCore: return "core";
    case LinkKind::kCable: return "cable";
  }
  return "?";
}

namespace {
constexpr double kCrossbar = 1e15;  // a switch crossbar: only its latency matters
// DGX-1 with V100 (6 NVLinks per GPU), as `nvidia-smi topo -m` shows it: NV1/NV2 per pair.
constexpr int kDgx1V100[8][8] = {
    {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
    {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1}, {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};
constexpr std::array<int, 8> kDgx1Ring{0, 1, 2, 3, 7, 6, 5, 4};  // every hop a direct NVLink
}  // namespace

int dgx1_nvlinks(int links, int a, int b) {
  if (a == b) return 0;
  if (links == 6) return kDgx1V100[a][b];
  // DGX-1 with P100: each quad fully connected plus one link to the same position in the other quad.
  return (a / 4 == b / 4 || a % 4 == b % 4) ? 1 : 0;
}

const std::array<int, 8>& dgx1_ring() { return kDgx1Ring; }

std::vector<std::array<int, 8>> disjoint_rings(const NodeType& node) {
  if (node.gpus_per_node != 8) return {};
  switch (node.intra.fabric) {
    case IntraFabric::kNvlinkMesh:
      if (node.intra.links == 6) return {{0, 1, 2, 3, 7, 6, 5, 4}, {0, 3, 1, 5, 7, 4, 6, 2}, {0, 3, 2, 1, 5, 6, 7, 4}};
      return {{0, 1, 2, 3, 7, 6, 5, 4}, {0, 2, 6, 4, 7, 5, 1, 3}};
    case IntraFabric::kXgmiMesh:  // three Hamiltonian cycles of K8 (the rest is a perfect matching)
      return {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 2, 4, 1, 5, 7, 3, 6}, {0, 3, 1, 6, 4, 7, 2, 5}};
    case IntraFabric::kNvswitch:
    case IntraFabric::kPcie: return {};
  }
  return {};
}

int Fabric::add(std::string name, LinkKind kind, double bw, double lat, bool shared) {
  links_.push_back({std::move(name), kind, bw, lat, shared, bw, 1.0});
  return static_cast<int>(links_.size()) - 1;
}

Fabric::Fabric(const Cluster& c) : cluster_(c), gpus_(c.gpu_count()), domains_(c.domain_count()) {
  const NetworkSpec& net = c.network;
  port_up_.assign(gpus_, -1);
  port_down_.assign(gpus_, -1);
  pcie_up_.resize(gpus_);
  pcie_down_.resize(gpus_);
  nic_up_.resize(c.node_count());
  nic_down_.resize(c.node_count());
  bridge_.assign(c.node_count(), -1);
  host_hop_.assign(c.node_count(), -1);
  mesh_.resize(c.node_count());
  reduce_.assign(static_cast<size_t>(domains_), -1);
  int gpu = 0;
  for (int node = 0; node < c.node_count(); ++node) {
    const NodeType& nt = c.node_types[c.node_type_of[node]];
    // Links added for this node run at their class's achievable fraction of the wire rate.
    const size_t first_link = links_.size();
    const double intra_fraction = intra_achievable(nt).fraction;
    const double nic_fraction = nic_achievable(nt).fraction;
    const double pcie_fraction = pcie_achievable(nt).fraction;
    const std::string p = "node" + std::to_string(node) + ".";
    // A degraded node (degraded_nodes) scales its own NICs and GPU links; its type's `degraded`
    // factors are already in the spec.
    IntraNodeSpec in = nt.intra;
    NicSpec nic = nt.nic;
    if (!c.node_health.empty()) {
      const Degradation& h = c.node_health[node];
      in.bandwidth_Bps *= h.intra_node_bandwidth;
      in.uplink_bandwidth_Bps *= h.intra_node_bandwidth;
      nic.bandwidth_Bps *= h.nic_bandwidth;
    }
    if (in.fabric == IntraFabric::kPcie) bridge_[node] = add(p + "host-bridge", LinkKind::kHostBridge, in.uplink_bandwidth_Bps, in.latency_s);
    if (in.fabric == IntraFabric::kNvlinkMesh) host_hop_[node] = add(p + "host", LinkKind::kSwitch, kCrossbar, in.latency_s, false);
    for (int k = 0; k < nic.count; ++k) {
      nic_up_[node].push_back(add(p + "nic" + std::to_string(k) + ".tx", LinkKind::kNic, nic.bandwidth_Bps, nic.latency_s));
      nic_down_[node].push_back(add(p + "nic" + std::to_string(k) + ".rx", LinkKind::kNic, nic.bandwidth_Bps, nic.latency_s));
    }
    const int g = nt.gpus_per_node;
    if (in.fabric == IntraFabric::kNvlinkMesh || in.fabric == IntraFabric::kXgmiMesh) {
      const bool xgmi = in.fabric == IntraFabric::kXgmiMesh;
      const double per_link = xgmi ? in.bandwidth_Bps / (g - 1) : in.bandwidth_Bps / in.links;
      mesh_[node].assign(static_cast<size_t>(g) * g, -1);
      for (int a = 0; a < g; ++a) {  // one simplex link per ordered pair that is wired
        for (int b = 0; b < g; ++b) {
          const int wires = xgmi ? (a != b ? 1 : 0) : dgx1_nvlinks(in.links, a, b);
          if (wires == 0) continue;
          mesh_[node][a * g + b] = add(p + (xgmi ? "xgmi" : "nvlink") + std::to_string(a) + "-" + std::to_string(b),
                                       xgmi ? LinkKind::kXgmi : LinkKind::kNvlink, wires * per_link, in.latency_s);
        }
      }
    }
    for (int l = 0; l < g; ++l, ++gpu) {
      const std::string q = "gpu" + std::to_string(gpu) + ".";
      if (in.fabric == IntraFabric::kNvswitch) {
        port_up_[gpu] = add(q + "nvswitch.tx", LinkKind::kGpuPort, in.bandwidth_Bps, in.latency_s / 2);
        port_down_[gpu] = add(q + "nvswitch.rx", LinkKind::kGpuPort, in.bandwidth_Bps, in.latency_s / 2);
      }
      const double pcie = in.fabric == IntraFabric::kPcie ? in.bandwidth_Bps : nt.gpu.pcie_bandwidth_Bps;
      pcie_up_[gpu] = add(q + "pcie.tx", LinkKind::kPcie, pcie, 0);
      pcie_down_[gpu] = add(q + "pcie.rx", LinkKind::kPcie, pcie, 0);
    }
    // One reduction engine per NVLink domain, made with the domain's first node: the node's
    // figure times the nodes of the domain (NVSwitch capacity grows with the GPUs it joins).
    const int domain = c.domain_of[node];
    if (const SwitchReduction red = switch_reduction(nt); red.bandwidth_Bps > 0 && (node == 0 || c.domain_of[node - 1] != domain)) {
      const auto nodes = std::count(c.domain_of.begin() + node, c.domain_of.end(), domain);  // a last domain may be partial
      const std::string name = nt.nodes_per_domain() > 1 ? "domain" + std::to_string(domain) + ".nvswitch.reduce" : p + "nvswitch.reduce";
      reduce_[domain] = add(name, LinkKind::kSwitchReduce, red.bandwidth_Bps * static_cast<double>(nodes), red.latency_s);
    }
    for (size_t l = first_link; l < links_.size(); ++l) {
      FabricLink& fl = links_[l];
      double f = 1;
      switch (fl.kind) {
        case LinkKind::kGpuPort:
        case LinkKind::kNvlink:
        case LinkKind::kXgmi: f = intra_fraction; break;
        case LinkKind::kPcie:
        case LinkKind::kHostBridge: f = pcie_fraction; break;
        case LinkKind::kNic: f = nic_fraction; break;
        default: break;  // crossbars, and the reduction engine (its throughput is already achieved)
      }
      fl.achievable = f;
      fl.bandwidth_Bps = fl.wire_Bps * f;
    }
  }
  const double sw = net.switch_latency_s;
  switch (net.topology) {
    case NetTopology::kSingleSwitch: switch_ = add("switch", LinkKind::kSwitch, kCrossbar, sw, false); break;
    case NetTopology::kFatTree:  // clos3's first two tiers: every leaf in one pod, under one spine
      pod_switch_.push_back(add("spine", LinkKind::kSpine, kCrossbar, sw, false));
      add_leaves(c, net.oversubscription, sw);
      leaves_per_pod_ = static_cast<int>(leaf_up_.size());
      break;
    case NetTopology::kClos3: {
      add_leaves(c, net.tier_oversubscription[0], sw);
      leaves_per_pod_ = net.leaves_per_pod;
      const int leaves = static_cast<int>(leaf_up_.size());
      double pods_up = 0;
      for (int q = 0; q * leaves_per_pod_ < leaves; ++q) {
        double down = 0;  // what the pod's leaves send up
        for (int l = q * leaves_per_pod_; l < std::min(leaves, (q + 1) * leaves_per_pod_); ++l) down += links_[leaf_up_[l]].bandwidth_Bps;
        const std::string p = "pod" + std::to_string(q);
        pod_switch_.push_back(add(p + ".spine", LinkKind::kSpine, kCrossbar, sw, false));
        pod_up_.push_back(add(p + ".up", LinkKind::kPodUplink, down / net.tier_oversubscription[1], sw));
        pod_down_.push_back(add(p + ".down", LinkKind::kPodUplink, down / net.tier_oversubscription[1], sw));
        pods_up += down / net.tier_oversubscription[1];
      }
      core_ = add("core", LinkKind::kCore, pods_up / net.tier_oversubscription[2], sw);
      break;
    }
    case NetTopology::kGraph: add_graph(c, sw); break;
    case NetTopology::kRailOptimized: {
      int rails = 0;
      for (const NodeType& nt : c.node_types) rails = std::max(rails, nt.nic.count);
      if (net.planes > 1) {  // the loader checked that every node has `rails` NICs, a multiple of planes
        rails_per_plane_ = rails / net.planes;
        for (int q = 0; q < net.planes; ++q) plane_spine_.push_back(add("plane" + std::to_string(q) + ".spine", LinkKind::kSpine, kCrossbar, sw, false));
      } else {
        spine_ = add("spine", LinkKind::kSpine, kCrossbar, sw, false);
      }
      for (int k = 0; k < rails; ++k) {
        double down = 0;
        for (int node = 0; node < c.node_count(); ++node) {
          const NodeType& nt = c.node_types[c.node_type_of[node]];
          if (k < nt.nic.count) down += nt.nic.bandwidth_Bps * nic_achievable(nt).fraction;
        }
        const std::string p = "rail" + std::to_string(k);
        rail_switch_.push_back(add(p, LinkKind::kSwitch, kCrossbar, sw, false));
        rail_up_.push_back(add(p + ".up", LinkKind::kRailUplink, down / net.oversubscription, sw));
        rail_down_.push_back(add(p + ".down", LinkKind::kRailUplink, down / net.oversubscription, sw));
      }
      break;
    }
  }
}

void Fabric::add_graph(const Cluster& c, double switch_latency) {
  const NetworkGraph& g = *c.network.graph;
  if (c.network.graph_nodes.size() != static_cast<size_t>(c.node_count())) {
    throw std::logic_error("Fabric: the graph's node map does not match the cluster's nodes");
  }
  graph_switch_ = static_cast<int>(links_.size());
  for (const std::string& s : g.switches()) add("switch." + s, LinkKind::kSwitch, kCrossbar, switch_latency, false);
  // Cables run at the NICs' class fraction of their rate, as leaf and rail uplinks do (the lowest
  // of the node types' where they differ).
  double fraction = 1;
  for (const NodeType& nt : c.node_types) fraction = std::min(fraction, nic_achievable(nt).fraction);
  graph_cable_ = static_cast<int>(links_.size());
  for (const NetworkGraph::Link& l : g.links()) {
    const int k = add("cable." + l.name, LinkKind::kCable, l.bandwidth_Bps * fraction, l.latency_s);
    links_[static_cast<size_t>(k)].wire_Bps = l.bandwidth_Bps;
    links_[static_cast<size_t>(k)].achievable = fraction;
  }
}

void Fabric::graph_route(int a, int b, int nic_a, Route& r) const {
  const NetworkGraph& g = *cluster_.network.graph;
  const std::vector<int>& at = cluster_.network.graph_nodes;
  const int from = g.attached(at[static_cast<size_t>(node_of(a))], nic_a >= 0 ? nic_a : nic_index(a));
  const int to = g.attached(at[static_cast<size_t>(node_of(b))], nic_index(b));
  // ECMP: one path per GPU pair (its flows hash alike), spread over the equal-cost paths.
  const NetworkGraph::Path p = g.path(from, to, (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b));
  append(r, graph_switch_ + p.switches.front());
  for (size_t k = 0; k < p.links.size(); ++k) {
    append(r, graph_cable_ + p.links[k]);
    append(r, graph_switch_ + p.switches[k + 1]);
  }
}

void Fabric::add_leaves(const Cluster& c, double over, double switch_latency) {
  nodes_per_leaf_ = c.network.nodes_per_leaf > 0 ? c.network.nodes_per_leaf : c.node_count();
  const int leaves = (c.node_count() + nodes_per_leaf_ - 1) / nodes_per_leaf_;
  for (int l = 0; l < leaves; ++l) {
    double down = 0;  // what the leaf's nodes can inject
    for (int node = l * nodes_per_leaf_; node < std::min(c.node_count(), (l + 1) * nodes_per_leaf_); ++node) {
      const NodeType& nt = c.node_types[c.node_type_of[node]];  // uplinks are links of the NICs' class
      down += nt.nic.count * nt.nic.bandwidth_Bps * nic_achievable(nt).fraction;
    }
    const std::string p = "leaf" + std::to_string(l);
    leaf_switch_.push_back(add(p, LinkKind::kSwitch, kCrossbar, switch_latency, false));
    leaf_up_.push_back(add(p + ".up", LinkKind::kLeafUplink, down / over, switch_latency));
    leaf_down_.push_back(add(p + ".down", LinkKind::kLeafUplink, down / over, switch_latency));
  }
}

void Fabric::append(Route& r, int link) const {
  r.links.push_back(link);
  r.latency_s += links_[link].latency_s;
}

int Fabric::nic_index(int gpu) const {
  const GpuSlot& s = cluster_.gpus[gpu];
  return s.local % cluster_.node_types[s.node_type].nic.count;
}

bool Fabric::staged(int a, int b) const {
  if (a >= gpus_ || b >= gpus_) return false;
  return !cluster_.network.cross_vendor_rdma && cluster_.device_of(a).vendor != cluster_.device_of(b).vendor;
}

void Fabric::intra_node(int a, int b, Route& r) const {
  const GpuSlot& sa = cluster_.gpus[a];
  const GpuSlot& sb = cluster_.gpus[b];
  const NodeType& nt = cluster_.node_types[sa.node_type];
  switch (nt.intra.fabric) {
    case IntraFabric::kNvswitch:
      append(r, port_up_[a]);
      append(r, port_down_[b]);
      return;
    case IntraFabric::kNvlinkMesh:
      if (const int link = mesh_[sa.node][sa.local * nt.gpus_per_node + sb.local]; link >= 0) {
        append(r, link);
      } else {
        append(r, pcie_up_[a]);
        append(r, host_hop_[sa.node]);
        append(r, pcie_down_[b]);
      }
      return;
    case IntraFabric::kXgmiMesh: append(r, mesh_[sa.node][sa.local * nt.gpus_per_node + sb.local]); return;
    case IntraFabric::kPcie:
      append(r, pcie_up_[a]);
      append(r, bridge_[sa.node]);
      append(r, pcie_down_[b]);
      return;
  }
}

void Fabric::to_network(int gpu, bool from_gpu, Route& r, int nic) const {
  const int node = node_of(gpu);
  if (from_gpu) append(r, pcie_up_[gpu]);
  if (bridge_[node] >= 0) append(r, bridge_[node]);
  append(r, nic_up_[node][nic >= 0 ? nic : nic_index(gpu)]);
}

void Fabric::from_network(int gpu, bool to_gpu, Route& r) const {
  const int node = node_of(gpu);
  append(r, nic_down_[node][nic_index(gpu)]);
  if (bridge_[node] >= 0) append(r, bridge_[node]);
  if (to_gpu) append(r, pcie_down_[gpu]);
}

void Fabric::between_nodes(int a, int b, Route& r, int nic_a) const {
  switch (cluster_.network.topology) {
    case NetTopology::kSingleSwitch: append(r, switch_); return;
    case NetTopology::kFatTree:  // one pod: no core
    case NetTopology::kClos3: {
      const int la = node_of(a) / nodes_per_leaf_, lb = node_of(b) / nodes_per_leaf_;
      const int pa = la / leaves_per_pod_, pb = lb / leaves_per_pod_;
      if (la == lb) {
        append(r, leaf_switch_[la]);
        return;
      }
      append(r, leaf_up_[la]);
      if (pa == pb) {
        append(r, pod_switch_[pa]);
      } else {
        append(r, pod_up_[pa]);
        append(r, core_);
        append(r, pod_down_[pb]);
      }
      append(r, leaf_down_[lb]);
      return;
    }
    case NetTopology::kGraph: graph_route(a, b, nic_a, r); return;
    case NetTopology::kRailOptimized: {
      const int ka = nic_a >= 0 ? nic_a : nic_index(a), kb = nic_index(b);
      if (ka == kb) {
        append(r, rail_switch_[ka]);
      } else {
        append(r, rail_up_[ka]);
        append(r, rails_per_plane_ > 0 ? plane_spine_[ka / rails_per_plane_] : spine_);  // route() keeps planes apart
        append(r, rail_down_[kb]);
      }
      return;
    }
  }
}

void Fabric::switch_route(int sw, int gpu, bool to_switch, Route& r) const {
  const bool reduce = sw >= 2 * gpus_ + domains_;
  const int domain = reduce ? sw - 2 * gpus_ - domains_ : sw - 2 * gpus_;
  if (gpu >= gpus_ || cluster_.gpus[gpu].domain != domain || port_up_[gpu] < 0 || (to_switch && reduce) || reduce_[domain] < 0) {
    throw std::logic_error("Fabric: no route between switch endpoint " + std::to_string(sw) + " and endpoint " +
                           std::to_string(gpu));
  }
  if (to_switch) {
    append(r, port_up_[gpu]);
    return;
  }
  if (reduce) append(r, reduce_[domain]);
  append(r, port_down_[gpu]);
}

void Fabric::route(int src, int dst, Route& r) const {
  r.links.clear();
  r.latency_s = 0;
  if (is_switch(src) || is_switch(dst)) {
    if (is_switch(dst)) switch_route(dst, src, true, r);
    else switch_route(src, dst, false, r);
    return;
  }
  const bool src_gpu = src < gpus_, dst_gpu = dst < gpus_;
  const int a = src_gpu ? src : src - gpus_;
  const int b = dst_gpu ? dst : dst - gpus_;
  if (a == b) {  // a GPU and its own staging buffer: one PCIe hop (and the bridge on pcie nodes)
    const int node = node_of(a);
    if (src_gpu) append(r, pcie_up_[a]);
    if (bridge_[node] >= 0) append(r, bridge_[node]);
    if (dst_gpu) append(r, pcie_down_[b]);
    return;
  }
  if (src_gpu && dst_gpu && node_of(a) == node_of(b)) {
    intra_node(a, b, r);
    return;
  }
  if (src_gpu && dst_gpu && cluster_.same_domain(a, b)) {  // across the nodes of a rack-scale domain: NVLink
    append(r, port_up_[a]);
    append(r, port_down_[b]);
    return;
  }
  if (rails_per_plane_ > 0 && node_of(a) != node_of(b) && nic_index(a) / rails_per_plane_ != nic_index(b) / rails_per_plane_) {
    // No link between planes: leave by the NIC on the destination's rail, reached over NVLink from
    // the GPU of this node that owns it (a staging buffer reaches any NIC of its host directly).
    const int rail = nic_index(b);
    const int forwarder = a - cluster_.gpus[a].local + rail;
    if (src_gpu && forwarder != a) {
      intra_node(a, forwarder, r);
      to_network(forwarder, true, r);
    } else {
      to_network(a, src_gpu, r, rail);
    }
    between_nodes(a, b, r, rail);
    from_network(b, dst_gpu, r);
    return;
  }
  to_network(a, src_gpu, r);
  if (node_of(a) != node_of(b)) between_nodes(a, b, r);
  from_network(b, dst_gpu, r);
}

Route Fabric::route(int src, int dst) const {
  Route r;
  route(src, dst, r);
  return r;
}

double Fabric::bottleneck_Bps(const Route& r) const {
  double b = 1e300;
  for (int l : r.links) b = std::min(b, links_[l].bandwidth_Bps);
  return b;
}

}  // namespace hetsim
