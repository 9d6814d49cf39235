// File: studies/validation/mfu_ceiling.hpp
// Beside a run's MFU: whether it is above the highest MFU published for its GPUs and kind of
// training (studies/validation/mfu/published-mfu.yaml), which no published run has reached.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/report.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

// Prints a line when the report's MFU is above the published ceiling; returns the JSON the report
// carries as `mfu_published` (null when nothing published applies).
nlohmann::json check_mfu(std::ostream& out, const Report& report, const ModelSpec& model, const Cluster& cluster);

}  // namespace hetsim
