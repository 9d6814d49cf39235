// File: topologies/cluster.cpp
#include "topologies/cluster.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <system_error>

#include "base/yaml_reader.hpp"

namespace hetsim {

std::string_view fabric_name(IntraFabric f) {
  switch (f) {
    case IntraFabric::kNvswitch: return "nvswitch";
    case IntraFabric::kNvlinkMesh: return "nvlink-mesh";
    case IntraFabric::kXgmiMesh: return "xgmi-mesh";
    case IntraFabric::kPcie: return "pcie";
  }
  return "?";
}

std::string_view topology_name(NetTopology t) {
  switch (t) {
    case NetTopology::kSingleSwitch: return "single-switch";
    case NetTopology::kFatTree: return "fat-tree";
    case NetTopology::kRailOptimized: return "rail-optimized";
    case NetTopology::kClos3: return "clos3";
    case NetTopology::kGraph: return "graph";
  }
  return "?";
}

namespace {

IntraFabric fabric_from(const std::string& s) {
  if (s == "nvlink-mesh") return IntraFabric::kNvlinkMesh;
  if (s == "xgmi-mesh") return IntraFabric::kXgmiMesh;
  if (s == "pcie") return IntraFabric::kPcie;
  return IntraFabric::kNvswitch;
}

NetTopology topology_from(const std::string& s) {
  if (s == "fat-tree") return NetTopology::kFatTree;
  if (s == "rail-optimized") return NetTopology::kRailOptimized;
  if (s == "clos3") return NetTopology::kClos3;
  if (s == "graph") return NetTopology::kGraph;
  return NetTopology::kSingleSwitch;
}

// Optional `achievable` (a fraction of the wire rate in [0.01, 1]: below, a link would carry a
// collective for longer than times print, 5e-324 for ever) and its `achievable_source`.
void read_achievable(FieldReader& r, std::optional<double>& fraction, std::string& source) {
  fraction = r.opt_number("achievable", 0.01, 1.0);
  const std::optional<std::string> stated_source = r.opt_text("achievable_source");
  if (fraction) {
    const Diagnostic at = r.locate("achievable", "");
    source = stated_source.value_or(at.file + ":" + std::to_string(at.line));
  } else if (stated_source) {
    r.error("achievable_source", "only with achievable");
  }
}

// The factors of a `degraded` mapping or `degraded_nodes` entry (topologies/README.md).
Degradation read_degradation(FieldReader& r) {
  Degradation d;
  // An entry with no factor degrades nothing: a typo'd or forgotten factor, taken silently as healthy.
  if (!r.opt_node("compute_slowdown") && !r.opt_node("nic_bandwidth") && !r.opt_node("intra_node_bandwidth")) {
    r.error_here("degrades nothing: give compute_slowdown, nic_bandwidth or intra_node_bandwidth (factors; 1 is healthy)");
  }
  d.compute_slowdown = r.opt_number("compute_slowdown", 0.01, 1000).value_or(1);
  d.nic_bandwidth = r.opt_number("nic_bandwidth", 0.001, 1000).value_or(1);
  d.intra_node_bandwidth = r.opt_number("intra_node_bandwidth", 0.001, 1000).value_or(1);
  return d;
}

NodeType read_node_type(FieldReader r, Diagnostics& diags) {
  const size_t problems_before = diags.size();
  NodeType n;
  n.name = r.name("name");
  n.count = static_cast<int>(r.integer("count", 1, 100000));
  const std::string gpu = r.name("gpu");  // (an empty name is an error here, not a GPU of no figures)
  n.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", 1, 64));
  const std::optional<long> domain = r.opt_integer("nvlink_domain", 1, kMaxNvlinkDomain);
  FieldReader intra = r.child("intra_node");
  n.intra.fabric = fabric_from(intra.choice("fabric", {"nvswitch", "nvlink-mesh", "xgmi-mesh", "pcie"}));
  n.intra.bandwidth_Bps = intra.quantity("bandwidth", Unit::kRate, Bound::kLinkRate);
  n.intra.latency_s = intra.quantity("latency", Unit::kTime, Bound::kLatency);
  const std::optional<long> links = intra.opt_integer("links", 1, 18);
  const std::optional<double> uplink = intra.opt_quantity("uplink_bandwidth", Unit::kRate, Bound::kLinkRate);
  read_achievable(intra, n.intra.achievable, n.intra.achievable_source);
  n.intra.switch_reduction_Bps = intra.opt_quantity("switch_reduction", Unit::kRate);
  if (n.intra.switch_reduction_Bps) {
    const Diagnostic at = intra.locate("switch_reduction", "");
    n.intra.switch_reduction_source = intra.opt_text("switch_reduction_source").value_or(at.file + ":" + std::to_string(at.line));
  } else if (const auto stray = intra.opt_text("switch_reduction_source")) {
    intra.error("switch_reduction_source", "only with switch_reduction");
  }
  intra.finish();
  FieldReader nic = r.child("nic");
  n.nic.count = static_cast<int>(nic.integer("count", 1, 64));
  n.nic.bandwidth_Bps = nic.quantity("bandwidth", Unit::kRate, Bound::kLinkRate);
  n.nic.latency_s = nic.quantity("latency", Unit::kTime, Bound::kLatency);
  read_achievable(nic, n.nic.achievable, n.nic.achievable_source);
  nic.finish();
  if (std::optional<FieldReader> deg = r.opt_child("degraded")) {
    n.degraded = read_degradation(*deg);
    deg->finish();
  }
  if (r.opt_node("degraded_nodes")) {
    for (FieldReader& e : r.list("degraded_nodes")) {
      const int index = static_cast<int>(e.integer("node", 0, 99999));
      const Degradation d = read_degradation(e);
      e.finish();
      if (index >= n.count) {
        e.error("node", "node " + std::to_string(index) + " of a type with " + std::to_string(n.count) +
                            " nodes (0-based, within the type)");
      } else if (std::any_of(n.degraded_nodes.begin(), n.degraded_nodes.end(), [&](const auto& x) { return x.first == index; })) {
        e.error("node", "node " + std::to_string(index) + " is listed twice");
      } else {
        n.degraded_nodes.emplace_back(index, d);
      }
    }
  }
  r.finish();
  n.nic.bandwidth_Bps *= n.degraded.nic_bandwidth;
  n.intra.bandwidth_Bps *= n.degraded.intra_node_bandwidth;
  if (!gpu.empty()) {
    try {
      n.gpu = load_shipped_device(gpu, r.locate("gpu", ""));
      n.gpu.slowdown = n.degraded.compute_slowdown;
    } catch (const InputError& e) {
      for (const Diagnostic& d : e.diagnostics()) diags.add(d);
    }
  }
  if (diags.size() != problems_before) return n;  // cross-field checks only on well-formed fields
  if (n.intra.fabric == IntraFabric::kNvlinkMesh) {
    if (n.gpus_per_node > 8) {
      intra.error("fabric", "nvlink-mesh is the DGX-1 hybrid cube mesh of up to 8 GPUs (fewer: its first ones), but "
                            "gpus_per_node is " + std::to_string(n.gpus_per_node));
    } else if (!links || (*links != 4 && *links != 6)) {
      intra.error(links ? "links" : "fabric",
                  "nvlink-mesh needs links: 4 (DGX-1 with P100) or 6 (DGX-1 with V100) NVLinks per GPU");
    } else {
      n.intra.links = static_cast<int>(*links);
    }
  } else if (links) {
    intra.error("links", "only an nvlink-mesh fabric has a number of links");
  }
  if (n.intra.switch_reduction_Bps && n.intra.fabric != IntraFabric::kNvswitch) {
    intra.error("switch_reduction", "only an nvswitch fabric reduces in the switch");
  }
  if (n.intra.fabric == IntraFabric::kPcie) {
    if (!uplink) intra.error("fabric", "a pcie fabric needs uplink_bandwidth: the host bridge its GPUs share");
    else n.intra.uplink_bandwidth_Bps = *uplink * n.degraded.intra_node_bandwidth;
  } else if (uplink) {
    intra.error("uplink_bandwidth", "only a pcie fabric has a shared uplink");
  }
  if (!n.gpu.name.empty()) {
    const bool nvlink = n.intra.fabric == IntraFabric::kNvswitch || n.intra.fabric == IntraFabric::kNvlinkMesh;
    if (nvlink && n.gpu.vendor == Vendor::kAmd) {
      intra.error("fabric", std::string(fabric_name(n.intra.fabric)) + " needs NVIDIA GPUs, but " + n.gpu.name +
                                " is AMD; use xgmi-mesh or pcie");
    }
    if (n.intra.fabric == IntraFabric::kXgmiMesh && n.gpu.vendor == Vendor::kNvidia) {
      intra.error("fabric", "xgmi-mesh needs AMD GPUs, but " + n.gpu.name + " is NVIDIA; use nvswitch, nvlink-mesh or pcie");
    }
  }
  if (domain && *domain != n.gpus_per_node) {
    if (*domain % n.gpus_per_node != 0) {
      r.error("nvlink_domain", std::to_string(*domain) + " GPUs is not a whole number of nodes of " +
                                   std::to_string(n.gpus_per_node) + " GPUs");
    } else if (*domain < n.gpus_per_node) {
      r.error("nvlink_domain", "smaller than a node (" + std::to_string(n.gpus_per_node) + " GPUs)");
    } else if (n.intra.fabric != IntraFabric::kNvswitch) {
      r.error("nvlink_domain", "a domain of several nodes is an NVLink switch fabric: it needs fabric: nvswitch, not " +
                                   std::string(fabric_name(n.intra.fabric)));
    }
  }
  n.nvlink_domain = domain && *domain % n.gpus_per_node == 0 && *domain >= n.gpus_per_node ? static_cast<int>(*domain)
                                                                                            : n.gpus_per_node;
  if (n.nic.count > n.gpus_per_node) {
    nic.error("count", std::to_string(n.nic.count) + " NICs for " + std::to_string(n.gpus_per_node) +
                           " GPUs per node; at most one NIC per GPU is modelled");
  }
  return n;
}

}  // namespace

void index_gpus(Cluster& c) {
  c.gpus.clear();
  c.node_type_of.clear();
  c.domain_of.clear();
  c.node_health.clear();
  int domain = -1;
  for (int t = 0; t < static_cast<int>(c.node_types.size()); ++t) {
    const NodeType& nt = c.node_types[t];
    const int per_domain = nt.nodes_per_domain();
    for (int k = 0; k < nt.count; ++k) {
      const int node = static_cast<int>(c.node_type_of.size());
      if (k % per_domain == 0) ++domain;  // domains never mix node types
      c.node_type_of.push_back(t);
      c.domain_of.push_back(domain);
      c.node_health.emplace_back();
      for (const auto& [index, d] : nt.degraded_nodes) {
        if (index == k) c.node_health.back() = d;
      }
      const int first_in_domain = (k % per_domain) * nt.gpus_per_node;
      for (int g = 0; g < nt.gpus_per_node; ++g) c.gpus.push_back(GpuSlot{node, t, g, domain, first_in_domain + g});
    }
  }
}

Cluster Cluster::only_node_type(int t) const {
  Cluster c = *this;
  c.name = name + "/" + node_types[t].name;
  c.node_types = {node_types[t]};
  index_gpus(c);
  if (network.graph) {  // the type's nodes keep their places in the graph
    c.network.graph_nodes.clear();
    for (int node = 0; node < node_count(); ++node) {
      if (node_type_of[node] == t) c.network.graph_nodes.push_back(network.graph_nodes[static_cast<size_t>(node)]);
    }
  }
  return c;
}

Cluster load_cluster(const std::filesystem::path& path, const std::vector<FieldOverride>& sets) {
  YamlFile file = YamlFile::load(path);
  file.apply(sets);
  Diagnostics diags;
  FieldReader r = file.root(diags);
  Cluster c;
  c.file = file.name();
  c.name = r.name("name");
  std::vector<std::string> seen;
  long gpus = 0;  // so far, over the node types read (each at most 100 000 x 64: no overflow)
  for (FieldReader& nt : r.list("node_types")) {
    c.node_types.push_back(read_node_type(nt, diags));
    const NodeType& t = c.node_types.back();
    if (std::find(seen.begin(), seen.end(), t.name) != seen.end()) nt.error("name", "\"" + t.name + "\" is used twice");
    seen.push_back(t.name);
    const long before = gpus;
    gpus += static_cast<long>(t.count) * t.gpus_per_node;
    if (before <= kMaxClusterGpus && gpus > kMaxClusterGpus) {
      nt.error("count", std::to_string(t.count) + " nodes of " + std::to_string(t.gpus_per_node) + " GPUs bring the cluster to " +
                            std::to_string(gpus) + " GPUs; hetsim simulates at most " + std::to_string(kMaxClusterGpus) +
                            " (the largest clusters built have about 100 000)");
    }
  }
  FieldReader net = r.child("network");
  c.network.topology = topology_from(net.choice("topology", {"single-switch", "fat-tree", "rail-optimized", "clos3", "graph"}));
  c.network.graph_file = net.opt_text("graph").value_or("");
  if (c.network.topology == NetTopology::kClos3) {  // one ratio per tier, leaf first
    if (const std::optional<std::vector<double>> tiers = net.opt_numbers("oversubscription", 1.0, 64.0)) {
      if (tiers->size() != 3) {
        net.error("oversubscription", "clos3 takes one ratio per tier, leaf first: [leaf, spine, core], e.g. [1, 1, 7]; got " +
                                          std::to_string(tiers->size()));
      } else {
        std::copy(tiers->begin(), tiers->end(), c.network.tier_oversubscription.begin());
      }
    }
  } else {
    c.network.oversubscription = net.opt_number("oversubscription", 1.0, 64.0).value_or(1.0);
  }
  c.network.nodes_per_leaf = static_cast<int>(net.opt_integer("nodes_per_leaf", 1, 100000).value_or(0));
  c.network.leaves_per_pod = static_cast<int>(net.opt_integer("leaves_per_pod", 1, 100000).value_or(0));
  c.network.planes = static_cast<int>(net.opt_integer("planes", 1, 64).value_or(1));
  c.network.switch_latency_s = net.quantity("switch_latency", Unit::kTime, Bound::kLatency);
  c.network.cross_vendor_rdma = net.opt_flag("cross_vendor_rdma").value_or(false);
  net.finish();
  r.finish();
  if (diags.empty()) {
    const NetworkSpec& n = c.network;
    if (n.topology == NetTopology::kSingleSwitch && n.oversubscription != 1) {
      net.error("oversubscription", "a single switch is non-blocking; use fat-tree or rail-optimized to oversubscribe");
    }
    const bool leaves = n.topology == NetTopology::kFatTree || n.topology == NetTopology::kClos3;
    if (!leaves && n.nodes_per_leaf > 0) net.error("nodes_per_leaf", "only a fat-tree or clos3 has leaf switches");
    if (n.topology != NetTopology::kClos3 && n.leaves_per_pod > 0) net.error("leaves_per_pod", "only clos3 has pods");
    if (n.planes > 1 && n.topology != NetTopology::kRailOptimized) net.error("planes", "only a rail-optimized network has planes");
    if (n.topology == NetTopology::kGraph) {
      if (n.graph_file.empty()) net.error("topology", "a graph network needs graph: FILE (its switches, links and where the NICs plug in)");
      std::error_code ec;
      const std::filesystem::path graph = std::filesystem::path(n.graph_file).is_relative() ? path.parent_path() / n.graph_file
                                                                                             : std::filesystem::path(n.graph_file);
      if (!n.graph_file.empty() && !std::filesystem::is_regular_file(graph, ec)) {
        net.error("graph", "\"" + n.graph_file + "\" is not a file (a graph file's path is relative to the cluster file's folder)");
      }
      if (n.oversubscription != 1) net.error("oversubscription", "a graph states its links' bandwidths; oversubscribe by giving fewer or slower links");
    } else if (!n.graph_file.empty()) {
      net.error("graph", "only topology: graph reads a graph file");
    }
    if (n.planes > 1 && n.topology == NetTopology::kRailOptimized) {
      for (const NodeType& t : c.node_types) {
        if (t.nic.count % n.planes != 0 || t.nic.count != c.node_types.front().nic.count) {
          const NodeType& first = c.node_types.front();
          const std::string why = t.nic.count % n.planes != 0 ? t.name + " has " + std::to_string(t.nic.count)
                                                               : first.name + " has " + std::to_string(first.nic.count) + ", " + t.name + " " +
                                                                     std::to_string(t.nic.count);
          net.error("planes", std::to_string(n.planes) + " planes need every node type to have the same number of NICs, a multiple of "
                                  "the planes; " + why);
          break;
        }
      }
    }
    if (n.topology == NetTopology::kClos3) {
      if (n.nodes_per_leaf == 0) net.error("topology", "clos3 needs nodes_per_leaf (how many nodes share a leaf switch)");
      if (n.leaves_per_pod == 0) net.error("topology", "clos3 needs leaves_per_pod (how many leaves share a pod's spine switches)");
    }
    if (n.topology == NetTopology::kFatTree && n.oversubscription != 1 && n.nodes_per_leaf == 0) {
      net.error("oversubscription", "an oversubscribed fat-tree needs nodes_per_leaf (how many nodes share a leaf)");
    }
  }
  diags.throw_if_any();
  index_gpus(c);
  if (c.network.topology == NetTopology::kGraph) {  // relative to the cluster file's folder
    std::filesystem::path graph = c.network.graph_file;
    if (graph.is_relative()) graph = path.parent_path() / graph;
    std::vector<GraphNodeInfo> nodes;
    for (int node = 0, gpu = 0; node < c.node_count(); ++node) {
      const NodeType& nt = c.node_types[c.node_type_of[node]];
      nodes.push_back(GraphNodeInfo{nt.nic.count, gpu, nt.gpus_per_node});
      gpu += nt.gpus_per_node;
    }
    c.network.graph = std::make_shared<const NetworkGraph>(load_network_graph(graph, nodes));
    c.network.graph_nodes.resize(static_cast<size_t>(c.node_count()));
    std::iota(c.network.graph_nodes.begin(), c.network.graph_nodes.end(), 0);
  }
  return c;
}

}  // namespace hetsim
