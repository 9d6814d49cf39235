// File: studies/sizing/sizing.cpp
#include "studies/sizing/sizing.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "base/input_error.hpp"
#include "base/text.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "base/units.hpp"
#include "studies/sizing/pareto.hpp"

namespace hetsim {

nlohmann::json mix_nodes_json(const Sizing& s, const Mix& m) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < s.offers.size(); ++i) {
    if (m.counts[i] > 0) j[s.offers[i].name] = m.counts[i];
  }
  return j;
}

std::string cost_label(Objective o) {
  switch (o) {
    case Objective::kCostPerToken: return "cost per million tokens (USD)";
    case Objective::kEnergy: return "energy (kWh)";
    case Objective::kCost:
    case Objective::kTimeToTrain: break;
  }
  return "cost (USD: capex + rent over the training)";
}

Goodput mix_goodput(const Sizing& s, const Mix& m, const ModelNeeds& needs) {
  if (!s.reliability) return Goodput{};
  return expected_goodput(*s.reliability, m.gpus, m.nodes, needs.checkpoint_bytes);
}

SizingRun run_sizing(const Sizing& s, const ModelSpec& model, const std::vector<Mix>& mixes, const SizingOptions& o,
                     const PlanMixes& plan, const std::function<void(const std::string&)>& say) {
  SizingRun run;
  run.needs = model_needs(model);
  const ModelNeeds& needs = run.needs;
  std::map<std::vector<long>, size_t> index;
  for (size_t i = 0; i < mixes.size(); ++i) index.emplace(mixes[i].counts, i);
  run.mixes = mixes.size();
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
  const std::vector<PlannedMix> ref_rows = plan(refs, "reference cluster(s)");
  std::vector<double> ref_rate(s.offers.size(), 0), ref_mfu(s.offers.size(), 0);
  for (size_t k = 0; k < refs.size(); ++k) {
    if (ref_rows[k].status == "ok") {
      ref_rate[ref_offer[k]] = ref_rows[k].samples_per_s;
      ref_mfu[ref_offer[k]] = ref_rows[k].mfu;
    }
  }
  run.rates = offer_rates(s, model, needs, ref_rate, ref_mfu, ref_nodes);

  // The fast estimate of every mix that can hold the model.
  std::vector<size_t> held;
  std::vector<CostTime> est;
  std::vector<bool> uncertain;
  std::vector<double> est_samples(mixes.size(), 0);
  for (size_t i = 0; i < mixes.size(); ++i) {
    if (!can_hold(s, mixes[i], needs)) continue;
    est_samples[i] = estimate_samples_per_s(s, mixes[i], run.rates);
    if (!(est_samples[i] > 0)) continue;
    const MixCosts c = costs_of(s, mixes[i], est_samples[i] * mix_goodput(s, mixes[i], needs).goodput, needs.tokens_per_sample);
    held.push_back(i);
    est.push_back({cost_objective_value(s, c), c.time_to_train_s});
    uncertain.push_back(cost_objective_depends_on_time(s, mixes[i]));
  }
  run.without_memory = mixes.size() - held.size();
  const std::vector<size_t> keep = not_surely_dominated(est, uncertain, o.tolerance);
  run.promising = keep.size();
  std::vector<size_t> unplanned;  // the references are planned already
  for (size_t k : keep) {
    if (std::none_of(refs.begin(), refs.end(), [&](const Mix& r) { return r.counts == mixes[held[k]].counts; })) unplanned.push_back(k);
  }
  std::vector<Mix> chosen;
  for (size_t k : spread_over_times(unplanned, est, static_cast<size_t>(o.max_plans))) chosen.push_back(mixes[held[k]]);
  say(std::to_string(run.without_memory) + " cannot hold the training state (" + format_bytes(needs.state_bytes) + ") in their GPUs' memory; " +
      std::to_string(keep.size()) + " of the rest may be on the front by the fast estimate (tolerance " +
      format_double("%.0f %%", 100 * o.tolerance) + "); planning " + std::to_string(chosen.size()) + " of them (--max-plans " +
      std::to_string(o.max_plans) + ") and " + std::to_string(refs.size()) + " reference(s)");
  const std::vector<PlannedMix> rows = plan(chosen, "mix(es) near the estimated front");

  // Every planned mix that is a mix of this sizing, with its costs.
  std::map<std::vector<long>, bool> seen;
  auto add = [&](const Mix& m, const PlannedMix& p) {
    if (seen[m.counts]) return;
    seen[m.counts] = true;
    SizingPoint pt{m, p, {}, mix_goodput(s, m, needs), 0, index.contains(m.counts)};
    if (pt.valid) pt.estimate = est_samples[index.at(m.counts)];
    if (pt.row.status == "ok" && pt.goodput.goodput < kMinGoodput) {  // failures leave it no time to train
      pt.row.status = "infeasible";
      pt.row.error = "failures and checkpoints leave " + format_double("%.3g", 100 * pt.goodput.goodput) +
                     " % of the wall time to training (job MTBF " + format_time(pt.goodput.mtbf_s) + ", checkpoint write " +
                     format_time(pt.goodput.checkpoint_s) + ", restart " + format_time(s.reliability->restart_s) + ")";
    }
    if (pt.row.status == "ok" && p.samples_per_s > 0) {
      pt.costs = costs_of(s, m, p.samples_per_s * pt.goodput.goodput, needs.tokens_per_sample);
    }
    run.points.push_back(std::move(pt));
  };
  for (size_t k = 0; k < refs.size(); ++k) add(refs[k], ref_rows[k]);
  run.references = run.points.size();
  for (size_t k = 0; k < chosen.size(); ++k) add(chosen[k], rows[k]);
  std::vector<CostTime> real;
  for (size_t i = 0; i < run.points.size(); ++i) {
    const SizingPoint& p = run.points[i];
    if (!p.valid || p.row.status != "ok" || !(p.row.samples_per_s > 0)) continue;
    run.feasible.push_back(i);
    real.push_back({cost_objective_value(s, p.costs), p.costs.time_to_train_s});
  }
  for (size_t k : pareto_front(real)) run.front.push_back(run.feasible[k]);
  return run;
}

std::string calibration_note(const Sizing& s, bool moe) {
  // The sizing's own flags may choose the profile for every plan: `none` leaves every type raw.
  for (size_t i = 0; i < s.flags.size(); ++i) {
    std::string chosen;
    if (s.flags[i] == "--calibration" && i + 1 < s.flags.size()) chosen = s.flags[i + 1];
    else if (s.flags[i].starts_with("--calibration=")) chosen = s.flags[i].substr(std::string("--calibration=").size());
    else continue;
    if (chosen == "none") return "";
    if (chosen == "shipped") break;
    // One profile on the types it lists, the raw model on the others: said where some are left raw.
    std::optional<CalibrationProfile> p;
    for (const CalibrationProfile& q : shipped_calibration_profiles()) {
      if (q.name == chosen) p = q;
    }
    try {
      if (!p) p = load_calibration_profile(chosen);
    } catch (const InputError&) {  // the flags' check says what is wrong with it
      return "";
    }
    std::set<std::string> with, without;
    for (const Offer& of : s.offers) (p->covers(of.gpu.name) ? with : without).insert(of.gpu.name);
    if (with.empty() || without.empty()) return "";
    return "calibration differs across the offers' GPU types (the flags' profile " + p->name + " on " +
           join(std::vector<std::string>(with.begin(), with.end())) + "; none (the raw model) on " +
           join(std::vector<std::string>(without.begin(), without.end())) + "): a raw type against a calibrated one is favoured by what the raw "
           "model leaves out (docs/what-if.md measures it for B200 against MI355X)";
  }
  // Per GPU type the profile in force ("" none) and its software era.
  std::map<std::string, std::pair<std::string, std::string>> by_gpu;
  for (const Offer& of : s.offers) {
    // A profile whose parameters do not move this kind of run (MoE host times, a dense model) leaves it raw.
    const std::optional<CalibrationProfile> p =
        of.gpu.calibration.empty() || !calibration_applying(of.gpu.name, moe) ? std::nullopt : calibration_for(of.gpu.name);
    by_gpu[of.gpu.name] = {p ? of.gpu.calibration : "", p ? p->era : ""};
  }
  bool raw = false, calibrated = false;
  std::set<std::string> eras;
  for (const auto& [gpu, state] : by_gpu) {
    (state.first.empty() ? raw : calibrated) = true;
    if (!state.first.empty()) eras.insert(state.second);
  }
  // Profiles of one era (each fitted on its own GPU's runs of one stack) compare like with like.
  if (!(raw && calibrated) && eras.size() < 2) return "";
  std::string each;
  for (const auto& [gpu, state] : by_gpu) {
    each += (each.empty() ? "" : "; ") + gpu + ": " + (state.first.empty() ? "none (the raw model)" : state.first);
  }
  std::string why;
  if (raw && calibrated) {
    why = "a raw type against a calibrated one is favoured by what the raw model leaves out (docs/what-if.md measures it for "
          "B200 against MI355X)";
  }
  if (eras.size() >= 2) why += std::string(why.empty() ? "" : "; ") + "profiles of different software eras compare the stacks as well as the hardware";
  return "calibration differs across the offers' GPU types (" + each + "): " + why;
}

nlohmann::json sizing_report_json(const Sizing& s, const ModelSpec& model, const SizingOptions& o, const SizingRun& run) {
  const ModelNeeds& needs = run.needs;
  // A report field as text: "" when the plan run left no report (or not an object).
  auto field = [](const nlohmann::json& report, const char* key) {
    return report.is_object() ? report.value(key, std::string()) : std::string();
  };
  auto point_json = [&](const SizingPoint& p, bool full) {
    nlohmann::json j{{"nodes", mix_nodes_json(s, p.mix)}, {"label", mix_label(s, p.mix)}, {"gpus", p.mix.gpus}, {"status", p.row.status}};
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
                {"mfu", p.row.mfu}, {"strategy", field(p.row.report, "strategy")}, {"shape", field(p.row.report, "shape")}});
      if (s.reliability) {
        j["goodput"] = {{"fraction", p.goodput.goodput}, {"mtbf_s", p.goodput.mtbf_s}, {"checkpoint_s", p.goodput.checkpoint_s},
                        {"checkpoint_interval_s", p.goodput.interval_s}, {"checkpoint_bytes", p.goodput.checkpoint_bytes}};
      }
    }
    if (full) {
      j["cluster"] = mix_cluster_yaml(s, p.mix.counts, s.name + "-" + mix_name(s, p.mix));
      j["plan"] = field(p.row.report, "plan");
    }
    return j;
  };
  nlohmann::json report{{"sizing", s.file},
                        {"name", s.name},
                        {"model", model.name},
                        {"objective", {"time_to_train", std::string(objective_name(s.cost_objective))}},
                        {"tolerance", o.tolerance},
                        {"max_plans", o.max_plans},
                        {"mixes_within_budget", run.mixes},
                        {"mixes_without_memory", run.without_memory},
                        {"mixes_promising", run.promising},
                        {"mixes_planned", run.points.size()}};
  if (s.train_tokens > 0) report["train_tokens"] = s.train_tokens;
  else report["train_samples"] = s.train_samples;
  nlohmann::json budget = nlohmann::json::object();
  if (s.budget_capex_usd) budget["capex_usd"] = *s.budget_capex_usd;
  if (s.budget_rent_usd_per_s) budget["rent_usd_per_hour"] = *s.budget_rent_usd_per_s * 3600;
  if (s.budget_power_w) budget["power_kw"] = *s.budget_power_w / 1e3;
  report["budget"] = budget;
  report["offers"] = nlohmann::json::array();
  for (size_t i = 0; i < s.offers.size(); ++i) {
    const Offer& of = s.offers[i];
    nlohmann::json j{{"name", of.name}, {"gpu", of.gpu.name}, {"gpus_per_node", of.gpus_per_node}, {"power_kw", of.power_w / 1e3},
                     {"source", of.source}, {"max_count", of.max_count}, {"count_step", of.count_step},
                     {"estimate", {{"samples_per_s_per_gpu", run.rates[i].samples_per_s_per_gpu}, {"source", run.rates[i].source}}}};
    if (of.price_usd) j["price_usd"] = *of.price_usd;
    if (of.rent_usd_per_s) j["rent_usd_per_hour"] = *of.rent_usd_per_s * 3600;
    if (!of.date.empty()) j["date"] = of.date;
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
  if (const std::string note = calibration_note(s, model.moe.has_value()); !note.empty()) report["assumptions"].push_back(note);
  if (s.reliability) {
    report["assumptions"].push_back("time to train with failures: simulated rate x expected goodput; " + reliability_assumption(*s.reliability));
  }
  report["pareto"] = nlohmann::json::array();
  for (size_t i : run.front) report["pareto"].push_back(point_json(run.points[i], true));
  report["evaluated"] = nlohmann::json::array();
  for (size_t i = 0; i < run.points.size(); ++i) {
    nlohmann::json j = point_json(run.points[i], false);
    j["on_front"] = std::find(run.front.begin(), run.front.end(), i) != run.front.end();
    j["reference"] = i < run.references;
    report["evaluated"].push_back(j);
  }
  return report;
}

}  // namespace hetsim
