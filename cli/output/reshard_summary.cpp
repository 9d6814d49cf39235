// File: cli/output/reshard_summary.cpp
#include "cli/output/reshard_summary.hpp"

#include <iostream>

#include "base/text.hpp"
#include "base/units.hpp"

namespace hetsim::cli {

void print_reshard(const ReshardLabels& a, const ReshardCase& c, const ReshardOutcome& r, const Cluster& cluster, double t) {
  const double bw = t > 0 ? r.tensor_bytes * 8 / t : 0;
  const ReshardSchedule& s = r.schedule;
  std::cout << "hetsim reshard: " << format_bytes(r.tensor_bytes) << " " << a.dtype << " tensor " << a.tensor << " on "
            << cluster.name << "\n"
            << "  from " << a.src_shape << " mesh [" << a.src << "] as " << spec_string(c.src_spec) << " ("
            << counted(r.src.tiles.size(), "tile") << ")\n"
            << "  to   " << a.dst_shape << " mesh [" << a.dst << "] as " << spec_string(c.dst_spec) << " ("
            << counted(r.dst.tiles.size(), "tile") << ")\n"
            << "  " << counted(r.works.slices.size(), "slice") << ", " << counted(r.works.works.size(), "work") << " by "
            << method_name(r.works.method);
  if (!r.works.gathers.empty()) std::cout << " + " << r.works.gathers.size() << " local all-gathers";
  std::cout << "\n";
  if (!r.works.note.empty()) std::cout << "  (local all-gather does not apply: " << r.works.note << "; ran as send/recv)\n";
  std::cout << "  senders: " << a.load_balance;
  if (c.balance == LoadBalance::kOrder) {
    std::cout << " (seed " << a.seed << ": greedy " << c.order.greedy_rounds << " rounds, model makespan "
              << format_time(s.greedy_makespan_s) << "; search " << s.expansions << " nodes, "
              << (s.search_exhausted ? "complete" : s.stopped_by_time ? "stopped by the time budget" : "stopped by the node budget")
              << ", kept the " << s.solver << " schedule)";
  }
  std::cout << "\n\n"
            << "  time                 " << format_time(t) << "\n"
            << "  effective bandwidth  " << format_double("%.3f", bw / 1e9) << " Gbit/s  (tensor bits / time)\n"
            << "  network bytes        " << format_bytes(r.network_bytes) << "  (bytes crossing NICs)\n";
  if (c.method == ReshardMethod::kSignal) {
    std::cout << "  (signal mode: a 1-byte message per work, the latency and dependencies only: an upper bound)\n";
  }
}

nlohmann::json reshard_json(const ReshardLabels& a, const ReshardCase& c, const ReshardOutcome& r, const Cluster& cluster, double t) {
  const double bw = t > 0 ? r.tensor_bytes * 8 / t : 0;
  const ReshardSchedule& s = r.schedule;
  nlohmann::json works = nlohmann::json::array();
  for (int i : s.order) {
    works.push_back({{"bytes", r.works.works[i].bytes}, {"sender", s.sender[i]}, {"receivers", r.works.works[i].receivers}});
  }
  nlohmann::json j{{"cluster", cluster.name},
                   {"tensor", c.tensor},
                   {"dtype", a.dtype},
                   {"tensor_bytes", r.tensor_bytes},
                   {"src", {{"devices", c.src.devices}, {"shape", a.src_shape}, {"spec", spec_string(c.src_spec)}}},
                   {"dst", {{"devices", c.dst.devices}, {"shape", a.dst_shape}, {"spec", spec_string(c.dst_spec)}}},
                   {"method_requested", a.method},
                   {"method", method_name(r.works.method)},
                   {"method_note", r.works.note},
                   {"load_balance", a.load_balance},
                   {"seed", a.seed},
                   {"slices", r.works.slices.size()},
                   {"local_all_gathers", r.works.gathers.size()},
                   {"time_s", t},
                   {"effective_bandwidth_bps", bw},
                   {"network_bytes", r.network_bytes},
                   {"model_makespan_s", s.model_makespan_s},
                   {"works", works}};
  if (c.balance == LoadBalance::kOrder) {
    j["order_search"] = {{"greedy_rounds", c.order.greedy_rounds},
                         {"greedy_makespan_s", s.greedy_makespan_s},
                         {"expansions", s.expansions},
                         {"max_expansions", c.order.max_expansions},
                         {"budget_s", c.order.budget_s},
                         {"complete", s.search_exhausted},
                         {"stopped_by_time", s.stopped_by_time},
                         {"kept", s.solver}};
  }
  return j;
}

}  // namespace hetsim::cli
