// File: planner/hybrid/hybrid_judge.cpp
// The hybrid planner's judging: the best plans of a search by estimate, built and simulated side by
// side, each plan once however many searches take it; the fastest simulated is chosen.
#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <set>
#include <stdexcept>

#include "base/input_error.hpp"
#include "base/parallel_for.hpp"
#include "base/log.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "sim/executor.hpp"

namespace hetsim {

void label_hybrid_report(Report& r, const HybridPlan& plan) {
  r.kind = "hybrid";
  r.shape = plan.shape();
  r.layer_split.clear();
  if (!plan.pipelines.empty()) {
    for (const StagePlan& st : plan.pipelines.front().stages) r.layer_split += (r.layer_split.empty() ? "" : "/") + std::to_string(st.layer_count());
  }
  r.estimated_s = plan.estimate_s;
}

Evaluation HybridPlanner::evaluate(const HybridPlan& plan, const std::string& strategy) {
  return evaluate_side_by_side({&plan}, strategy).front();
}

std::vector<Evaluation> HybridPlanner::evaluate_side_by_side(const std::vector<const HybridPlan*>& plans, const std::string& strategy) {
  // Built here one by one (the builder remembers stage work), simulated side by side: each
  // simulation runs in a process of its own (sim/platform_server.hpp), so up to one per core at
  // once. Only the first thread shows its progress. The results are those of one at a time.
  std::vector<Evaluation> out(plans.size());
  std::vector<std::optional<Program>> programs(plans.size());
  std::vector<std::string> keys(plans.size());
  std::vector<bool> known(plans.size(), false);
  for (size_t i = 0; i < plans.size(); ++i) {
    if (remember_) keys[i] = hybrid_plan_to_yaml(*plans[i]);
    if (const auto it = evaluated_.find(keys[i]); remember_ && it != evaluated_.end()) {
      out[i] = it->second;
      out[i].report.strategy = strategy;
      out[i].program.strategy = strategy;
      known[i] = true;
      continue;
    }
    PipelineProgram built = builder_.build(*plans[i]);
    // Beyond what hetsim simulates: a limit of the simulator, refused as the task cap of
    // data-parallel and SPMD programs is (the search takes it for an infeasible candidate and goes on).
    if (built.too_large) throw InputError("training.global_batch", "", built.infeasible_reason);
    built.program.strategy = strategy;
    if (built.feasible) programs[i] = std::move(built.program);
    else out[i] = infeasible_evaluation(strategy, model_, cluster_, built.infeasible_reason);
  }
  std::vector<size_t> to_simulate;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (programs[i]) to_simulate.push_back(i);
  }
  std::vector<std::exception_ptr> failed(plans.size());
  const auto threads = std::min(to_simulate.size(), static_cast<size_t>(parallel_workers()));
  if (threads > 1) prepare_simulations(cluster_, threads);
  parallel_for(static_cast<long>(to_simulate.size()), [&](long j, int worker) {
    std::optional<QuietThread> hush;  // only the calling thread shows its progress
    if (worker != 0) hush.emplace();
    const size_t i = to_simulate[static_cast<size_t>(j)];
    try {
      out[i] = simulated_evaluation(std::move(*programs[i]), model_, cluster_, sim_);
    } catch (...) {
      failed[i] = std::current_exception();
    }
  });
  for (size_t i = 0; i < plans.size(); ++i) {
    if (failed[i]) std::rethrow_exception(failed[i]);
    if (known[i]) continue;
    label_hybrid_report(out[i].report, *plans[i]);
    if (remember_) evaluated_.emplace(keys[i], out[i]);
  }
  return out;
}

struct HybridPlanner::Candidates {
  HybridFlavour flavour;
  std::vector<HybridPlan> plans;  // fitting memory by estimate, best estimate first
  size_t k = 1;                   // how many to judge
  std::string name;               // the rows' strategy
  std::set<std::string> seen;     // plans taken (their YAML): each judged once
  size_t next = 0;                // the next plan to take
};

HybridPlanner::Candidates HybridPlanner::candidates(HybridFlavour flavour, const HybridOptions& options) {
  Candidates c;
  c.flavour = flavour;
  c.plans = enumerate(flavour, options);
  std::stable_sort(c.plans.begin(), c.plans.end(), [](const HybridPlan& a, const HybridPlan& b) { return a.estimate_s < b.estimate_s; });
  c.k = flavour == HybridFlavour::kHethubFaithful ? 1 : flavour == HybridFlavour::kMegatronUniform ? 2
                                                                                                : static_cast<size_t>(std::max(1, options.simulate));
  c.name = flavour == HybridFlavour::kHetsim ? "hetsim hybrid #" : flavour == HybridFlavour::kHethubFaithful ? "hethub-faithful" : "megatron-uniform";
  return c;
}

std::vector<const HybridPlan*> HybridPlanner::take_batch(const Candidates& c, size_t& next, std::set<std::string>& seen, size_t wanted) {
  std::vector<const HybridPlan*> batch;
  while (batch.size() < wanted && next < c.plans.size()) {
    const HybridPlan& plan = c.plans[next++];
    if (!seen.insert(hybrid_plan_to_yaml(plan)).second) continue;
    if (std::vector<PlanProblem> bad = check_hybrid_plan(plan, model_, cluster_); !bad.empty()) {
      throw std::logic_error("hybrid planner made an invalid plan: " + bad.front().field + ": " + bad.front().message);
    }
    batch.push_back(&plan);
  }
  return batch;
}

HybridSearch HybridPlanner::search(HybridFlavour flavour, const HybridOptions& options) {
  return std::move(search(std::vector<HybridFlavour>{flavour}, options).front());
}

std::vector<HybridSearch> HybridPlanner::search(const std::vector<HybridFlavour>& flavours, const HybridOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Candidates> all;
  for (HybridFlavour f : flavours) all.push_back(candidates(f, options));
  // Several searches remember what they simulated while they run (whole programs: not longer).
  struct Forget {
    HybridPlanner& p;
    ~Forget() {
      p.remember_ = false;
      p.evaluated_.clear();
    }
  } forget{*this};
  remember_ = all.size() > 1;
  if (all.size() > 1) {
    // The searches' first batches side by side (as many simulations at once as there are cores),
    // into evaluated_; each search then takes its own from there, as it would have simulated them.
    std::vector<const HybridPlan*> first;
    std::set<std::string> keys;
    for (const Candidates& c : all) {
      size_t next = 0;
      std::set<std::string> seen;
      for (const HybridPlan* plan : take_batch(c, next, seen, c.k)) {
        if (keys.insert(hybrid_plan_to_yaml(*plan)).second) first.push_back(plan);
      }
    }
    try {
      (void)evaluate_side_by_side(first, "hybrid");
    } catch (const InputError& e) {
      if (e.machine_limit()) throw;  // otherwise each search meets it again and tells which plan
    }
  }
  std::vector<HybridSearch> out;
  for (Candidates& c : all) {
    out.push_back(judge(c));
    const auto now = std::chrono::steady_clock::now();
    out.back().plan_time_s = std::chrono::duration<double>(now - t0).count();
    t0 = now;
  }
  return out;
}

HybridSearch HybridPlanner::judge(Candidates& c) {
  HybridSearch out;
  const std::vector<HybridPlan>& plans = c.plans;
  const size_t k = c.k;
  const std::string& name = c.name;
  const HybridFlavour flavour = c.flavour;
  out.fitting = static_cast<long>(plans.size());
  out.considered = out.fitting;
  out.leading.assign(plans.begin(), plans.begin() + static_cast<std::ptrdiff_t>(std::min(plans.size(), kLeadingPlans)));
  // The best k distinct plans by estimate, each batch as many as are still wanted, simulated side
  // by side; a plan whose program does not fit is skipped for the next best (a few times at most).
  // The same plans as one at a time, in the same order.
  bool stop = false;
  while (!stop && out.judged.size() < k && c.next < plans.size()) {
    const std::vector<const HybridPlan*> batch = take_batch(c, c.next, c.seen, k - out.judged.size());
    if (batch.empty()) break;
    std::vector<Evaluation> evs;
    try {
      evs = evaluate_side_by_side(batch, name);
    } catch (const InputError& e) {
      // A limit of this machine (its memory, ulimit -v) would make the plan depend on where it
      // runs: reported, never taken for a candidate that does not fit. Otherwise each plan again
      // alone, to tell which one the error is about.
      if (e.machine_limit()) throw;
      if (batch.size() == 1) {
        evs = {infeasible_evaluation(name, model_, cluster_, e.diagnostics().front().message)};
      } else {
        for (const HybridPlan* plan : batch) {
          try {
            evs.push_back(evaluate(*plan, name));
          } catch (const InputError& one) {
            if (one.machine_limit()) throw;
            evs.push_back(infeasible_evaluation(name, model_, cluster_, one.diagnostics().front().message));
          }
        }
      }
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      Evaluation& ev = evs[i];
      if (!ev.report.feasible) {
        if (out.rejected_reason.empty()) out.rejected_reason = ev.report.infeasible_reason;
        if (++out.rejected > 2 * static_cast<long>(k) + 2) {
          stop = true;
          break;
        }
        continue;
      }
      const std::string row = flavour == HybridFlavour::kHetsim ? name + std::to_string(out.judged.size() + 1) : name;
      ev.report.strategy = row;
      ev.program.strategy = row;
      out.judged.push_back({*batch[i], std::move(ev)});
    }
  }
  for (size_t i = 0; i < out.judged.size(); ++i) {
    const Report& r = out.judged[i].evaluation.report;
    if (!r.feasible) continue;
    if (out.chosen < 0 || simulated_faster(r.iteration_time_s, out.judged[out.chosen].evaluation.report.iteration_time_s)) {
      out.chosen = static_cast<int>(i);
    }
  }
  // Megatron-uniform and HETHUB-faithful are one row each: keep the chosen one.
  if (flavour != HybridFlavour::kHetsim && out.chosen > 0) {
    out.judged = {out.judged[out.chosen]};
    out.chosen = 0;
  } else if (flavour != HybridFlavour::kHetsim && out.judged.size() > 1) {
    out.judged.resize(1);
  }
  return out;
}

}  // namespace hetsim
