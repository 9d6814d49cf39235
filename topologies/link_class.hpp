// File: topologies/link_class.hpp
// What fraction of a link's wire rate collectives achieve, per link class, with the source of
// every figure: the one table of defaults (link_class.cpp), and how a cluster file's optional
// `achievable` fields override it. NVLink generation follows the GPU model (A100: NVLink3,
// H100/H200: NVLink4, B200/B300/GB200/GB300: NVLink5, V100: NVLink2, P100: NVLink1).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topologies/cluster.hpp"

namespace hetsim {

enum class LinkClass { kNvlink1, kNvlink2, kNvlink3, kNvlink4, kNvlink5, kXgmi, kPcie, kNic };
[[nodiscard]] std::string_view link_class_name(LinkClass c);

// One row of the defaults table.
struct AchievableDefault {
  LinkClass link_class;
  double fraction;      // of the wire rate, in (0, 1]
  std::string_view source;
};
// The whole table, in LinkClass order (for documentation and tests).
[[nodiscard]] const std::vector<AchievableDefault>& achievable_table();

// The fraction a link runs at: stated in the cluster file, or the table's default for its class.
struct Achievable {
  double fraction = 1;
  LinkClass link_class = LinkClass::kNic;
  std::string source;  // "<file>:<line>" of the stated value plus its achievable_source, or the table row's source
};

// NVLink generation of an NVIDIA GPU from its model name (0: not an NVLink GPU we know).
[[nodiscard]] int nvlink_generation(const Device& gpu);

[[nodiscard]] Achievable intra_achievable(const NodeType& node);  // NVSwitch port / NVLink / xGMI / PCIe fabric
[[nodiscard]] Achievable nic_achievable(const NodeType& node);
[[nodiscard]] Achievable pcie_achievable(const NodeType& node);   // each GPU's host link

// NVLink SHARP (NVLS): the throughput at which a node's NVSwitches deliver reduced data (bytes of
// reduced result per second, the whole node), or 0 when the node has no in-switch reduction. A
// rack-scale NVLink domain of k such nodes reduces at k times it (topologies/fabric.cpp).
struct SwitchReduction {
  double bandwidth_Bps = 0;
  double latency_s = 0;
  std::string source;
};
[[nodiscard]] SwitchReduction switch_reduction(const NodeType& node);

}  // namespace hetsim
