// File: cli/output/sizing_summary.cpp
#include "cli/output/sizing_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "base/units.hpp"
#include "studies/validation/error_bars.hpp"

namespace hetsim::cli {

void print_sizing_front(const Sizing& s, const ModelSpec& model, const SizingRun& run, const std::string& db) {
  // Terminal: the front.
  std::cout << "\nPareto front: time to train against " << cost_label(s.cost_objective) << "\n";
  std::printf("%-34s %6s %12s %11s %12s %11s %10s %6s\n", "nodes", "GPUs", "cost", "samples/s", "time to train", "energy",
              "USD/Mtok", "eff.");
  for (size_t i : run.front) {
    const SizingPoint& p = run.points[i];
    std::printf("%-34s %6ld %12s %11.4g %12s %11s %10.4g %5.1f%%\n", mix_label(s, p.mix).c_str(), p.mix.gpus,
                format_money(p.costs.cost_usd).c_str(), p.row.samples_per_s, format_duration(p.costs.time_to_train_s).c_str(),
                (p.costs.energy_kwh >= 1e3 ? format_double("%.4g MWh", p.costs.energy_kwh / 1e3) : format_double("%.4g kWh", p.costs.energy_kwh)).c_str(), p.costs.cost_per_million_tokens_usd,
                100 * p.row.efficiency);
  }
  if (run.front.empty()) std::cout << "(empty: no planned mix was feasible)\n";
  // Each front mix's error bar: a calibration class of its GPU types, or none.
  for (size_t k = 0; k < run.front.size(); ++k) {
    const Mix& mix = run.points[run.front[k]].mix;
    std::set<std::string> gpus;
    for (size_t o = 0; o < mix.counts.size(); ++o) {
      if (mix.counts[o] > 0) gpus.insert(s.offers[o].gpu.name);
    }
    std::cout << (k == 0 ? "error on published runs: " : "                         ") << mix_label(s, mix) << ": "
              << training_time_error_bar(gpus, mix.gpus, mix.nodes, model)
              << "\n";
  }
  size_t infeasible = 0, failed = 0;
  for (const SizingPoint& p : run.points) {
    infeasible += p.row.status == "infeasible";
    failed += p.row.status == "error";
  }
  std::cout << run.points.size() << " mix(es) planned and simulated: " << run.feasible.size() << " feasible, " << infeasible
            << " infeasible, " << failed << " error(s); plans kept in " << db << "\n";
  std::cout << "estimates (to choose what to plan, never reported as results):\n";
  for (size_t i = 0; i < s.offers.size(); ++i) {
    std::cout << "  " << s.offers[i].name << ": " << format_double("%.4g", run.rates[i].samples_per_s_per_gpu) << " samples/s per GPU, "
              << run.rates[i].source << "\n";
  }
  if (const std::string note = calibration_note(s, model.moe.has_value()); !note.empty()) std::cout << note << "\n";
}

std::string sizing_plot_table(const Sizing& s, const SizingRun& run) {
  std::string table = "label,cost,time_to_train_days,on_front,time_error\n";
  for (size_t i : run.feasible) {
    const SizingPoint& p = run.points[i];
    const nlohmann::json* bar = p.row.report.is_object() ? &p.row.report : nullptr;
    for (const char* key : {"error_bars", "time", "p90_abs_error"}) bar = bar && bar->is_object() && bar->contains(key) ? &(*bar)[key] : nullptr;
    table += csv_field(mix_label(s, p.mix)) + "," + format_double("%.17g", cost_objective_value(s, p.costs)) + "," +
             format_double("%.17g", p.costs.time_to_train_s / 86400) + "," +
             (std::find(run.front.begin(), run.front.end(), i) != run.front.end() ? "1" : "0") + "," +
             (bar && bar->is_number() ? format_double("%.6g", bar->get<double>()) : "") + "\n";
  }
  return table;
}

}  // namespace hetsim::cli
