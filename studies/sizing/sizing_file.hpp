// File: studies/sizing/sizing_file.hpp
// A sizing file (docs/formats/sizing.md): a model, how much it trains on, the offers of nodes that
// can be bought or rented (dated, sourced prices and power), a budget, energy prices and the
// objectives whose Pareto front `hetsim size` returns.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/input_error.hpp"
#include "kernels_profile/device.hpp"
#include "studies/sizing/goodput.hpp"

namespace hetsim {

// Nodes that can be bought (price) or rented (rent), with the node type they make.
struct Offer {
  std::string name;
  YAML::Node node;              // a cluster node type's fields without name and count (topologies/README.md)
  std::optional<double> price_usd;         // purchase price per node
  std::optional<double> rent_usd_per_s;    // rent per node
  double power_w = 0;           // per node, at load
  std::string source;           // where the price and power come from (with its date)
  std::string date;             // optional
  long min_count = 0;
  long max_count = 0;           // the file's max_count, else what the budget allows
  long count_step = 1;          // nodes come in multiples of this (GB200 NVL72: racks of 18 trays)
  // The counts a mix may take: multiples of count_step from min_count (rounded up) to max_count.
  [[nodiscard]] long first_count() const { return (min_count + count_step - 1) / count_step * count_step; }
  // Filled by the loader from the node's GPU: one device, GPUs per node.
  Device gpu;
  int gpus_per_node = 0;
  Diagnostic where;             // file:line of the offer, for messages found later
};

enum class Objective { kTimeToTrain, kCost, kCostPerToken, kEnergy };

struct Sizing {
  std::string file;
  std::string name;
  std::string model;                 // a path (resolved against the file's folder) or a shipped name
  double train_tokens = 0;           // one of these two is given
  double train_samples = 0;
  Objective cost_objective = Objective::kCost;  // the front is time_to_train against this
  std::optional<double> budget_capex_usd;
  std::optional<double> budget_rent_usd_per_s;
  std::optional<double> budget_power_w;
  std::vector<Offer> offers;
  std::string offers_file;           // where the offers were read from (the sizing file itself when inline)
  YAML::Node network;                // the cluster's network mapping
  bool network_given = false;
  double energy_usd_per_j = 0;       // needed when an offer is bought
  double pue = 1;
  double amortization_s = 0;         // needed when an offer is bought
  std::vector<std::string> flags;    // planner switches for every plan (hetsim plan --help)
  int flags_line = 0, flags_column = 0;  // where `flags` is in the file (0: not given)
  // `reliability:` failures and checkpoints: every mix's time to train is its simulated rate times
  // its expected goodput (studies/sizing/goodput.hpp). None: no failures, as before.
  std::optional<Reliability> reliability;
};

[[nodiscard]] std::string_view objective_name(Objective o);  // "time_to_train", "cost", ...

// Reads and checks a sizing file (and the offers file it names); every offer's node is checked as
// a cluster node type. Throws InputError naming file, line and field.
[[nodiscard]] Sizing load_sizing(const std::filesystem::path& path);

// The cluster YAML of `counts[i]` nodes of offer i (offers with 0 left out), named `name`.
[[nodiscard]] std::string mix_cluster_yaml(const Sizing& s, const std::vector<long>& counts, const std::string& name);

}  // namespace hetsim
