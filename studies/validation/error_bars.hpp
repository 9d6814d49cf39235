// File: studies/validation/error_bars.hpp
// Every prediction states how far off hetsim was on the published runs closest to it: the error
// bar (90th percentile of |error|) of a calibration class of its GPU types
// (studies/validation/calibration.hpp) for its iteration time and its peak memory, from the shipped
// calibration (studies/validation/calibration.json), or that none covers its GPU types.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include <set>
#include <string>

#include "sim/report.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

// {"time": {...}, "memory": {...}}: each the class, its rows, mean, 90th-percentile and max |error|,
// and whether it matches this run exactly; null members when no class covers the GPU types.
[[nodiscard]] nlohmann::json error_bars_json(const Report& report, const Cluster& cluster);
// "prediction error: time ±…, memory ±…" (one line); then calibration_contrast's line for a mixed
// cluster, and a line for each GPU type whose peak memory comes within the memory bar of its capacity.
void print_error_bars(std::ostream& out, const Report& report, const Cluster& cluster);
// Where a mixed cluster's GPU types (sizing's offers have calibration_note, studies/sizing) stand under
// different calibration (some under a profile, others on the raw model, which ran faster than
// measured wherever a profile was fitted), a line that says which and how to compare like with
// like; empty where they all stand alike. A profile of MoE host times alone counts for a MoE run
// (`moe`) only.
[[nodiscard]] std::string calibration_contrast(const std::set<std::string>& gpus, bool moe);
// The time bar's text for a training run of `model` on `gpus` (`gpu_count` of them on `nodes`
// nodes): sizing's mixes.
[[nodiscard]] std::string training_time_error_bar(const std::set<std::string>& gpus, long gpu_count, long nodes, const ModelSpec& model);

}  // namespace hetsim
