// File: cli/commands/size_command.cpp
#include "cli/commands/size_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/log.hpp"
#include "base/progress.hpp"
#include "base/temp_dir.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/app.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "cli/output/python_plot.hpp"
#include "cli/commands/scenario_run.hpp"
#include "studies/sizing/costs.hpp"
#include "studies/sizing/estimate.hpp"
#include "studies/sizing/pareto.hpp"
#include "studies/sweep/results_db.hpp"
#include "studies/sweep/worker_pool.hpp"

namespace hetsim::cli {
namespace {

constexpr size_t kMaxMixes = 200000;

// One planned mix: the plan run's row.
struct Planned {
  std::string status = "error", error;
  double samples_per_s = 0, mfu = 0, efficiency = 0, iteration_time_s = 0;
  nlohmann::json report;  // with the chosen plan under "plan"
};

// Plans mixes in worker processes, each result kept in the database under its key.
class MixPlanner {
 public:
  MixPlanner(const Sizing& s, std::string model_path, const SizeArgs& a)
      : s_(s), model_path_(std::move(model_path)), db_(a.db.empty() ? std::filesystem::path(a.sizing).replace_extension(".db")
                                                                    : std::filesystem::path(a.db)),
        jobs_(a.jobs), dir_("size") {
    for (ScenarioRow& r : db_.rows()) {
      if (a.retry_errors && r.status == "error") continue;
      rows_.emplace(r.scenario, std::move(r));
    }
    model_text_ = slurp(model_path_);
  }
  MixPlanner(const MixPlanner&) = delete;
  MixPlanner& operator=(const MixPlanner&) = delete;

  [[nodiscard]] std::string cluster_yaml(const Mix& m) const { return mix_cluster_yaml(s_, m.counts, s_.name + "-" + mix_name(s_, m)); }

  // Plans every mix not yet in the database; returns the rows in the order of `mixes`.
  std::vector<Planned> plan(const std::vector<Mix>& mixes, const std::string& what) {
    std::vector<std::string> keys;
    std::vector<size_t> pending;
    for (size_t i = 0; i < mixes.size(); ++i) {
      keys.push_back(key(mixes[i]));
      if (!rows_.contains(keys.back())) pending.push_back(i);
    }
    if (!pending.empty()) {
      log_info("planning " + std::to_string(pending.size()) + " " + what + " (" + std::to_string(mixes.size() - pending.size()) +
               " already in " + db_path() + ") on " + std::to_string(jobs_) + " worker(s)");
      std::vector<std::filesystem::path> files;
      for (size_t i : pending) files.push_back(dir_.new_file("mix", ".yaml", cluster_yaml(mixes[i])));
      Progress bar(pending.size(), "plans");
      size_t finished = 0, failed = 0;
      run_in_workers(
          pending.size(), jobs_,
          [&](size_t j) {
            std::vector<std::string> args{"plan", "--cluster", files[j].string(), "--model", model_path_};
            args.insert(args.end(), s_.flags.begin(), s_.flags.end());
            return run_scenario_here(args, dir_, true);
          },
          [&](const JobOutcome& o) {
            const Mix& m = mixes[pending[o.job]];
            ScenarioRow row;
            row.scenario = keys[pending[o.job]];
            row.study = s_.name;
            row.position = static_cast<long>(pending[o.job]);
            row.axes = nlohmann::json{{"nodes", nodes_json(m)}}.dump();
            row.wall_s = o.wall_s;
            const bool machine_limit = fill_row(row, o);
            failed += row.status == "error";
            if (!machine_limit) db_.put(row);  // a limit of this machine: planned again on the next run
            rows_[row.scenario] = row;
            bar.update(++finished, failed > 0 ? std::to_string(failed) + " failed" : "");
          });
      bar.finish();
    }
    std::vector<Planned> out;
    for (const std::string& k : keys) {
      const ScenarioRow& r = rows_.at(k);
      Planned p;
      p.status = r.status;
      p.error = r.error;
      p.samples_per_s = r.samples_per_s;
      p.mfu = r.mfu;
      p.efficiency = r.efficiency;
      p.iteration_time_s = r.iteration_time_s;
      if (!r.report.empty()) p.report = nlohmann::json::parse(r.report, nullptr, false);
      out.push_back(std::move(p));
    }
    return out;
  }

  [[nodiscard]] nlohmann::json nodes_json(const Mix& m) const {
    nlohmann::json j = nlohmann::json::object();
    for (size_t i = 0; i < s_.offers.size(); ++i) {
      if (m.counts[i] > 0) j[s_.offers[i].name] = m.counts[i];
    }
    return j;
  }
  [[nodiscard]] std::string db_path() const { return db_.path().string(); }

 private:
  // The plan's inputs and hetsim's version: the cluster, the model file, the switches.
  [[nodiscard]] std::string key(const Mix& m) const {
    std::string text = std::string("hetsim ") + HETSIM_VERSION + " size\n" + cluster_yaml(m) + "--- model\n" + model_text_ + "--- flags\n";
    for (const std::string& f : s_.flags) text += f + "\n";
    return digest(text);
  }

  const Sizing& s_;
  std::string model_path_;
  std::string model_text_;
  ResultsDb db_;
  int jobs_;
  TempDir dir_;  // the mixes' cluster files and the workers' reports
  std::map<std::string, ScenarioRow> rows_;
};

std::string cost_label(Objective o) {
  switch (o) {
    case Objective::kCostPerToken: return "cost per million tokens (USD)";
    case Objective::kEnergy: return "energy (kWh)";
    case Objective::kCost:
    case Objective::kTimeToTrain: break;
  }
  return "cost (USD: capex + rent over the training)";
}

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
  const ModelNeeds needs = model_needs(model);
  const std::vector<Mix> mixes = enumerate_mixes(s, kMaxMixes);
  if (mixes.empty()) throw InputError(s.file, "budget", "no mix of the offers fits the budget and the offers' counts");
  std::map<std::vector<long>, size_t> index;
  for (size_t i = 0; i < mixes.size(); ++i) index.emplace(mixes[i].counts, i);

  std::cout << "sizing " << s.name << ": " << model.name << " on "
            << (s.train_tokens > 0 ? format_double("%.4g tokens", s.train_tokens) : format_double("%.4g samples", s.train_samples))
            << "; front: time to train against " << objective_name(s.cost_objective) << "\n";
  std::cout << mixes.size() << " mix(es) of " << s.offers.size() << " offer(s) within the budget";
  if (s.budget_capex_usd) std::cout << " (capex " << format_money(*s.budget_capex_usd) << ")";
  if (s.budget_rent_usd_per_s) std::cout << " (rent " << format_money(*s.budget_rent_usd_per_s * 3600) << "/h)";
  if (s.budget_power_w) std::cout << " (power " << format_double("%.4g kW", *s.budget_power_w / 1e3) << ")";
  std::cout << "\n";
  if (a.dry_run) {
    std::cout << "checked; nothing planned (--dry-run)\n";
    return 0;
  }
  std::cout.flush();

  MixPlanner planner(s, model_path, a);
  // References: each offer alone, at its smallest count that holds the model.
  std::vector<Mix> refs;
  std::vector<size_t> ref_offer;
  std::vector<long> ref_nodes(s.offers.size(), 0);
  for (size_t i = 0; i < s.offers.size(); ++i) {
    const long n = reference_count(s, i, needs);
    if (n <= 0) continue;
    std::vector<long> counts(s.offers.size(), 0);
    counts[i] = n;
    refs.push_back(make_mix(s, counts));
    ref_offer.push_back(i);
    ref_nodes[i] = n;
  }
  const std::vector<Planned> ref_rows = planner.plan(refs, "reference cluster(s)");
  std::vector<double> ref_rate(s.offers.size(), 0), ref_mfu(s.offers.size(), 0);
  for (size_t k = 0; k < refs.size(); ++k) {
    if (ref_rows[k].status == "ok") {
      ref_rate[ref_offer[k]] = ref_rows[k].samples_per_s;
      ref_mfu[ref_offer[k]] = ref_rows[k].mfu;
    }
  }
  const std::vector<OfferRate> rates = offer_rates(s, model, needs, ref_rate, ref_mfu, ref_nodes);

  // The fast estimate of every mix that can hold the model.
  std::vector<size_t> held;
  std::vector<CostTime> est;
  std::vector<bool> uncertain;
  std::vector<double> est_samples(mixes.size(), 0);
  for (size_t i = 0; i < mixes.size(); ++i) {
    if (!can_hold(s, mixes[i], needs)) continue;
    est_samples[i] = estimate_samples_per_s(s, mixes[i], rates);
    if (!(est_samples[i] > 0)) continue;
    const MixCosts c = costs_of(s, mixes[i], est_samples[i], needs.tokens_per_sample);
    held.push_back(i);
    est.push_back({cost_objective_value(s, c), c.time_to_train_s});
    uncertain.push_back(cost_objective_depends_on_time(s, mixes[i]));
  }
  const std::vector<size_t> keep = not_surely_dominated(est, uncertain, a.tolerance);
  std::vector<size_t> unplanned;  // the references are planned already
  for (size_t k : keep) {
    if (std::none_of(refs.begin(), refs.end(), [&](const Mix& r) { return r.counts == mixes[held[k]].counts; })) unplanned.push_back(k);
  }
  const std::vector<size_t> chosen_local = spread_over_times(unplanned, est, static_cast<size_t>(a.max_plans));
  std::vector<Mix> chosen;
  for (size_t k : chosen_local) chosen.push_back(mixes[held[k]]);
  std::cout << mixes.size() - held.size() << " cannot hold the training state (" << format_bytes(needs.state_bytes)
            << ") in their GPUs' memory; " << keep.size() << " of the rest may be on the front by the fast estimate (tolerance "
            << format_double("%.0f %%", 100 * a.tolerance) << "); planning " << chosen.size() << " of them (--max-plans "
            << a.max_plans << ") and " << refs.size() << " reference(s)\n";
  std::cout.flush();
  const std::vector<Planned> rows = planner.plan(chosen, "mix(es) near the estimated front");

  // Every planned mix that is a mix of this sizing, with its costs.
  struct Point {
    Mix mix;
    Planned row;
    MixCosts costs;
    double estimate = 0;
    bool valid = false;
  };
  std::vector<Point> points;
  std::map<std::vector<long>, bool> seen;
  auto add = [&](const Mix& m, const Planned& p) {
    if (seen[m.counts]) return;
    seen[m.counts] = true;
    Point pt{m, p, {}, 0, index.contains(m.counts)};
    if (pt.valid) pt.estimate = est_samples[index.at(m.counts)];
    if (p.status == "ok" && p.samples_per_s > 0) pt.costs = costs_of(s, m, p.samples_per_s, needs.tokens_per_sample);
    points.push_back(std::move(pt));
  };
  for (size_t k = 0; k < refs.size(); ++k) add(refs[k], ref_rows[k]);
  for (size_t k = 0; k < chosen.size(); ++k) add(chosen[k], rows[k]);
  std::vector<size_t> ok;
  std::vector<CostTime> real;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!points[i].valid || points[i].row.status != "ok" || !(points[i].row.samples_per_s > 0)) continue;
    ok.push_back(i);
    real.push_back({cost_objective_value(s, points[i].costs), points[i].costs.time_to_train_s});
  }
  std::vector<size_t> front;
  for (size_t k : pareto_front(real)) front.push_back(ok[k]);

  auto point_json = [&](const Point& p, bool full) {
    nlohmann::json j{{"nodes", planner.nodes_json(p.mix)}, {"label", mix_label(s, p.mix)}, {"gpus", p.mix.gpus},
                     {"status", p.row.status}};
    if (!p.row.error.empty()) j["error"] = p.row.error;
    j["capex_usd"] = p.mix.capex_usd;
    j["rent_usd_per_hour"] = p.mix.rent_usd_per_s * 3600;
    j["power_kw"] = p.mix.power_w / 1e3;
    if (p.valid) j["estimated_samples_per_s"] = p.estimate;
    if (p.row.status == "ok") {
      const MixCosts& c = p.costs;
      j.update({{"samples_per_s", p.row.samples_per_s}, {"tokens_per_s", p.row.samples_per_s * needs.tokens_per_sample},
                {"iteration_time_s", p.row.iteration_time_s}, {"time_to_train_s", c.time_to_train_s}, {"cost_usd", c.cost_usd},
                {"rent_usd", c.rent_usd}, {"energy_kwh", c.energy_kwh}, {"energy_usd", c.energy_usd},
                {"cost_per_million_tokens_usd", c.cost_per_million_tokens_usd}, {"efficiency", p.row.efficiency},
                {"mfu", p.row.mfu}, {"strategy", p.row.report.value("strategy", "")}, {"shape", p.row.report.value("shape", "")}});
    }
    if (full) {
      j["cluster"] = planner.cluster_yaml(p.mix);
      j["plan"] = p.row.report.value("plan", std::string());
    }
    return j;
  };

  // Terminal: the front.
  std::cout << "\nPareto front: time to train against " << cost_label(s.cost_objective) << "\n";
  std::printf("%-34s %6s %12s %11s %12s %11s %10s %6s\n", "nodes", "GPUs", "cost", "samples/s", "time to train", "energy",
              "USD/Mtok", "eff.");
  for (size_t i : front) {
    const Point& p = points[i];
    std::printf("%-34s %6ld %12s %11.4g %12s %11s %10.4g %5.1f%%\n", mix_label(s, p.mix).c_str(), p.mix.gpus,
                format_money(p.costs.cost_usd).c_str(), p.row.samples_per_s, format_duration(p.costs.time_to_train_s).c_str(),
                (p.costs.energy_kwh >= 1e3 ? format_double("%.4g MWh", p.costs.energy_kwh / 1e3) : format_double("%.4g kWh", p.costs.energy_kwh)).c_str(), p.costs.cost_per_million_tokens_usd,
                100 * p.row.efficiency);
  }
  if (front.empty()) std::cout << "(empty: no planned mix was feasible)\n";
  size_t infeasible = 0, failed = 0;
  for (const Point& p : points) {
    infeasible += p.row.status == "infeasible";
    failed += p.row.status == "error";
  }
  std::cout << points.size() << " mix(es) planned and simulated: " << ok.size() << " feasible, " << infeasible << " infeasible, "
            << failed << " error(s); plans kept in " << planner.db_path() << "\n";
  std::cout << "estimates (to choose what to plan, never reported as results):\n";
  for (size_t i = 0; i < s.offers.size(); ++i) {
    std::cout << "  " << s.offers[i].name << ": " << format_double("%.4g", rates[i].samples_per_s_per_gpu) << " samples/s per GPU, "
              << rates[i].source << "\n";
  }

  nlohmann::json report{{"sizing", s.file},
                        {"name", s.name},
                        {"model", model.name},
                        {"objective", {"time_to_train", std::string(objective_name(s.cost_objective))}},
                        {"tolerance", a.tolerance},
                        {"max_plans", a.max_plans},
                        {"mixes_within_budget", mixes.size()},
                        {"mixes_without_memory", mixes.size() - held.size()},
                        {"mixes_promising", keep.size()},
                        {"mixes_planned", points.size()}};
  if (s.train_tokens > 0) report["train_tokens"] = s.train_tokens;
  else report["train_samples"] = s.train_samples;
  nlohmann::json budget = nlohmann::json::object();
  if (s.budget_capex_usd) budget["capex_usd"] = *s.budget_capex_usd;
  if (s.budget_rent_usd_per_s) budget["rent_usd_per_hour"] = *s.budget_rent_usd_per_s * 3600;
  if (s.budget_power_w) budget["power_kw"] = *s.budget_power_w / 1e3;
  report["budget"] = budget;
  report["offers"] = nlohmann::json::array();
  for (size_t i = 0; i < s.offers.size(); ++i) {
    const Offer& o = s.offers[i];
    nlohmann::json j{{"name", o.name}, {"gpu", o.gpu.name}, {"gpus_per_node", o.gpus_per_node}, {"power_kw", o.power_w / 1e3},
                     {"source", o.source}, {"max_count", o.max_count},
                     {"estimate", {{"samples_per_s_per_gpu", rates[i].samples_per_s_per_gpu}, {"source", rates[i].source}}}};
    if (o.price_usd) j["price_usd"] = *o.price_usd;
    if (o.rent_usd_per_s) j["rent_usd_per_hour"] = *o.rent_usd_per_s * 3600;
    if (!o.date.empty()) j["date"] = o.date;
    report["offers"].push_back(j);
  }
  report["assumptions"] = {
      "throughput, iteration time and efficiency: hetsim plan on each mix's cluster (simulated); time to train = the "
      "training's samples / simulated samples per second",
      "energy: the offers' node power at load x time to train (IT energy); bought nodes pay energy x PUE " +
          format_double("%.3g", s.pue) + " x " + format_double("%.4g USD/kWh", s.energy_usd_per_j * 3.6e6) +
          "; rented nodes' energy is in their rent",
      "cost per million tokens: capex x time to train / amortization (" + format_duration(s.amortization_s) +
          ") + energy cost + rent over the training, per million tokens trained",
      std::string("network: ") + (s.network_given ? "the sizing file's" : "default fat-tree, oversubscription 1, 1 us switches"),
      "which mixes are planned: a fast estimate (each offer's per-GPU throughput planned alone, summed; optimistic), pruned "
      "when another mix beats it by the tolerance; mixes never planned may be missing from the front"};
  report["pareto"] = nlohmann::json::array();
  for (size_t i : front) report["pareto"].push_back(point_json(points[i], true));
  report["evaluated"] = nlohmann::json::array();
  for (size_t i = 0; i < points.size(); ++i) {
    nlohmann::json j = point_json(points[i], false);
    j["on_front"] = std::find(front.begin(), front.end(), i) != front.end();
    j["reference"] = i < refs.size();
    report["evaluated"].push_back(j);
  }
  if (!a.report.empty()) {
    write_file(a.report, report.dump(2) + "\n", "--report");
    std::cout << "report: " << a.report << "\n";
  }
  if (!a.emit.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.emit, ec);
    for (size_t k = 0; k < front.size(); ++k) {
      const Point& p = points[front[k]];
      const std::string stem = (std::filesystem::path(a.emit) / ("front-" + std::to_string(k + 1))).string();
      write_file(stem + ".cluster.yaml", planner.cluster_yaml(p.mix), "--emit");
      write_file(stem + ".plan.yaml", p.row.report.value("plan", std::string()), "--emit");
    }
    std::cout << "front clusters and plans: " << a.emit << "/front-N.{cluster,plan}.yaml (hetsim simulate -c ... -m "
              << s.model << " --plan ...)\n";
  }
  if (!a.plot.empty() && ok.empty()) {
    std::cerr << "hetsim size --plot: no feasible planned mix to plot; " << a.plot << " not written\n";
  } else if (!a.plot.empty()) {
    std::string table = "label,cost,time_to_train_days,on_front\n";
    for (size_t i : ok) {
      const Point& p = points[i];
      table += csv_field(mix_label(s, p.mix)) + "," + format_double("%.17g", cost_objective_value(s, p.costs)) + "," +
               format_double("%.17g", p.costs.time_to_train_s / 86400) + "," +
               (std::find(front.begin(), front.end(), i) != front.end() ? "1" : "0") + "\n";
    }
    const int rc = run_plot_script("studies/sizing/plot_front.py", table, a.plot,
                                   {"--xlabel", cost_label(s.cost_objective), "--title", s.name + ": " + model.name},
                                   "hetsim size --plot", "the front itself (hetsim size without --plot)");
    if (rc != 0) return rc;
    std::cout << "plot: " << a.plot << "\n";
  }
  return 0;
}

}  // namespace hetsim::cli
