// File: planner/planner.hpp
// The planner's one entry point (as HiGHS's app calls `Highs`): plan(...) runs the SPMD synthesis
// (A* + sharding-ratio LP) and the hybrid planner (pipelines of stage meshes), judges each one's
// best candidates in the simulator, runs the comparison modes (HAP-faithful, HETHUB-faithful,
// Megatron-uniform) and the data-parallel baselines, computes the upper bound, and chooses the plan
// with the smallest simulated time among hetsim's own candidates. It owns its limits
// (kMaxPlanGpus). `hetsim plan` calls it and only prints (sizing and sweeps run `hetsim plan` in
// worker processes).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "planner/spmd/spmd_judge.hpp"
#include "planner/spmd/spmd_problem.hpp"
#include "planner/strategies.hpp"
#include "sim/executor.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

// The largest cluster plan() searches. Measured (gpt3-1.3b, --no-upper-bound, 2-core machine,
// 2026-11-25): 1024 GPUs 9 s, 4096 GPUs 65 s, 8192 GPUs 78 s / 449 MB, 16 384 GPUs 149 s / 920 MB
// (tests/bench/results/README.md); beyond, a sweep could not afford it, and the candidate
// simulations meet SimGrid's limits. `hetsim simulate` runs any size.
inline constexpr int kMaxPlanGpus = 16384;

struct PlannerOptions {
  bool spmd = true;            // --no-spmd: no SPMD synthesis over the flat list of GPUs
  SpmdPlanOptions spmd_options;
  bool pipeline = true;        // --no-pipeline: no hybrid plans
  HybridOptions hybrid;        // hybrid.simulate is set from `candidates`
  int candidates = 3;          // of each planner, the best by estimate simulated
  bool upper_bound = true;     // --no-upper-bound: no efficiency
  // --keep-plan: a plan file (hetsim plan --emit-plan) simulated beside the candidates and chosen
  // where it is the fastest: a what-if that re-plans never loses its baseline's plan to the search.
  std::string keep_plan;
};

// A plan file (hetsim plan --emit-plan) loaded for this model and cluster, built and simulated
// (`strategy` names its row), as `simulate --plan` and --keep-plan run it. Throws InputError where
// it does not load here (another GPU count or type, another model).
struct PlanFileRun {
  Evaluation evaluation;
  std::optional<HybridPlan> hybrid;  // the plan, where it is a hybrid plan
  std::optional<SpmdCandidate> spmd; // else the SPMD program, on `problem`
  SpmdProblem problem;
};
// `problem`: the SPMD problem of this model and cluster where one is built already (else built here).
// `estimate_here`: a hybrid plan's estimate made on this cluster (else the file's, made where it was planned).
[[nodiscard]] PlanFileRun run_plan_file(const std::string& path, const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                        const SimOptions& sim, const std::string& strategy, const SpmdProblem* problem = nullptr,
                                        bool estimate_here = false);

// A --keep-plan file is a well-formed plan file (YAML whose top level is a map of a plan's fields,
// none unknown or missing); whether it fits the model, cluster and batch is said when it runs
// (KeptPlan). Throws InputError where not.
void check_kept_plan_file(const std::string& path, const ModelSpec& model, const Cluster& cluster, const CostModel& cost);

// Reads a plan file for this model and cluster as run_plan_file does, and runs nothing: a sweep's
// --dry-run and its check before any scenario runs. Throws InputError where it does not load here.
void check_plan_file(const std::string& path, const ModelSpec& model, const Cluster& cluster, const CostModel& cost);

// The kept plan (PlannerOptions::keep_plan) on this cluster: its simulated figures, or why it does
// not apply here (another GPU count or type, a model it was not made for).
struct KeptPlan {
  std::string file;
  bool applies = false;
  std::string why_not;
  double iteration_time_s = 0, samples_per_s = 0;
  bool chosen = false;  // it was the fastest
};

struct PlanResult {
  JudgedPlan spmd, hap;                      // hetsim's SPMD search and the HAP-faithful mode
  HybridSearch hybrid, hethub, megatron;     // hetsim's hybrid search and its comparison modes
  std::vector<Evaluation> baselines;         // the data-parallel strategies
  double bound = 0;                          // upper bound, samples/s (0: not computed)
  std::vector<std::string> notes;            // the modelling assumptions behind every row
  std::vector<Report> rows;                  // candidates, then comparison modes and baselines (rows[first_baseline..])
  size_t first_baseline = 0;
  enum class Chosen { kNone, kSpmd, kHybrid } chosen_kind = Chosen::kNone;
  std::string nothing_fits;                  // why nothing of hetsim's own fits (empty: a plan was chosen, or none asked for)
  std::string heuristic;                     // the SPMD search's heuristic, as named in reports
  bool spmd_run = false, pipeline_run = false;  // which planners were asked for
  std::optional<KeptPlan> kept;              // with keep_plan

  [[nodiscard]] const Evaluation* chosen() const;
  [[nodiscard]] const SpmdCandidate* chosen_spmd() const;
  [[nodiscard]] const HybridPlan* chosen_hybrid() const;
  [[nodiscard]] size_t candidates() const { return spmd.judged.size() + hybrid.judged.size(); }
  // The chosen plan's report with the bound and the assumptions (a copy of rows.front() when none).
  [[nodiscard]] Report chosen_report() const;
  // The report JSON (docs/report-schema.md): the chosen plan's report, the upper bound and
  // efficiency, the assumptions, every candidate with its estimate and simulated time, the
  // baselines, and the searches' statistics.
  [[nodiscard]] nlohmann::json to_json() const;
};

// Plans `model` on `cluster`. Throws InputError for a cluster over kMaxPlanGpus GPUs and for bad
// combinations (a dtype no device supports).
[[nodiscard]] PlanResult plan(const ModelSpec& model, const Cluster& cluster, const CostModel& cost, const SimOptions& sim,
                              const PlannerOptions& options);

// The chosen plan as a plan file (--emit-plan; hetsim simulate --plan reads it): SPMD or hybrid
// YAML, or empty where nothing was chosen. `o`: the options `r` was planned with.
[[nodiscard]] std::string emitted_plan(const PlanResult& r, const ModelSpec& model, const Cluster& cluster, const PlannerOptions& o);

// The upper bound every command reports efficiency against (docs/planner.md): each GPU type at the
// best per-GPU throughput hetsim finds on a homogeneous cluster of its own nodes (data-parallel
// strategies, SPMD synthesis and the hybrid planner, whatever a planner switch of the run turns
// off: ablations share one denominator). Samples/s; adds the assumptions it rests on to `notes`.
// A GPU type of more than `direct_max_gpus` GPUs has its reference derived from a stand-in of
// fewer nodes, scaled by the hybrid planner's closed form (upper_bound_samples_per_s).
[[nodiscard]] double plan_upper_bound(const ModelSpec& model, const Cluster& cluster, const CostModel& cost,
                                      const SimOptions& sim, std::vector<std::string>& notes,
                                      int direct_max_gpus = kReferenceDirectMaxGpus);

// The same bound from a plan run's own searches, where they are the references (one node type,
// every planner switch at its default, the run planned with `o`); empty where they might not be
// (then plan() plans the references). plan() takes it when it can.
[[nodiscard]] std::optional<double> own_references_bound(const PlanResult& r, const PlannerOptions& o, const ModelSpec& model,
                                                         const Cluster& cluster);

}  // namespace hetsim
