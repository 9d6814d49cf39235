// File: cli/commands/plan_command.cpp
#include "cli/commands/plan_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "base/log.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/app.hpp"
#include "cli/common_args.hpp"
#include "cli/output/error_bars.hpp"
#include "cli/input_files.hpp"
#include "cli/output/summary.hpp"
#include "cli/commands/upper_bound.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/hybrid/megatron_args.hpp"
#include "planner/spmd/plan_file.hpp"
#include "planner/spmd/spmd_judge.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "sim/trace.hpp"

namespace hetsim::cli {

void add_plan_options(CLI::App* cmd, PlanArgs& a) {
  add_common(cmd, a.common);
  cmd->add_option("--emit-plan", a.emit_plan, "write the chosen plan here (hetsim simulate --plan reads it)")->check(output_file());
  cmd->add_option("--emit", a.emit, "megatron-args: print the chosen plan as the Megatron-LM / Megatron-Bridge arguments that run it")
      ->check(CLI::IsMember({"megatron-args"}));
  cmd->add_option("--candidates", a.candidates, "how many of the best programs to simulate")->check(CLI::Range(1, 20))->capture_default_str();
  cmd->add_option("--heuristic", a.heuristic, "A* heuristic (zero = HAP's uniform-cost search)")
      ->check(CLI::IsMember({"admissible", "zero"}))
      ->capture_default_str();
  cmd->add_option("--cost", a.cost, "planner cost model: barrier per step (HAP) or overlapped gradient sync")
      ->check(CLI::IsMember({"overlap", "barrier"}))
      ->capture_default_str();
  cmd->add_flag("--no-lp", a.no_lp, "keep shares proportional to device speed (no sharding-ratio LP)");
  cmd->add_flag("--no-sfb", a.no_sfb, "no sufficient factor broadcasting");
  cmd->add_flag("--no-grouped-collectives", a.no_grouped, "padded all-gathers only, no grouped broadcasts");
  cmd->add_flag("--no-memory-limit", a.no_memory_limit, "ignore device memory while planning (reported when exceeded)");
  cmd->add_flag("--no-pipeline", a.no_pipeline, "no hybrid plans (pipelines of stage meshes): SPMD programs only");
  cmd->add_flag("--no-upper-bound", a.no_upper_bound,
                 "skip the upper bound (planning each GPU type alone): no efficiency is reported");
  cmd->add_flag("--no-spmd", a.no_spmd, "no SPMD synthesis over the flat list of GPUs: hybrid plans only");
  cmd->add_flag("--uniform-layers", a.uniform_layers, "hybrid plans: equal layers per stage (no non-uniform split)");
  cmd->add_flag("--no-mixed-stages", a.no_mixed_stages, "hybrid plans: every stage on one GPU type");
  cmd->add_flag("--no-stage-synthesis", a.no_stage_synthesis,
                "hybrid plans: Megatron's TP in every stage (no A* + LP synthesis of the layer program)");
  cmd->add_flag("--no-cross-mesh", a.no_cross_mesh,
                "hybrid plans: Megatron's scatter-gather between stages (no broadcast resharding, no eager 1F1B)");
  cmd->add_flag("--no-sequence-parallel", a.no_sequence_parallel, "hybrid plans: never try Megatron's sequence parallelism");
  cmd->add_flag("--no-zero1", a.no_zero1, "hybrid plans: never try the distributed optimizer (ZeRO-1)");
  cmd->add_flag("--no-tp-overlap", a.no_tp_overlap,
                "hybrid plans: backward TP collectives never hidden under the weight-gradient GEMMs");
  cmd->add_flag("--no-moe-parallel", a.no_moe_parallel,
                "hybrid plans: never try expert parallelism (models with a moe: block: every GPU holds every expert)");
  cmd->add_flag("--no-context-parallel", a.no_context_parallel,
                "hybrid plans: never try context parallelism (tried from sequences of 8192 tokens up)");
  cmd->add_flag("--no-overlap", a.no_overlap,
                "hybrid plans: none of Megatron-Core's communication overlaps (gradient buckets sync after the last "
                "backward, ZeRO-1's parameter all-gather after the step, no TP overlap, no combined 1F1B for experts)");
  cmd->add_option("--schedule", a.schedule, "hybrid plans: only this pipeline schedule")->check(CLI::IsMember(schedule_names()));
}

int run_plan(const PlanArgs& a) {
  const CommonArgs& c = a.common;
  const Inputs in = load_inputs(c);
  check_outputs_apart(c, {{"--report", c.report}, {"--trace", c.trace}, {"--emit-plan", a.emit_plan}});
  // The search keeps per-GPU state for every candidate: a cluster beyond what it was built and
  // measured for is refused before the search (100 000 GPUs ended in bad_alloc); simulate runs any size.
  if (in.cluster.gpu_count() > kMaxPlanGpus) {
    throw InputError("cluster", "", "hetsim plan searches clusters of at most " + std::to_string(kMaxPlanGpus) + " GPUs; this one has " +
                     std::to_string(in.cluster.gpu_count()) + " (hetsim simulate runs a strategy or a plan on any number)");
  }
  const ModelSpec& model = in.model;
  const Cluster& cluster = in.cluster;
  const CostModel& cost = in.cost;
  const SimOptions& opts = in.sim;
  std::vector<std::string> notes = assumptions(model, cluster);

  SpmdPlanOptions ours;
  ours.lp = !a.no_lp;
  ours.search.heuristic = a.heuristic == "zero" ? Heuristic::kZero : Heuristic::kAdmissible;
  ours.search.cost = a.cost == "barrier" ? CostMode::kBarrier : CostMode::kOverlap;
  ours.search.sfb = !a.no_sfb;
  ours.search.grouped_collectives = !a.no_grouped;
  ours.search.memory_limit = !a.no_memory_limit;
  JudgedPlan plan, hap_plan;
  if (!a.no_spmd) {
    log_info("planning SPMD programs (A* search + sharding-ratio LP) and simulating the best " + std::to_string(a.candidates) + " ...");
    const auto t0 = std::chrono::steady_clock::now();
    const SpmdProblem problem = build_spmd_problem(model, cluster, cost);  // both modes plan it
    const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    plan = judge_spmd_problem(problem, model, cluster, cost, ours, a.candidates, opts, "hetsim");
    plan.plan_time_s += build_s;
    // HAP as released: uniform-cost search, barrier after every step, no memory model.
    SpmdPlanOptions hap;
    hap.search.heuristic = Heuristic::kZero;
    hap.search.cost = CostMode::kBarrier;
    hap.search.memory_limit = false;
    log_info("planning the HAP-faithful mode ...");
    hap_plan = judge_spmd_problem(problem, model, cluster, cost, hap, 1, opts, "hap-faithful");
    hap_plan.plan_time_s += build_s;
  }
  HybridSearch hybrid, hethub, megatron;
  if (!a.no_pipeline) {
    HybridPlanner planner(model, cluster, cost, opts);
    HybridOptions ho;
    ho.uniform_layers = a.uniform_layers;
    ho.mixed_stages = !a.no_mixed_stages;
    ho.stage_synthesis = !a.no_stage_synthesis;
    ho.cross_mesh = !a.no_cross_mesh;
    ho.sequence_parallel = !a.no_sequence_parallel;
    ho.zero1 = !a.no_zero1;
    ho.tp_comm_overlap = !a.no_tp_overlap && !a.no_overlap;
    ho.overlap = !a.no_overlap;
    ho.context_parallel = !a.no_context_parallel;
    ho.moe_parallel = !a.no_moe_parallel;
    ho.simulate = a.candidates;
    if (!a.schedule.empty()) ho.schedule = schedule_from_name(a.schedule);
    log_info("planning hybrid pipelines of stage meshes and simulating the best " + std::to_string(a.candidates) + " ...");
    hybrid = planner.search(HybridFlavour::kHetsim, ho);
    log_info("planning the HETHUB-faithful and Megatron-uniform modes ...");
    hethub = planner.search(HybridFlavour::kHethubFaithful, ho);
    megatron = planner.search(HybridFlavour::kMegatronUniform, ho);
  }

  std::vector<Evaluation> baselines;
  for (const std::string& s : strategy_names()) {
    log_info("simulating " + s + " ...");
    baselines.push_back(evaluate_strategy(s, model, cluster, cost, opts));
  }
  // The same bound `simulate` reports for any plan of this model on this cluster.
  const double bound = a.no_upper_bound ? 0 : upper_bound(model, cluster, cost, opts, notes);

  // Rows: SPMD candidates, hybrid candidates, then the comparison modes and baselines.
  std::vector<Report> rows;
  auto not_planned = [&rows](const std::string& strategy, const std::string& kind, const std::string& why) {
    Report r;
    r.strategy = strategy;
    r.kind = kind;
    r.feasible = false;
    r.infeasible_reason = why;
    rows.push_back(std::move(r));
  };
  for (const JudgedCandidate& j : plan.judged) rows.push_back(j.evaluation.report);
  if (!a.no_spmd && !plan.plan.found) {
    not_planned("hetsim", "spmd", "no SPMD program fits the devices' memory (" + std::to_string(plan.plan.search.expanded) + " states searched)");
  } else if (!a.no_spmd && plan.judged.empty() && plan.left_out > 0) {
    not_planned("hetsim", "spmd", "not simulated: the best SPMD program by estimate: " + plan.left_out_reason);
  }
  for (const JudgedHybrid& j : hybrid.judged) rows.push_back(j.evaluation.report);
  if (!a.no_pipeline && hybrid.judged.empty()) {
    not_planned("hetsim hybrid", "hybrid",
                hybrid.rejected_reason.empty()
                    ? "no pipeline plan fits the devices' memory (" + std::to_string(hybrid.considered) + " shapes fit by estimate)"
                    : std::to_string(hybrid.considered) + " pipeline plans fit memory by estimate; the best of them: " +
                          hybrid.rejected_reason);
  }
  const size_t first_baseline = rows.size();
  if (!hap_plan.judged.empty()) {
    rows.push_back(hap_plan.judged.front().evaluation.report);
  } else if (hap_plan.left_out > 0) {
    not_planned("hap-faithful", "spmd", "not simulated: the best program of this mode by estimate: " + hap_plan.left_out_reason);
  }
  if (!a.no_pipeline) {
    for (const auto& [h, name] : {std::pair{&hethub, "hethub-faithful"}, std::pair{&megatron, "megatron-uniform"}}) {
      if (!h->judged.empty()) {
        rows.push_back(h->judged.front().evaluation.report);
      } else {
        not_planned(name, "hybrid",
                    h->rejected_reason.empty() ? "no pipeline plan of this mode fits the devices' memory"
                                               : "the best pipeline plan of this mode by estimate: " + h->rejected_reason);
      }
    }
  }
  for (const Evaluation& b : baselines) rows.push_back(b.report);
  for (Report& r : rows) {
    r.assumptions = notes;
    if (r.feasible) set_upper_bound(r, bound);
  }
  print_header(std::cout, model, cluster, model.training.global_batch, model.training.micro_batch);  // only now: a rejected input prints its message alone
  print_strategy_table(std::cout, rows, cluster);

  // The chosen plan: the smallest simulated time among hetsim's own candidates.
  const Evaluation* chosen = nullptr;
  MegatronArgs exported{"", "no plan was chosen"};  // --emit megatron-args
  const SpmdCandidate* chosen_spmd = nullptr;
  const HybridPlan* chosen_hybrid = nullptr;
  size_t candidates = plan.judged.size() + hybrid.judged.size();
  if (plan.chosen >= 0) {
    chosen = &plan.judged[plan.chosen].evaluation;
    chosen_spmd = &plan.judged[plan.chosen].candidate;
  }
  if (hybrid.chosen >= 0) {
    const Evaluation& h = hybrid.judged[hybrid.chosen].evaluation;
    if (chosen == nullptr || h.report.iteration_time_s < chosen->report.iteration_time_s) {
      chosen = &h;
      chosen_spmd = nullptr;
      chosen_hybrid = &hybrid.judged[hybrid.chosen].plan;
    }
  }
  if (chosen != nullptr) {
    Report best = chosen->report;
    best.assumptions = notes;
    set_upper_bound(best, bound);
    std::cout << "\nchosen: " << best.strategy << " (smallest simulated time of " << candidates << " candidates)\n\n";
    if (chosen_spmd != nullptr) {
      print_spmd_plan(std::cout, plan.problem, *chosen_spmd, cluster);
    } else {
      print_hybrid_plan(std::cout, *chosen_hybrid, cluster);
    }
    if (!a.no_spmd) print_search_stats(std::cout, plan.plan, plan.plan_time_s, a.heuristic);
    if (!a.no_spmd && plan.left_out > 0) {
      std::cout << "SPMD candidates left out, too large to simulate: " << plan.left_out << " (the best: " << plan.left_out_reason << ")\n";
    }
    if (!a.no_pipeline) {
      std::cout << "hybrid search: " << hybrid.considered << " plans fit memory by estimate, " << hybrid.judged.size()
                << " simulated; took " << format_time(hybrid.plan_time_s) << "\n";
    }
    std::cout << "\n";
    print_run_summary(std::cout, best, cluster);
    if (a.emit == "megatron-args") {
      const MegatronArgs m = chosen_hybrid != nullptr ? megatron_args(*chosen_hybrid, model, cluster)
                                                      : MegatronArgs{"", "it is an SPMD program, not a pipeline of Megatron stages"};
      std::cout << "\nmegatron-lm arguments of the chosen plan: "
                << (m.args.empty() ? "none: " + m.why_not : "\n  " + m.args + "\n  (the model's own arguments, its "
                                                                             "architecture and tokenizer, come from its recipe)")
                << "\n";
      exported = m;
    }
  } else {
    std::cout << "\nno synthesised program fits this model on this cluster\n";
  }
  // (said on stderr too, after the report is written: the exit code is kExitInfeasible; with
  // --no-spmd and --no-pipeline nothing of hetsim's own was asked for, only the baselines)
  const bool asked = !a.no_spmd || !a.no_pipeline;
  const std::string nothing_fits = chosen != nullptr || !asked ? "" : "no synthesised program fits this model on this cluster" +
                                                                (rows.empty() || rows.front().feasible ? std::string()
                                                                                                       : "; " + rows.front().strategy + ": " + rows.front().infeasible_reason);
  print_assumptions(std::cout, notes);

  nlohmann::json j = chosen != nullptr ? chosen->report.to_json() : rows.front().to_json();
  if (chosen != nullptr) j["error_bars"] = error_bars_json(chosen->report, cluster);
  if (chosen != nullptr) {
    if (bound > 0) {
      j["upper_bound_samples_per_s"] = bound;
      j["efficiency"] = chosen->report.samples_per_s / bound;
    }
    j["assumptions"] = notes;
  }
  j["candidates"] = nlohmann::json::array();
  auto candidate_row = [&](const Report& r, double estimate_s) {
    nlohmann::json e{{"strategy", r.strategy}, {"kind", r.kind}, {"estimated_s", estimate_s}, {"feasible", r.feasible}};
    if (!r.shape.empty()) e["shape"] = r.shape;
    if (r.feasible) e["simulated_s"] = r.iteration_time_s;
    else e["infeasible_reason"] = r.infeasible_reason;
    j["candidates"].push_back(e);
  };
  for (const JudgedCandidate& jc : plan.judged) candidate_row(jc.evaluation.report, jc.candidate.estimate_s);
  for (const JudgedHybrid& jh : hybrid.judged) candidate_row(jh.evaluation.report, jh.plan.estimate_s);
  j["baselines"] = nlohmann::json::array();
  for (size_t i = first_baseline; i < rows.size(); ++i) {
    const Report& r = rows[i];
    nlohmann::json b{{"strategy", r.strategy}, {"kind", r.kind}, {"feasible", r.feasible}};
    if (r.feasible) {
      b["simulated_s"] = r.iteration_time_s;
      b["samples_per_s"] = r.samples_per_s;
      if (bound > 0) b["efficiency"] = r.samples_per_s / bound;
    } else {
      b["infeasible_reason"] = r.infeasible_reason;
    }
    if (r.estimated_s > 0) b["estimated_s"] = r.estimated_s;
    if (!r.shape.empty()) b["shape"] = r.shape;
    j["baselines"].push_back(b);
  }
  j["plan_time_s"] = plan.plan_time_s + hybrid.plan_time_s;
  if (!a.no_spmd) {
    j["search"] = {{"states_expanded", plan.plan.search.expanded}, {"states_generated", plan.plan.search.generated},
                   {"search_s", plan.plan.search.seconds}, {"lp_s", plan.plan.lp_seconds}, {"rounds", plan.plan.rounds},
                   {"left_out", plan.left_out}};
    if (plan.left_out > 0) j["search"]["left_out_reason"] = plan.left_out_reason;
  }
  if (!a.no_pipeline) j["hybrid_search"] = {{"plans_fitting", hybrid.considered}, {"simulated", hybrid.judged.size()},
                                            {"search_s", hybrid.plan_time_s}};
  if (a.emit == "megatron-args") j[exported.args.empty() ? "megatron_args_unavailable" : "megatron_args"] =
      exported.args.empty() ? exported.why_not : exported.args;
  write_json(c.report, j, "--report");
  if (!c.trace.empty() && chosen != nullptr) write_json(c.trace, chrome_trace(chosen->program, cluster, chosen->result), "--trace");
  if (!a.emit_plan.empty() && chosen != nullptr) {
    if (chosen_spmd != nullptr) {
      const PlanFile pf{model.name, cluster.name, ours.search, *chosen_spmd};
      write_file(a.emit_plan, plan_to_yaml(pf, plan.problem), "--emit-plan");
    } else {
      write_file(a.emit_plan, hybrid_plan_to_yaml(*chosen_hybrid), "--emit-plan");
    }
  }
  if (!nothing_fits.empty()) {
    std::cout.flush();
    std::cerr << "hetsim: infeasible: " << printable(nothing_fits) << "\n";
    return kExitInfeasible;
  }
  return 0;
}

}  // namespace hetsim::cli
