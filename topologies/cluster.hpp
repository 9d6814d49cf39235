// File: topologies/cluster.hpp
// A cluster description (topologies/<name>.yaml): node types (which GPU, how many, the fabric
// inside a node, the NICs) and the network between nodes; loaded, checked, and flattened into a
// list of GPUs numbered node by node.
#pragma once

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/field_override.hpp"
#include "kernels_profile/device.hpp"
#include "topologies/network_graph.hpp"

namespace hetsim {

enum class IntraFabric { kNvswitch, kNvlinkMesh, kXgmiMesh, kPcie };
enum class NetTopology { kSingleSwitch, kFatTree, kRailOptimized, kClos3, kGraph };

[[nodiscard]] std::string_view fabric_name(IntraFabric f);
[[nodiscard]] std::string_view topology_name(NetTopology t);

struct IntraNodeSpec {
  IntraFabric fabric = IntraFabric::kNvswitch;
  double bandwidth_Bps = 0;  // per GPU, per direction (all its links together)
  double latency_s = 0;
  int links = 0;                    // nvlink-mesh: NVLinks per GPU (4: DGX-1 P100, 6: DGX-1 V100)
  double uplink_bandwidth_Bps = 0;  // pcie: the host bridge all GPUs of the node share
  // Fraction of the wire rate that collectives achieve on these links, in (0, 1]; absent: the
  // default of the link class (topologies/link_class.hpp). Its source: the file's
  // `achievable_source`, else "<file>:<line>".
  std::optional<double> achievable;
  std::string achievable_source;
  // nvswitch only: NVLink SHARP reduction throughput of the node (reduced bytes per second);
  // absent: the default for the GPU generation (none before H100).
  std::optional<double> switch_reduction_Bps;
  std::string switch_reduction_source;
  friend bool operator==(const IntraNodeSpec&, const IntraNodeSpec&) = default;
};

struct NicSpec {
  int count = 1;             // GPU i of a node uses NIC (i mod count)
  double bandwidth_Bps = 0;  // per NIC, per direction
  double latency_s = 0;
  std::optional<double> achievable;  // as IntraNodeSpec::achievable, for the NICs
  std::string achievable_source;
  friend bool operator==(const NicSpec&, const NicSpec&) = default;
};

// What-if degradation (stragglers, a slow link): multipliers on a healthy node's figures.
struct Degradation {
  double compute_slowdown = 1;      // compute time x
  double nic_bandwidth = 1;         // NIC bandwidth x
  double intra_node_bandwidth = 1;  // bandwidth of the GPU links inside the node x
  [[nodiscard]] bool healthy() const { return compute_slowdown == 1 && nic_bandwidth == 1 && intra_node_bandwidth == 1; }
  friend bool operator==(const Degradation&, const Degradation&) = default;
};

struct NodeType {
  std::string name;
  int count = 0;
  Device gpu;  // gpu.slowdown = degraded.compute_slowdown
  int gpus_per_node = 0;
  // `nvlink_domain`: GPUs that share one NVLink switch fabric across nodes (GB200 NVL72: 72, of
  // nodes of 4); a multiple of gpus_per_node, nvswitch nodes only. Absent: gpus_per_node (each
  // node its own domain). Consecutive nodes of the type form a domain; the last may be partial.
  int nvlink_domain = 0;
  [[nodiscard]] int nodes_per_domain() const { return gpus_per_node > 0 ? std::max(1, nvlink_domain / gpus_per_node) : 1; }
  IntraNodeSpec intra;  // bandwidths already x degraded.intra_node_bandwidth
  NicSpec nic;          // bandwidth already x degraded.nic_bandwidth
  Degradation degraded;  // `degraded`: every node of the type (the planner sees it)
  std::vector<std::pair<int, Degradation>> degraded_nodes;  // `degraded_nodes`: by index in the type (simulated only)
  friend bool operator==(const NodeType&, const NodeType&) = default;
};

struct NetworkSpec {
  NetTopology topology = NetTopology::kSingleSwitch;
  double oversubscription = 1;  // fat-tree / rail-optimized: leaf (rail) down / up bandwidth ratio
  int nodes_per_leaf = 0;       // fat-tree, clos3: nodes under one leaf switch; 0 = all under one
  // clos3: leaves under one pod's spine switches, and the oversubscription of each tier, leaf
  // first: [0] leaf down / up, [1] pod spine down / up, [2] what the pods send up / what the core
  // carries between them.
  int leaves_per_pod = 0;
  std::array<double, 3> tier_oversubscription{1, 1, 1};
  // rail-optimized: network planes the rails split into, consecutive NIC indices each, with no
  // link between planes (DeepSeek-V3's multi-plane fat-tree: 8 NICs, 8 planes).
  int planes = 1;
  // graph: the graph file as written, what was read from it (topologies/network_graph.hpp), and
  // the graph's node index of each of this cluster's nodes (the identity, except in a cluster
  // restricted to some node types: its nodes keep their places in the graph).
  std::string graph_file;
  std::shared_ptr<const NetworkGraph> graph;
  std::vector<int> graph_nodes;
  double switch_latency_s = 0;
  bool cross_vendor_rdma = false;  // NVIDIA <-> AMD traffic goes NIC to NIC without host staging
  friend bool operator==(const NetworkSpec&, const NetworkSpec&) = default;
};

// One GPU of the cluster. GPUs are numbered node by node, node types in file order.
struct GpuSlot {
  int node = 0;       // global node index
  int node_type = 0;  // index into Cluster::node_types
  int local = 0;      // index within its node
  int domain = 0;     // global NVLink domain index (the node's own index where nodes are their own domains)
  int in_domain = 0;  // index within its NVLink domain
  friend bool operator==(const GpuSlot&, const GpuSlot&) = default;
};

struct Cluster {
  std::string name;
  std::vector<NodeType> node_types;
  NetworkSpec network;
  std::string file;

  std::vector<GpuSlot> gpus;       // filled by the loader
  std::vector<int> node_type_of;   // node index -> node type index
  std::vector<int> domain_of;      // node index -> NVLink domain index (domains numbered like nodes)
  std::vector<Degradation> node_health;  // node index -> its own degraded_nodes entry (on top of its type's)

  [[nodiscard]] int gpu_count() const { return static_cast<int>(gpus.size()); }
  [[nodiscard]] int node_count() const { return static_cast<int>(node_type_of.size()); }
  [[nodiscard]] int domain_count() const { return domain_of.empty() ? 0 : domain_of.back() + 1; }
  // True when GPUs a and b reach each other over NVLink/xGMI without a NIC: the same node, or the
  // same rack-scale NVLink domain.
  [[nodiscard]] bool same_domain(int a, int b) const { return gpus[a].domain == gpus[b].domain; }
  [[nodiscard]] const Device& device_of(int gpu) const { return node_types[gpus[gpu].node_type].gpu; }
  [[nodiscard]] const NodeType& node_type_of_gpu(int gpu) const { return node_types[gpus[gpu].node_type]; }
  // The cluster restricted to node type `t` (same network), e.g. for homogeneous references.
  [[nodiscard]] Cluster only_node_type(int t) const;
  friend bool operator==(const Cluster&, const Cluster&) = default;
};

// The most GPUs a cluster may have: 2^17, above the largest clusters built (100 000 GPUs). A
// cluster file is small whatever it describes (a few lines may claim 256 million GPUs), and what
// hetsim holds per GPU is not: past this, a load or a run would end for want of memory.
inline constexpr long kMaxClusterGpus = 131072;

// The largest NVLink domain a cluster file may state: NVIDIA's largest announced NVLink switch
// system joins 576 GPUs (Vera Rubin NVL576); twice that leaves room without admitting nonsense.
inline constexpr long kMaxNvlinkDomain = 1152;

// Reads and checks a cluster file (and the devices it names). Throws InputError, also for more
// than kMaxClusterGpus GPUs (naming the count that goes over).
// `sets`: --set overrides of this input (field_override.hpp), applied before it is read.
[[nodiscard]] Cluster load_cluster(const std::filesystem::path& path, const std::vector<FieldOverride>& sets = {});

// Recomputes gpus/node_type_of from node_types (after the node types were edited).
void index_gpus(Cluster& c);

}  // namespace hetsim
