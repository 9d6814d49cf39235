// File: cli/commands/plan_command.cpp
#include "cli/commands/plan_command.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

#include "base/text.hpp"
#include "cli/app.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "cli/output/goodput_summary.hpp"
#include "cli/output/summary.hpp"
#include "planner/hybrid/megatron_args.hpp"
#include "planner/planner.hpp"
#include "sim/trace.hpp"
#include "studies/validation/error_bars.hpp"
#include "studies/validation/mfu_ceiling.hpp"

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
  cmd->add_option("--moe-dispatcher", a.moe_dispatcher,
                  "hybrid plans with experts split: only this token dispatcher (alltoall, allgather, flex)")
      ->check(CLI::IsMember(moe_dispatcher_names()));
  cmd->add_option("--keep-plan", a.keep_plan,
                  "a plan (hetsim plan --emit-plan) simulated beside the candidates and chosen where it is the fastest, so "
                  "a what-if that re-plans never loses it to the search; one for another model, cluster or batch is said and left out")
      ->check(CLI::ExistingFile);
}

namespace {

PlannerOptions planner_options(const PlanArgs& a) {
  PlannerOptions o;
  o.spmd = !a.no_spmd;
  o.spmd_options.lp = !a.no_lp;
  o.spmd_options.search.heuristic = a.heuristic == "zero" ? Heuristic::kZero : Heuristic::kAdmissible;
  o.spmd_options.search.cost = a.cost == "barrier" ? CostMode::kBarrier : CostMode::kOverlap;
  o.spmd_options.search.sfb = !a.no_sfb;
  o.spmd_options.search.grouped_collectives = !a.no_grouped;
  o.spmd_options.search.memory_limit = !a.no_memory_limit;
  o.pipeline = !a.no_pipeline;
  HybridOptions& ho = o.hybrid;
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
  if (!a.schedule.empty()) ho.schedule = schedule_from_name(a.schedule);
  if (!a.moe_dispatcher.empty()) ho.moe_dispatcher = moe_dispatcher_from_name(a.moe_dispatcher);
  ho.micro_batch = a.common.micro_batch;  // given: the hybrid plans' too, not only the model's
  o.candidates = a.candidates;
  o.upper_bound = !a.no_upper_bound;
  o.keep_plan = a.keep_plan;
  return o;
}

}  // namespace

int run_plan(const PlanArgs& a) {
  const CommonArgs& c = a.common;
  const Inputs in = load_inputs(c);
  check_outputs_apart(c, {{"--report", c.report}, {"--trace", c.trace}, {"--emit-plan", a.emit_plan}}, {{"--keep-plan", a.keep_plan}});
  const Cluster& cluster = in.cluster;
  const PlannerOptions options = planner_options(a);
  const PlanResult r = plan(in.model, cluster, in.cost, in.sim, options);
  // only now: a rejected input prints its message alone
  print_header(std::cout, in.model, cluster, in.model.training.global_batch, in.model.training.micro_batch);
  print_strategy_table(std::cout, r.rows, cluster);
  const Evaluation* chosen = r.chosen();
  MegatronArgs exported{"", "no plan was chosen"};  // --emit megatron-args
  nlohmann::json goodput;                             // --reliability
  nlohmann::json mfu_published;                       // the highest MFU published for these GPUs
  if (chosen != nullptr) {
    const Report best = r.chosen_report();
    print_plan_choice(std::cout, r, cluster);
    std::cout << "\n";
    print_run_summary(std::cout, best, cluster);
    mfu_published = check_mfu(std::cout, best, in.model, cluster);
    if (c.reliability) goodput = print_goodput(std::cout, best, in.model, cluster);
    if (a.emit == "megatron-args") {
      exported = r.chosen_hybrid() != nullptr ? megatron_args(*r.chosen_hybrid(), in.model, cluster)
                                              : MegatronArgs{"", "it is an SPMD program, not a pipeline of Megatron stages"};
      print_megatron_args(std::cout, exported);
    }
  } else {
    std::cout << "\nno synthesised program fits this model on this cluster\n";
  }
  print_assumptions(std::cout, r.notes);

  nlohmann::json j = r.to_json();
  if (chosen != nullptr) j["error_bars"] = error_bars_json(chosen->report, cluster);
  if (!goodput.empty()) j["goodput"] = goodput;
  if (chosen != nullptr) j["mfu_published"] = mfu_published;  // null: no published figure for these GPUs
  if (a.emit == "megatron-args") j[exported.args.empty() ? "megatron_args_unavailable" : "megatron_args"] =
      exported.args.empty() ? exported.why_not : exported.args;
  write_json(c.report, j, "--report");
  if (!c.trace.empty() && chosen != nullptr) {
    write_file_with(c.trace, "--trace", [&](std::ostream& out) { write_chrome_trace(out, chosen->program, cluster, chosen->result); });
  }
  if (!a.emit_plan.empty() && chosen != nullptr) {
    write_file(a.emit_plan, emitted_plan(r, in.model, cluster, options), "--emit-plan");
  }
  if (!r.nothing_fits.empty()) {  // said on stderr too, after the report is written
    std::cout.flush();
    std::cerr << "hetsim: infeasible: " << printable(r.nothing_fits) << "\n";
    return kExitInfeasible;
  }
  return 0;
}

}  // namespace hetsim::cli
