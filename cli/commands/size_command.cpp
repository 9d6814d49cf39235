// File: cli/commands/size_command.cpp
#include "cli/commands/size_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/app.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "studies/validation/error_bars.hpp"
#include "cli/output/python_plot.hpp"
#include "cli/commands/mix_planner.hpp"
#include "studies/sizing/sizing.hpp"

namespace hetsim::cli {
namespace {

constexpr size_t kMaxMixes = 200000;

}  // namespace

void add_size_options(CLI::App* cmd, SizeArgs& a) {
  cmd->add_option("sizing", a.sizing, "the sizing file (docs/formats/sizing.md)")->required();
  cmd->add_option("--db", a.db, "results database of the plans (default: the sizing file with .db)");
  cmd->add_option("--report", a.report, "write the report JSON (the front with each point's plan) here")->check(output_file());
  cmd->add_option("--plot", a.plot, "write a PNG of the front here (needs python3 + matplotlib)")->check(output_file());
  cmd->add_option("--emit", a.emit, "write each front point's cluster and plan into this folder (hetsim simulate --plan reads them)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {  // checked before the planning, not after it
            std::error_code ec;
            if (std::filesystem::exists(s, ec) && !std::filesystem::is_directory(s, ec)) return s + " is a file; give a folder";
            return {};
          },
          "FOLDER"));
  cmd->add_option("--jobs,-j", a.jobs, "worker processes")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--max-plans", a.max_plans, "at most this many mixes planned beyond the one reference per offer")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--tolerance", a.tolerance, "how far off the fast estimate may be: a mix is pruned only when dominated by this margin")
      ->check(finite_range(0.0, 10.0))
      ->capture_default_str();
  cmd->add_flag("--retry-errors", a.retry_errors, "plan again the mixes recorded as errors");
  cmd->add_flag("--dry-run", a.dry_run, "check the sizing, its offers and its model, and count the mixes; plan nothing");
}

int run_size(const SizeArgs& a) {
  const Sizing s = load_sizing(a.sizing);
  const std::string model_path = resolve_input(s.model, "workloads", "model").string();
  const ModelSpec model = load_model_arg(model_path);
  if (!s.flags.empty()) {  // an unknown flag would fail every mix's plan
    std::vector<std::string> args{"plan", "--model", model_path};
    args.insert(args.end(), s.flags.begin(), s.flags.end());
    try {
      check_command_line(args);
    } catch (const InputError& e) {
      throw InputError({Diagnostic{s.file, s.flags_line, s.flags_column, "flags", e.diagnostics().front().message}});
    }
  }
  if (model.seq_len <= 0) throw InputError(s.file, "model", in_quotes(model.name) + " has no token sequence (seq_len); sizing counts tokens");
  const std::vector<Mix> mixes = enumerate_mixes(s, kMaxMixes);
  if (mixes.empty()) throw InputError(s.file, "budget", "no mix of the offers fits the budget and the offers' counts");

  std::cout << "sizing " << s.name << ": " << model.name << " on "
            << (s.train_tokens > 0 ? format_double("%.4g tokens", s.train_tokens) : format_double("%.4g samples", s.train_samples))
            << "; front: time to train against " << objective_name(s.cost_objective) << "\n";
  std::cout << mixes.size() << " mix(es) of " << s.offers.size() << " offer(s) within the budget";
  if (s.budget_capex_usd) std::cout << " (capex " << format_money(*s.budget_capex_usd) << ")";
  if (s.budget_rent_usd_per_s) std::cout << " (rent " << format_money(*s.budget_rent_usd_per_s * 3600) << "/h)";
  if (s.budget_power_w) std::cout << " (power " << format_double("%.4g kW", *s.budget_power_w / 1e3) << ")";
  std::cout << "\n";
  if (s.reliability) std::cout << "with " << reliability_assumption(*s.reliability) << "\n";
  if (a.dry_run) {
    std::cout << "checked; nothing planned (--dry-run)\n";
    return 0;
  }
  std::cout.flush();

  MixPlanner planner(s, model_path, a);
  const SizingOptions options{a.tolerance, a.max_plans};
  const SizingRun run = run_sizing(
      s, model, mixes, options, [&](const std::vector<Mix>& m, const std::string& what) { return planner.plan(m, what); },
      [](const std::string& line) { std::cout << line << "\n" << std::flush; });

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
              << training_time_error_bar(gpus, mix.gpus, mix.nodes, model.moe.has_value(),
                                         model.training.low_precision_gemms())
              << "\n";
  }
  size_t infeasible = 0, failed = 0;
  for (const SizingPoint& p : run.points) {
    infeasible += p.row.status == "infeasible";
    failed += p.row.status == "error";
  }
  std::cout << run.points.size() << " mix(es) planned and simulated: " << run.feasible.size() << " feasible, " << infeasible
            << " infeasible, " << failed << " error(s); plans kept in " << planner.db_path() << "\n";
  std::cout << "estimates (to choose what to plan, never reported as results):\n";
  for (size_t i = 0; i < s.offers.size(); ++i) {
    std::cout << "  " << s.offers[i].name << ": " << format_double("%.4g", run.rates[i].samples_per_s_per_gpu) << " samples/s per GPU, "
              << run.rates[i].source << "\n";
  }
  if (!a.report.empty()) {
    write_file(a.report, sizing_report_json(s, model, options, run).dump(2) + "\n", "--report");
    std::cout << "report: " << a.report << "\n";
  }
  if (!a.emit.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.emit, ec);
    for (size_t k = 0; k < run.front.size(); ++k) {
      const SizingPoint& p = run.points[run.front[k]];
      const std::string stem = (std::filesystem::path(a.emit) / ("front-" + std::to_string(k + 1))).string();
      write_file(stem + ".cluster.yaml", planner.cluster_yaml(p.mix), "--emit");
      write_file(stem + ".plan.yaml", p.row.report.is_object() ? p.row.report.value("plan", std::string()) : std::string(), "--emit");
    }
    std::cout << "front clusters and plans: " << a.emit << "/front-N.{cluster,plan}.yaml (hetsim simulate -c ... -m "
              << s.model << " --plan ...)\n";
  }
  if (!a.plot.empty() && run.feasible.empty()) {
    std::cerr << "hetsim size --plot: no feasible planned mix to plot; " << a.plot << " not written\n";
  } else if (!a.plot.empty()) {
    // Each point with its time error bar (the plan report's: a share of the time, empty where none
    // applies), and the offers' price dates under the plot.
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
    std::string dates = "prices as of: ";
    for (size_t i = 0; i < s.offers.size(); ++i) {
      dates += (i > 0 ? "; " : "") + s.offers[i].name + " " + (s.offers[i].date.empty() ? "(no date)" : s.offers[i].date);
    }
    const int rc = run_plot_script("studies/sizing/plot_front.py", table, a.plot,
                                   {"--xlabel", cost_label(s.cost_objective), "--title", s.name + ": " + model.name, "--note", dates},
                                   "hetsim size --plot", "the front itself (hetsim size without --plot)");
    if (rc != 0) return rc;
    std::cout << "plot: " << a.plot << "\n";
  }
  return 0;
}

}  // namespace hetsim::cli
