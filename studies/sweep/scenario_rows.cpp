// File: studies/sweep/scenario_rows.cpp
#include "studies/sweep/scenario_rows.hpp"

#include <nlohmann/json.hpp>

#include "base/text.hpp"

namespace hetsim {

bool fill_row(ScenarioRow& row, const JobOutcome& o) {
  row.status = "error";
  if (o.died) {
    row.error = o.output;
    return false;
  }
  const nlohmann::json j = nlohmann::json::parse(o.output, nullptr, false);
  if (!j.is_object()) {
    row.error = "the worker returned no result: " + printable(o.output.substr(0, 200));
    return false;
  }
  row.status = j.value("status", "error");
  row.error = j.value("error", "");
  row.iteration_time_s = j.value("iteration_time_s", 0.0);
  row.samples_per_s = j.value("samples_per_s", 0.0);
  row.mfu = j.value("mfu", 0.0);
  row.efficiency = j.value("efficiency", 0.0);
  row.peak_memory_bytes = j.value("peak_memory_bytes", 0.0);
  row.report = j.value("report", "");
  const nlohmann::json& limit = j.contains("machine_limit") ? j["machine_limit"] : nlohmann::json(false);
  return row.status == "error" && limit.is_boolean() && limit.get<bool>();
}

}  // namespace hetsim
