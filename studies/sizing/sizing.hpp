// File: studies/sizing/sizing.hpp
// The sizing algorithm's one entry point, with planning passed in: plan each offer alone at the
// smallest count that holds the model (the references), estimate every mix within the budget from
// their per-GPU rates, keep the mixes the estimate cannot rule off the front (by the tolerance),
// plan up to max_plans of them spread over the times to train, and return every planned mix with
// its costs and the Pareto front of time to train against the sizing's cost objective.
// `hetsim size` passes a planner that runs `hetsim plan` in worker processes and keeps every plan
// in a results database; the estimate only chooses what to plan and is never reported as a result.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "studies/sizing/costs.hpp"
#include "studies/sizing/estimate.hpp"
#include "studies/sizing/goodput.hpp"
#include "studies/sizing/mixes.hpp"
#include "studies/sizing/sizing_file.hpp"
#include "workloads/model.hpp"

namespace hetsim {

// One planned mix: the plan run's row.
struct PlannedMix {
  std::string status = "error", error;  // ok | infeasible | error
  double samples_per_s = 0, mfu = 0, efficiency = 0, iteration_time_s = 0;
  nlohmann::json report;  // the plan's report, with the chosen plan under "plan"
};
// Plans `mixes` (what: how a progress line names them) and returns their rows in their order.
using PlanMixes = std::function<std::vector<PlannedMix>(const std::vector<Mix>& mixes, const std::string& what)>;

struct SizingOptions {
  double tolerance = 0.25;  // a mix is pruned only when another beats its estimate by this margin
  int max_plans = 16;       // mixes planned beyond the references
};

struct SizingPoint {
  Mix mix;
  PlannedMix row;
  MixCosts costs;          // from the simulated rate times the goodput (status ok)
  Goodput goodput;         // with the sizing's reliability: failures and checkpoints (else 1)
  double estimate = 0;     // the fast estimate, samples/s
  bool valid = false;      // a mix of this sizing (within its budget)
};

struct SizingRun {
  ModelNeeds needs;                    // the model's state, checkpoint and tokens per sample
  size_t mixes = 0;                    // within the budget
  size_t without_memory = 0;           // cannot hold the training state
  size_t promising = 0;                // not ruled off the front by the estimate
  std::vector<OfferRate> rates;        // each offer's estimated per-GPU rate and its source
  std::vector<SizingPoint> points;     // every mix planned: the references first
  size_t references = 0;
  std::vector<size_t> feasible, front;  // indices into points: planned and feasible; on the Pareto front
};

// The expected goodput of a mix (1, no failures, without the sizing's `reliability:`).
[[nodiscard]] Goodput mix_goodput(const Sizing& s, const Mix& m, const ModelNeeds& needs);

// Runs the sizing on `mixes` (enumerate_mixes of the sizing: not empty). `say` gets the one line
// that says what will be planned, before it is.
[[nodiscard]] SizingRun run_sizing(const Sizing& s, const ModelSpec& model, const std::vector<Mix>& mixes, const SizingOptions& options,
                                   const PlanMixes& plan, const std::function<void(const std::string&)>& say);

// The report JSON (docs/formats/sizing.md): the sizing, its budget and offers with their estimates,
// the assumptions, the front with each point's cluster and plan, and every mix evaluated.
[[nodiscard]] nlohmann::json sizing_report_json(const Sizing& s, const ModelSpec& model, const SizingOptions& options,
                                                const SizingRun& run);

// "" where the offers' GPU types compare like with like: all raw, or all under profiles of one
// software era (each fitted on its own GPU's runs); else one line naming each type's profile and
// why a front across them is skewed (a raw type against a calibrated one, or different eras).
// `moe`: the model is a mixture of experts (a profile of MoE host times alone leaves a dense run raw).
[[nodiscard]] std::string calibration_note(const Sizing& s, bool moe);

// {offer name: nodes} of a mix.
[[nodiscard]] nlohmann::json mix_nodes_json(const Sizing& s, const Mix& m);
// The cost the sizing's front is drawn against, as its axis and table say it.
[[nodiscard]] std::string cost_label(Objective o);

}  // namespace hetsim
