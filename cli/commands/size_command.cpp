// File: cli/commands/size_command.cpp
#include "cli/commands/size_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/app.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "cli/output/python_plot.hpp"
#include "cli/commands/mix_planner.hpp"
#include "cli/output/sizing_summary.hpp"
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
  const std::string db = a.db.empty() ? std::filesystem::path(a.sizing).replace_extension(".db").string() : a.db;
  check_paths_apart({{"--report", a.report}, {"--plot", a.plot}}, {{"the results database", db}, {"the sizing file", a.sizing}});
  const Sizing s = load_sizing(a.sizing);
  const std::string model_path = resolve_input(s.model, "workloads", "model").string();
  const ModelSpec model = load_model_arg(model_path);
  if (!s.flags.empty()) {  // an unknown flag would fail every mix's plan
    std::vector<std::string> args{"plan", "--model", model_path};
    args.insert(args.end(), s.flags.begin(), s.flags.end());
    try {
      check_command_line(args);
    } catch (const InputError& e) {
      // At the flags, saying which file a flag named was wrong where one was (a profile, a batch file).
      const Diagnostic& d = e.diagnostics().front();
      const bool named = !d.file.empty() && d.file != "hetsim" && !d.file.starts_with("-");
      const std::string where = named ? d.file + (d.line > 0 ? ":" + std::to_string(d.line) : "") + ": " : "";
      throw InputError({Diagnostic{s.file, s.flags_line, s.flags_column, "flags", where + d.message}});
    }
  }
  if (model.seq_len <= 0) throw InputError(s.file, "model", in_quotes(model.name) + " has no token sequence (seq_len); sizing counts tokens");
  // Less than one iteration is no training run: its time to train (microseconds) would rank first.
  const double samples = s.train_tokens > 0 ? s.train_tokens / static_cast<double>(model.seq_len) : s.train_samples;
  if (samples < static_cast<double>(model.training.global_batch)) {
    throw InputError(s.file, s.train_tokens > 0 ? "train_tokens" : "train_samples",
                     (s.train_tokens > 0 ? format_double("%.4g tokens", s.train_tokens) : format_double("%.4g samples", s.train_samples)) +
                         " is less than one iteration of " + model.name + " (a global batch of " +
                         std::to_string(model.training.global_batch) + " samples of " + std::to_string(model.seq_len) + " tokens)");
  }
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
    if (const std::string note = calibration_note(s, model.moe.has_value()); !note.empty()) std::cout << note << "\n";
    std::cout << "checked; nothing planned (--dry-run"
              << (a.report.empty() && a.plot.empty() && a.emit.empty() ? "" : ": no report, plot or front files written") << ")\n";
    return 0;
  }
  std::cout.flush();

  MixPlanner planner(s, model_path, a);
  const SizingOptions options{a.tolerance, a.max_plans};
  const SizingRun run = run_sizing(
      s, model, mixes, options, [&](const std::vector<Mix>& m, const std::string& what) { return planner.plan(m, what); },
      [](const std::string& line) { std::cout << line << "\n" << std::flush; });

  print_sizing_front(s, model, run, planner.db_path());
  if (!a.report.empty()) {
    write_file(a.report, sizing_report_json(s, model, options, run).dump(2) + "\n", "--report");
    std::cout << "report: " << printable(a.report) << "\n";
  }
  if (!a.emit.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.emit, ec);
    // Every file checked before any is written: a refusal leaves no front half written.
    for (size_t k = 0; k < run.front.size(); ++k) {
      const std::string stem = (std::filesystem::path(a.emit) / ("front-" + std::to_string(k + 1))).string();
      for (const std::string& f : {stem + ".cluster.yaml", stem + ".plan.yaml"}) refuse_overwriting_an_input(f, "--emit");
    }
    for (size_t k = 0; k < run.front.size(); ++k) {
      const SizingPoint& p = run.points[run.front[k]];
      const std::string stem = (std::filesystem::path(a.emit) / ("front-" + std::to_string(k + 1))).string();
      write_file(stem + ".cluster.yaml", planner.cluster_yaml(p.mix), "--emit");
      write_file(stem + ".plan.yaml", p.row.report.is_object() ? p.row.report.value("plan", std::string()) : std::string(), "--emit");
    }
    std::cout << "front clusters and plans: " << printable(a.emit) << "/front-N.{cluster,plan}.yaml (hetsim simulate -c ... -m "
              << s.model << " --plan ...)\n";
  }
  if (!a.plot.empty() && run.feasible.empty()) {
    std::cerr << "hetsim size --plot: no feasible planned mix to plot; " << printable(a.plot) << " not written\n";
  } else if (!a.plot.empty()) {
    // Each point with its time error bar (the plan report's: a share of the time, empty where none
    // applies), and the offers' price dates under the plot.
    const std::string table = sizing_plot_table(s, run);
    std::string dates = "prices as of: ";
    for (size_t i = 0; i < s.offers.size(); ++i) {
      dates += (i > 0 ? "; " : "") + s.offers[i].name + " " + (s.offers[i].date.empty() ? "(no date)" : s.offers[i].date);
    }
    const int rc = run_plot_script("studies/sizing/plot_front.py", table, a.plot,
                                   {"--xlabel", cost_label(s.cost_objective), "--title", s.name + ": " + model.name, "--note", dates},
                                   "hetsim size --plot", "the front itself (hetsim size without --plot)");
    if (rc != 0) return rc;
    std::cout << "plot: " << printable(a.plot) << "\n";
  }
  return 0;
}

}  // namespace hetsim::cli
