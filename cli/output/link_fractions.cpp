// File: cli/output/link_fractions.cpp
#include "cli/output/link_fractions.hpp"

#include <algorithm>
#include <iostream>
#include <string>

#include "base/text.hpp"
#include "topologies/link_class.hpp"

namespace hetsim::cli {

// The achievable fractions (and switch reduction) of the node types the group spans, for the
// summary and the report.
nlohmann::json link_fractions(const Cluster& cluster, const std::vector<int>& group) {
  nlohmann::json out = nlohmann::json::array();
  std::vector<int> types;
  for (int g : group) {
    if (std::find(types.begin(), types.end(), cluster.gpus[g].node_type) == types.end()) types.push_back(cluster.gpus[g].node_type);
  }
  std::sort(types.begin(), types.end());
  for (int t : types) {
    const NodeType& nt = cluster.node_types[t];
    nlohmann::json links = nlohmann::json::array();
    for (const auto& [what, a] : {std::pair<std::string, Achievable>{"intra_node", intra_achievable(nt)},
                                  {"nic", nic_achievable(nt)}, {"pcie", pcie_achievable(nt)}}) {
      links.push_back({{"link", what}, {"class", std::string(link_class_name(a.link_class))}, {"achievable", a.fraction}, {"source", a.source}});
    }
    nlohmann::json j{{"node_type", nt.name}, {"links", links}};
    if (const SwitchReduction r = switch_reduction(nt); r.bandwidth_Bps > 0) {
      j["switch_reduction_Bps"] = r.bandwidth_Bps;
      j["switch_reduction_source"] = r.source;
    }
    out.push_back(j);
  }
  return out;
}

void print_link_fractions(const nlohmann::json& fractions) {
  std::cout << "\nLinks run at a fraction of their wire rate:\n";
  for (const nlohmann::json& nt : fractions) {
    for (const nlohmann::json& l : nt["links"]) {
      std::cout << "  " << nt["node_type"].get<std::string>() << " " << l["link"].get<std::string>() << " ("
                << l["class"].get<std::string>() << "): " << format_double("%.3f", l["achievable"].get<double>()) << " -- "
                << l["source"].get<std::string>() << "\n";
    }
    if (nt.contains("switch_reduction_Bps")) {
      std::cout << "  " << nt["node_type"].get<std::string>() << " NVLS switch reduction: "
                << format_double("%.0f", nt["switch_reduction_Bps"].get<double>() / 1e9) << " GB/s -- "
                << nt["switch_reduction_source"].get<std::string>() << "\n";
    }
  }
}

}  // namespace hetsim::cli
