// File: cli/output/link_fractions.hpp
// The fraction of their wire rate a collective's links run at (and NVSwitch's in-switch reduction),
// per node type the group spans, with each figure's source: hetsim collective's closing lines and
// its report's link_fractions.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "topologies/cluster.hpp"

namespace hetsim::cli {

[[nodiscard]] nlohmann::json link_fractions(const Cluster& cluster, const std::vector<int>& group);
void print_link_fractions(const nlohmann::json& fractions);

}  // namespace hetsim::cli
