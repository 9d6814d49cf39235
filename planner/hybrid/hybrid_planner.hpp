// File: planner/hybrid/hybrid_planner.hpp
// The hybrid planner: enumerates pipelines of stage meshes (number of pipelines, stages per GPU
// type, TP width per type, micro-batch size and count, schedule, recompute), splits layers
// unevenly so that stage times balance under each stage's memory, prunes with the closed-form
// estimate, and has the simulator judge the best K. The same machinery gives two baselines:
//   hethub-faithful:  one GPU type per stage, types contiguous, per-type TP, non-uniform layers,
//                     1F1B, chosen by the closed form alone (then simulated once);
//   megatron-uniform: one TP width and stage grid for all GPUs in cluster order, equal layers,
//                     1F1B, the best of the grid by estimate (the two best simulated).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "planner/evaluation.hpp"
#include "planner/hybrid/hybrid_estimate.hpp"

namespace hetsim {

enum class HybridFlavour { kHetsim, kHethubFaithful, kMegatronUniform };

struct HybridOptions {
  bool uniform_layers = false;                 // --uniform-layers: equal layers per stage
  std::optional<PipelineSchedule> schedule;    // --schedule S: only this schedule
  std::optional<MoeDispatcher> moe_dispatcher;  // --moe-dispatcher D: only this token dispatcher (ep > 1)
  bool mixed_stages = true;                    // --no-mixed-stages: every stage one GPU type
  bool stage_synthesis = true;                 // --no-stage-synthesis: Megatron's TP in every stage
  bool cross_mesh = true;                      // --no-cross-mesh: Megatron's scatter-gather between stages,
                                               // no broadcast resharding, no eager 1F1B
  bool sequence_parallel = true;               // --no-sequence-parallel: Megatron's SP never tried
  bool zero1 = true;                           // --no-zero1: the distributed optimizer never tried
  bool tp_comm_overlap = true;                 // --no-tp-overlap: backward TP collectives never hidden
                                               // under the weight gradients
  bool moe_parallel = true;                    // --no-moe-parallel: no expert parallelism (every GPU holds
                                               // every expert; tried for models with a moe: block)
  bool context_parallel = true;                // --no-context-parallel: cp 1 in every stage (tried from
                                               // sequences of 8192 tokens up, cp 2 to 8)
  bool overlap = true;                         // --no-overlap: gradient buckets sync after the last backward
                                               // and ZeRO-1 gathers parameters after the step (true:
                                               // overlapped, and overlap_param_gather with ZeRO-1;
                                               // overlap_moe_expert_parallel_comm tried with ep > 1)
  int simulate = 3;                            // candidates judged by the simulator
  long micro_batch = 0;                        // --micro-batch N: only micro-batches of N samples (times the
                                               // copies of an expert group inside a stage); 0: 1, 2 and 4 tried
  friend bool operator==(const HybridOptions&, const HybridOptions&) = default;
};

struct JudgedHybrid {
  HybridPlan plan;
  Evaluation evaluation;  // report.kind "hybrid", report.shape, report.estimated_s
};

struct HybridSearch {
  std::vector<JudgedHybrid> judged;  // simulated and fitting memory, best estimate first
  int chosen = -1;                   // smallest simulated time that fits; -1: none
  long considered = 0;               // plans estimated
  long fitting = 0;                  // of those, fitting memory by the estimate
  long rejected = 0;                 // best by estimate, but the built program did not fit memory
  std::string rejected_reason;       // the first of those: why (memory, or more passes than are simulated)
  double plan_time_s = 0;            // wall time, simulations included
  std::vector<HybridPlan> leading;   // the best plans by estimate, best first (up to kLeadingPlans)
};

// Plans HybridSearch::leading keeps: the upper bound scales a reference with them (hybrid_reference.hpp).
inline constexpr size_t kLeadingPlans = 16;

// `model` and `cluster` must outlive the planner.
class HybridPlanner {
 public:
  HybridPlanner(const ModelSpec& model, const Cluster& cluster, const CostModel& cost, const SimOptions& sim);

  [[nodiscard]] HybridSearch search(HybridFlavour flavour, const HybridOptions& options);
  // Several searches, the same as one by one, with their first batches simulated side by side.
  [[nodiscard]] std::vector<HybridSearch> search(const std::vector<HybridFlavour>& flavours, const HybridOptions& options);
  // Builds, checks memory and simulates one plan; `strategy` names the row.
  [[nodiscard]] Evaluation evaluate(const HybridPlan& plan, const std::string& strategy);
  // Builds each plan and simulates them side by side (up to a simulation per core); the same
  // evaluations as evaluate() one by one.
  [[nodiscard]] std::vector<Evaluation> evaluate_side_by_side(const std::vector<const HybridPlan*>& plans,
                                                              const std::string& strategy);
  [[nodiscard]] HybridEstimate estimate(const HybridPlan& plan) { return estimator_.estimate(plan); }

 private:
  struct Shape;
  struct Candidates;
  // One flavour's plans fitting memory by estimate, best first, and how many to judge.
  [[nodiscard]] Candidates candidates(HybridFlavour flavour, const HybridOptions& options);
  // The next distinct plans of `c` from `next` (those not in `seen`), up to `wanted`, checked.
  [[nodiscard]] std::vector<const HybridPlan*> take_batch(const Candidates& c, size_t& next, std::set<std::string>& seen, size_t wanted);
  // Simulates the best of `c` (evaluated_ keeps what another search simulated already).
  [[nodiscard]] HybridSearch judge(Candidates& c);
  [[nodiscard]] std::vector<HybridPlan> enumerate(HybridFlavour flavour, const HybridOptions& options);
  void add_plans(const Shape& shape, HybridFlavour flavour, const HybridOptions& options, std::vector<HybridPlan>& out);
  // Assigns layer ranges to the stages of every pipeline (balanced, or equal); false if none fits.
  bool split_layers(HybridPlan& plan, bool uniform, int chunks);
  // Full recompute of only the first layers of each chunk, as few as fit (HybridPlan::recompute_layers).
  void least_recomputed_layers(HybridPlan& plan, HybridEstimate& e);
  // Without recompute, the fewest layers' activations offloaded to host memory that fit
  // (HybridPlan::activation_offload_layers); false where none fits.
  bool least_offloaded_layers(HybridPlan& plan, HybridEstimate& e);

  const ModelSpec& model_;
  const Cluster& cluster_;
  CostModel cost_;  // a copy (it shares its tables): callers may pass a temporary
  SimOptions sim_;
  PipelineProgramBuilder builder_;
  HybridEstimator estimator_;
  // While several searches run together: every plan evaluated, by its YAML, so that a plan two
  // searches share (Megatron-uniform's is often HETHUB-faithful's) is built and simulated once,
  // with the same result. Emptied when they end: it holds whole programs.
  std::map<std::string, Evaluation> evaluated_;
  bool remember_ = false;
};

// A hybrid row's report: kind, shape, estimate.
void label_hybrid_report(Report& r, const HybridPlan& plan);

}  // namespace hetsim
