// File: cli/output/goodput_summary.cpp
#include "cli/output/goodput_summary.hpp"

#include "base/text.hpp"
#include "base/units.hpp"
#include "studies/sizing/estimate.hpp"
#include "studies/sizing/goodput.hpp"

namespace hetsim::cli {

nlohmann::json print_goodput(std::ostream& out, const Report& report, const ModelSpec& model, const Cluster& cluster) {
  if (!report.feasible || !(report.samples_per_s > 0)) return nlohmann::json::object();
  const Reliability r;
  const Goodput g = expected_goodput(r, cluster.gpu_count(), cluster.node_count(), model_needs(model).checkpoint_bytes);
  out << "\nwith failures (--reliability): goodput " << format_double("%.1f %%", 100 * g.goodput) << ", "
      << format_double("%.4g samples/s", report.samples_per_s * g.goodput) << "; the job fails every "
      << format_duration(g.mtbf_s) << " on average; a " << format_bytes(g.checkpoint_bytes) << " checkpoint takes "
      << format_duration(g.checkpoint_s) << ", written every " << format_duration(g.interval_s) << "\n  ("
      << reliability_assumption(r) << ")\n";
  return {{"fraction", g.goodput},
          {"samples_per_s", report.samples_per_s * g.goodput},
          {"mtbf_s", g.mtbf_s},
          {"checkpoint_bytes", g.checkpoint_bytes},
          {"checkpoint_s", g.checkpoint_s},
          {"checkpoint_interval_s", g.interval_s},
          {"assumption", reliability_assumption(r)}};
}

}  // namespace hetsim::cli
