// File: planner/planner.cpp
#include "planner/planner.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <optional>

#include "base/input_error.hpp"
#include "base/log.hpp"
#include "base/yaml_reader.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_reference.hpp"
#include "planner/spmd/plan_file.hpp"

namespace hetsim {

namespace {

// The node type of every GPU, in cluster order (an SPMD plan file's node_types).
std::vector<std::string> gpu_node_types(const Cluster& c) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(c.gpu_count()));
  for (int g = 0; g < c.gpu_count(); ++g) out.push_back(c.node_type_of_gpu(g).name);
  return out;
}

const char* const kUpperBoundNote =
    "upper bound: each GPU type at its best per-GPU throughput on a homogeneous cluster of its own nodes (data-parallel "
    "strategies, SPMD synthesis and hybrid plans; the same for plan and simulate, whatever planner switches a run turns off)";
}  // namespace

double plan_upper_bound(const ModelSpec& model, const Cluster& cluster, const CostModel& cost, const SimOptions& options,
                        std::vector<std::string>& notes, int direct_max_gpus) {
  // A reference is never traced: its flows are not kept, and a traced run (--trace) shares the
  // cached references of one that is not.
  SimOptions sim = options;
  sim.record_flows = false;
  const ReferencePlanner reference = [&](const ModelSpec& m, const Cluster& sub) {
    HybridReference h = hybrid_reference(m, sub, cost, sim);
    PlannerReference r{h.samples_per_s, nullptr};
    if (h.plan) {
      r.weak_scaling = [m, &sub, plan = std::move(*h.plan), leading = std::move(h.leading), &cost, &sim](const Cluster& larger) {
        return hybrid_weak_scaling(m, sub, plan, leading, larger, cost, sim);
      };
    }
    return r;
  };
  notes.push_back(kUpperBoundNote);
  // Each reference once per machine and build: the user's cache keeps them (base/disk_cache.hpp).
  const DiskCache cache = DiskCache::user("upper-bound");
  return upper_bound_samples_per_s(model, cluster, cost, sim, notes, /*synthesise=*/true, reference, &cache, "the hybrid planner",
                                   direct_max_gpus);
}

namespace {

// The rows every plan run reports: hetsim's SPMD and hybrid candidates (or why there are none),
// then the comparison modes and the baselines, each with the bound and the assumptions.
void collect_rows(PlanResult& r, const PlannerOptions& o) {
  auto not_planned = [&r](const std::string& strategy, const std::string& kind, const std::string& why) {
    Report row;
    row.strategy = strategy;
    row.kind = kind;
    row.feasible = false;
    row.infeasible_reason = why;
    r.rows.push_back(std::move(row));
  };
  for (const JudgedCandidate& j : r.spmd.judged) r.rows.push_back(j.evaluation.report);
  if (o.spmd && !r.spmd.plan.found) {
    not_planned("hetsim", "spmd", "no SPMD program fits the devices' memory (" + std::to_string(r.spmd.plan.search.expanded) + " states searched)");
  } else if (o.spmd && r.spmd.judged.empty() && r.spmd.left_out > 0) {
    not_planned("hetsim", "spmd", "not simulated: the best SPMD program by estimate: " + r.spmd.left_out_reason);
  }
  for (const JudgedHybrid& j : r.hybrid.judged) r.rows.push_back(j.evaluation.report);
  if (o.pipeline && r.hybrid.judged.empty()) {
    not_planned("hetsim hybrid", "hybrid",
                r.hybrid.rejected_reason.empty()
                    ? "no pipeline plan fits the devices' memory (" + std::to_string(r.hybrid.considered) + " shapes fit by estimate)"
                    : std::to_string(r.hybrid.considered) + " pipeline plans fit memory by estimate; the best of them: " +
                          r.hybrid.rejected_reason);
  }
  r.first_baseline = r.rows.size();
  if (!r.hap.judged.empty()) {
    r.rows.push_back(r.hap.judged.front().evaluation.report);
  } else if (r.hap.left_out > 0) {
    not_planned("hap-faithful", "spmd", "not simulated: the best program of this mode by estimate: " + r.hap.left_out_reason);
  }
  if (o.pipeline) {
    for (const auto& [h, name] : {std::pair{&r.hethub, "hethub-faithful"}, std::pair{&r.megatron, "megatron-uniform"}}) {
      if (!h->judged.empty()) {
        r.rows.push_back(h->judged.front().evaluation.report);
      } else {
        not_planned(name, "hybrid",
                    h->rejected_reason.empty() ? "no pipeline plan of this mode fits the devices' memory"
                                               : "the best pipeline plan of this mode by estimate: " + h->rejected_reason);
      }
    }
  }
  for (const Evaluation& b : r.baselines) r.rows.push_back(b.report);
  for (Report& row : r.rows) {
    row.assumptions = r.notes;
    if (row.feasible) set_upper_bound(row, r.bound);
  }
}

// The kept plan simulated on this cluster as one more of hetsim's candidates ("kept plan"), after
// the searches' own. A plan that does not load here (made for other GPUs or another model) is said
// in the report and left out; the search's candidates compete alone.
void keep_plan(PlanResult& r, const std::string& file, const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
               const SimOptions& sim) {
  KeptPlan k;
  k.file = file;
  log_info("simulating the kept plan " + file + " ...");
  try {
    PlanFileRun run = run_plan_file(file, model, cluster, cost, sim, "kept plan", r.spmd_run ? &r.spmd.problem : nullptr,
                                  /*estimate_here=*/true);
    const Report& kept = run.evaluation.report;
    const auto faster = [&](const auto& judged, int chosen) {
      return kept.feasible &&
             (chosen < 0 || simulated_faster(kept.iteration_time_s, judged[static_cast<size_t>(chosen)].evaluation.report.iteration_time_s));
    };
    k.applies = kept.feasible;
    k.why_not = kept.feasible ? "" : kept.infeasible_reason;
    k.iteration_time_s = kept.iteration_time_s;
    k.samples_per_s = kept.samples_per_s;
    if (run.hybrid) {
      const bool best = faster(r.hybrid.judged, r.hybrid.chosen);
      r.hybrid.judged.push_back({std::move(*run.hybrid), std::move(run.evaluation)});
      if (best) r.hybrid.chosen = static_cast<int>(r.hybrid.judged.size() - 1);
    } else {
      const bool best = faster(r.spmd.judged, r.spmd.chosen);
      if (!r.spmd_run) r.spmd.problem = std::move(run.problem);
      r.spmd.judged.push_back({std::move(*run.spmd), std::move(run.evaluation)});
      if (best) r.spmd.chosen = static_cast<int>(r.spmd.judged.size() - 1);
    }
  } catch (const InputError& e) {
    // A file that is not a well-formed plan is bad input; a plan for another model or cluster (or
    // batch) only does not apply here.
    for (const Diagnostic& d : e.diagnostics()) {
      if (is_format_error(d.message)) throw;
    }
    k.why_not = e.diagnostics().front().message;
  }
  r.notes.push_back(k.applies ? "kept plan: " + file + " simulated beside the search's candidates (a what-if keeps its baseline's plan)"
                              : "kept plan: " + file + " does not apply here (" + k.why_not + "); the search's candidates compete alone");
  r.kept = std::move(k);
}

}  // namespace

// On one node type with every planner switch at its default, the upper bound's references
// (upper_bound_samples_per_s: the data-parallel strategies, SPMD synthesis and the hybrid planner,
// each simulating its best candidate by estimate, on a cluster of that type alone) are this run's
// own: the same searches on the same GPUs, whose first judged candidates are the ones the
// references would simulate again. The same bound, computed as it does; empty where a switch, a
// batch, a rejection or no feasible reference could make them differ (then they are planned).
std::optional<double> own_references_bound(const PlanResult& r, const PlannerOptions& o, const ModelSpec& model,
                                           const Cluster& cluster) {
  HybridOptions hybrid = o.hybrid;
  hybrid.simulate = HybridOptions{}.simulate;
  // The reference's hybrid search simulates one candidate: it gives up after 2 x 1 + 2 rejections.
  constexpr long kReferenceRejections = 4;
  if (cluster.node_types.size() != 1 || !o.spmd || !o.pipeline || o.candidates < 1 || !(o.spmd_options == SpmdPlanOptions{}) ||
      !(hybrid == HybridOptions{}) || model.training.micro_batch > model.training.global_batch ||
      r.hybrid.rejected > kReferenceRejections) {
    return std::nullopt;
  }
  // A type the bound derives from a stand-in (more than kReferenceDirectMaxGpus GPUs) is not
  // planned on all its GPUs there: this run's searches are not its references.
  if (reference_stand_in(cluster, model.training.global_batch).has_value()) return std::nullopt;
  const int nt = cluster.gpu_count();
  double best = 0;
  for (const Evaluation& b : r.baselines) {
    if (b.report.feasible) best = std::max(best, b.report.samples_per_s / nt);
  }
  if (!r.spmd.judged.empty() && r.spmd.judged.front().evaluation.report.feasible) {
    best = std::max(best, r.spmd.judged.front().evaluation.report.samples_per_s / nt);
  }
  if (!r.hybrid.judged.empty()) best = std::max(best, r.hybrid.judged.front().evaluation.report.samples_per_s / nt);
  if (best == 0) return std::nullopt;  // the compute-only fallback, with its note: as planned
  return best * nt;
}

std::string emitted_plan(const PlanResult& r, const ModelSpec& model, const Cluster& cluster, const PlannerOptions& o) {
  if (r.chosen_spmd() != nullptr) {
    return plan_to_yaml(PlanFile{model.name, cluster.name, o.spmd_options.search, *r.chosen_spmd(), gpu_node_types(cluster)},
                        r.spmd.problem);
  }
  return r.chosen_hybrid() != nullptr ? hybrid_plan_to_yaml(*r.chosen_hybrid(), &cluster) : std::string();
}

void check_kept_plan_file(const std::string& path, const ModelSpec& model, const Cluster& cluster, const CostModel& cost) {
  // A file that is no plan at all (not YAML, not a map of a plan's fields, an unknown or missing
  // field) is bad input; a plan that does not fit this model, cluster or batch is only said (a
  // what-if keeps its baseline's plan), when it is simulated beside the search's candidates.
  if (!YamlFile::load(path).tree().IsMap()) {
    throw InputError(path, "", "is not a plan file: its top level is not a map of a plan's fields (docs/formats/hybrid-plan.md, spmd-plan.md)");
  }
  try {
    check_plan_file(path, model, cluster, cost);
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) {
      if (is_format_error(d.message)) throw;
    }
  }
}

namespace {

// An SPMD plan file read against the problem it was written for: today's, or, where its operators
// are those of every GPU on the unfused attention path (plans hetsim wrote before 2026-12-04 for
// clusters mixing GPUs with and without a fused attention kernel), that one, said on stderr. Which
// one: the operators only one of the two problems has, counted among the names the file gives.
PlanFile load_spmd_plan_file(const std::string& path, const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                             SpmdProblem& problem) {
  SpmdProblem unfused = build_spmd_problem(model, cluster, cost, MixedAttention::kUnfusedEverywhere);
  if (unfused.ops.size() != problem.ops.size()) {
    // Every `name:` value of the file, at any depth, walked with a stack of its own: the file's
    // nesting is the user's, so no recursion over it.
    std::set<std::string> given;
    std::vector<YAML::Node> pending{YamlFile::load(path).tree()};
    while (!pending.empty()) {
      const YAML::Node node = pending.back();
      pending.pop_back();
      if (node.IsMap()) {
        for (const auto& kv : node) {
          if (kv.first.IsScalar() && kv.first.Scalar() == "name" && kv.second.IsScalar()) given.insert(kv.second.Scalar());
          pending.push_back(kv.second);
        }
      } else if (node.IsSequence()) {
        for (const auto& item : node) pending.push_back(item);
      }
    }
    std::set<std::string> today, before;
    for (const SpmdOp& op : problem.ops) today.insert(op.name);
    for (const SpmdOp& op : unfused.ops) before.insert(op.name);
    const auto only = [&](const std::set<std::string>& in_this, const std::set<std::string>& not_in) {
      return std::count_if(given.begin(), given.end(), [&](const std::string& n) { return in_this.contains(n) && !not_in.contains(n); });
    };
    if (only(before, today) > only(today, before)) {
      log_info(path + ": its operators are those of every GPU on the unfused attention path (SPMD plans hetsim wrote "
               "before 2026-12-04 for clusters that mix GPUs with and without a fused attention kernel): read and "
               "simulated as written; plan again for each GPU type's own attention kernel");
      problem = std::move(unfused);
    }
  }
  return load_plan(path, problem, model.name, cluster.name, gpu_node_types(cluster));
}

}  // namespace

void check_plan_file(const std::string& path, const ModelSpec& model, const Cluster& cluster, const CostModel& cost) {
  if (plan_file_kind(path) == "hybrid") {
    (void)load_hybrid_plan(path, model, cluster);
  } else {
    SpmdProblem problem = build_spmd_problem(model, cluster, cost);
    (void)load_spmd_plan_file(path, model, cluster, cost, problem);
  }
}

PlanFileRun run_plan_file(const std::string& path, const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                          const SimOptions& sim, const std::string& strategy, const SpmdProblem* problem, bool estimate_here) {
  PlanFileRun run;
  if (plan_file_kind(path) == "hybrid") {
    HybridPlan plan = load_hybrid_plan(path, model, cluster);
    HybridPlanner planner(model, cluster, cost, sim);
    if (estimate_here) plan.estimate_s = planner.estimate(plan).time_s;
    run.evaluation = planner.evaluate(plan, strategy);
    run.hybrid = std::move(plan);
    return run;
  }
  run.problem = problem != nullptr ? *problem : build_spmd_problem(model, cluster, cost);
  const PlanFile plan = load_spmd_plan_file(path, model, cluster, cost, run.problem);
  run.evaluation = evaluate_candidate(run.problem, plan.candidate, model, cluster, cost, plan.options, sim, strategy);
  run.spmd = plan.candidate;
  return run;
}

PlanResult plan(const ModelSpec& model, const Cluster& cluster, const CostModel& cost, const SimOptions& sim,
                const PlannerOptions& o) {
  // The search keeps per-GPU state for every candidate: a cluster beyond what it was built and
  // measured for is refused before the search (100 000 GPUs ended in bad_alloc).
  if (cluster.gpu_count() > kMaxPlanGpus) {
    throw InputError("cluster", "", "hetsim plan searches clusters of at most " + std::to_string(kMaxPlanGpus) + " GPUs; this one has " +
                     std::to_string(cluster.gpu_count()) + " (hetsim simulate runs a strategy or a plan on any number)");
  }
  if (!o.keep_plan.empty()) check_kept_plan_file(o.keep_plan, model, cluster, cost);  // before the searches: fail fast
  PlanResult r;
  r.notes = assumptions(model, cluster, cost, sim.collective_interference);
  r.heuristic = o.spmd_options.search.heuristic == Heuristic::kZero ? "zero" : "admissible";
  r.spmd_run = o.spmd;
  r.pipeline_run = o.pipeline;
  if (o.spmd) {
    log_info("planning SPMD programs (A* search + sharding-ratio LP) and simulating the best " + std::to_string(o.candidates) + " ...");
    const auto t0 = std::chrono::steady_clock::now();
    const SpmdProblem problem = build_spmd_problem(model, cluster, cost);  // both modes plan it
    const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.spmd = judge_spmd_problem(problem, model, cluster, cost, o.spmd_options, o.candidates, sim, "hetsim");
    r.spmd.plan_time_s += build_s;
    // HAP as released: uniform-cost search, barrier after every step, no memory model.
    SpmdPlanOptions hap;
    hap.search.heuristic = Heuristic::kZero;
    hap.search.cost = CostMode::kBarrier;
    hap.search.memory_limit = false;
    log_info("planning the HAP-faithful mode ...");
    r.hap = judge_spmd_problem(problem, model, cluster, cost, hap, 1, sim, "hap-faithful");
    r.hap.plan_time_s += build_s;
  }
  if (o.pipeline) {
    HybridPlanner planner(model, cluster, cost, sim);
    HybridOptions ho = o.hybrid;
    ho.simulate = o.candidates;
    log_info("planning hybrid pipelines of stage meshes and simulating the best " + std::to_string(o.candidates) + " ...");
    r.hybrid = planner.search(HybridFlavour::kHetsim, ho);
    log_info("planning the HETHUB-faithful and Megatron-uniform modes ...");
    std::vector<HybridSearch> modes = planner.search({HybridFlavour::kHethubFaithful, HybridFlavour::kMegatronUniform}, ho);
    r.hethub = std::move(modes[0]);
    r.megatron = std::move(modes[1]);
  }
  for (const std::string& s : strategy_names()) {
    log_info("simulating " + s + " ...");
    r.baselines.push_back(evaluate_strategy(s, model, cluster, cost, sim));
  }
  // The same bound `simulate` reports for any plan of this model on this cluster.
  if (o.upper_bound) {
    if (const std::optional<double> own = own_references_bound(r, o, model, cluster)) {
      r.bound = *own;
      r.notes.push_back(kUpperBoundNote);
    } else {
      r.bound = plan_upper_bound(model, cluster, cost, sim, r.notes);
    }
  }
  if (!o.keep_plan.empty()) keep_plan(r, o.keep_plan, model, cluster, cost, sim);
  collect_rows(r, o);
  // The chosen plan: the smallest simulated time among hetsim's own candidates.
  if (r.spmd.chosen >= 0) r.chosen_kind = PlanResult::Chosen::kSpmd;
  if (r.hybrid.chosen >= 0 && (r.chosen_kind == PlanResult::Chosen::kNone ||
                               simulated_faster(r.hybrid.judged[r.hybrid.chosen].evaluation.report.iteration_time_s,
                                                r.spmd.judged[r.spmd.chosen].evaluation.report.iteration_time_s))) {
    r.chosen_kind = PlanResult::Chosen::kHybrid;
  }
  if (r.kept && r.kept->applies) {
    const Evaluation* c = r.chosen();
    r.kept->chosen = c != nullptr && c->report.strategy == "kept plan";
  }
  // With --no-spmd and --no-pipeline nothing of hetsim's own was asked for, only the baselines.
  if (r.chosen_kind == PlanResult::Chosen::kNone && (o.spmd || o.pipeline)) {
    r.nothing_fits = "no synthesised program fits this model on this cluster" +
                     (r.rows.empty() || r.rows.front().feasible ? std::string() : "; " + r.rows.front().strategy + ": " + r.rows.front().infeasible_reason);
  }
  return r;
}

const Evaluation* PlanResult::chosen() const {
  switch (chosen_kind) {
    case Chosen::kSpmd: return &spmd.judged[spmd.chosen].evaluation;
    case Chosen::kHybrid: return &hybrid.judged[hybrid.chosen].evaluation;
    case Chosen::kNone: break;
  }
  return nullptr;
}

const SpmdCandidate* PlanResult::chosen_spmd() const {
  return chosen_kind == Chosen::kSpmd ? &spmd.judged[spmd.chosen].candidate : nullptr;
}

const HybridPlan* PlanResult::chosen_hybrid() const {
  return chosen_kind == Chosen::kHybrid ? &hybrid.judged[hybrid.chosen].plan : nullptr;
}

Report PlanResult::chosen_report() const {
  const Evaluation* c = chosen();
  if (c == nullptr) return rows.empty() ? Report{} : rows.front();
  Report best = c->report;
  best.assumptions = notes;
  set_upper_bound(best, bound);
  return best;
}

nlohmann::json PlanResult::to_json() const {
  const Evaluation* c = chosen();
  nlohmann::json j = c != nullptr ? c->report.to_json() : rows.front().to_json();
  if (c != nullptr) {
    if (bound > 0) {
      j["upper_bound_samples_per_s"] = bound;
      j["efficiency"] = c->report.samples_per_s / bound;
    }
    j["assumptions"] = notes;
  }
  j["candidates"] = nlohmann::json::array();
  auto candidate_row = [&](const Report& r, double estimate_s) {
    nlohmann::json e{{"strategy", r.strategy}, {"kind", r.kind}, {"estimated_s", estimate_s}, {"feasible", r.feasible}};
    if (!r.shape.empty()) e["shape"] = r.shape;
    if (r.feasible) e["simulated_s"] = r.iteration_time_s;
    else e["infeasible_reason"] = r.infeasible_reason;
    if (r.extrapolated_copies > 0) e["extrapolation"] = {{"copies", r.extrapolated_copies}, {"bound_s", r.extrapolation_bound_s}};
    j["candidates"].push_back(e);
  };
  for (const JudgedCandidate& jc : spmd.judged) candidate_row(jc.evaluation.report, jc.candidate.estimate_s);
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
  if (kept) {
    nlohmann::json k{{"file", kept->file}, {"applies", kept->applies}};
    if (kept->applies) {
      k["iteration_time_s"] = kept->iteration_time_s;
      k["samples_per_s"] = kept->samples_per_s;
      k["chosen"] = kept->chosen;
    } else {
      k["reason"] = kept->why_not;
    }
    j["kept_plan"] = k;
  }
  j["plan_time_s"] = spmd.plan_time_s + hybrid.plan_time_s;
  if (spmd_run) {
    j["search"] = {{"states_expanded", spmd.plan.search.expanded}, {"states_generated", spmd.plan.search.generated},
                   {"search_s", spmd.plan.search.seconds}, {"lp_s", spmd.plan.lp_seconds}, {"rounds", spmd.plan.rounds},
                   {"left_out", spmd.left_out}};
    if (spmd.left_out > 0) j["search"]["left_out_reason"] = spmd.left_out_reason;
  }
  if (pipeline_run) j["hybrid_search"] = {{"plans_fitting", hybrid.considered}, {"simulated", hybrid.judged.size()}, {"search_s", hybrid.plan_time_s}};
  return j;
}

}  // namespace hetsim
