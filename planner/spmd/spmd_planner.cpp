// File: planner/spmd/spmd_planner.cpp
#include "planner/spmd/spmd_planner.hpp"

#include "planner/data_parallel.hpp"
#include "planner/spmd/spmd_problem.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace hetsim {

std::vector<double> round_to_samples(const std::vector<double>& ratios, long samples) {
  const std::vector<long> whole = split_proportionally(samples, ratios);
  std::vector<double> out(ratios.size());
  for (size_t d = 0; d < ratios.size(); ++d) out[d] = static_cast<double>(whole[d]) / static_cast<double>(samples);
  return out;
}

std::vector<Layout> output_layouts(const SpmdProblem& p, const SpmdProgram& program) {
  std::vector<Layout> out(p.ops.size());
  for (size_t i = 0; i < p.ops.size(); ++i) out[i] = p.ops[i].rules[program.choices[i].rule].output;
  return out;
}

RatioProblem ratio_problem(const SpmdProblem& p, const SpmdProgram& program, const std::vector<double>& ratios,
                           const SearchOptions& options) {
  RatioProblem lp;
  lp.devices = p.devices;
  const double a = p.accumulation;
  const double n = static_cast<double>(p.devices);
  const std::vector<Layout> layouts = output_layouts(p, program);
  const double max_r = *std::max_element(ratios.begin(), ratios.end());
  std::vector<double> mem_coeff(p.devices, 0), mem_const(p.devices, 0);
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const SpmdOp& op = p.ops[i];
    const Rule& rule = op.rules[program.choices[i].rule];
    const bool sfb = program.choices[i].sfb;
    RatioStep step;
    // Communication that does not depend on the shares, and the padded collectives that do
    // (n x the largest share: one term per device bounds the step's M).
    double fixed = 0, per_share = 0;
    auto add = [&](Comm c, double bytes, double repeat) {
      if (bytes <= 0 || c == Comm::kNone || p.devices < 2) return;
      const CollectiveCost& cc = p.cost_of(c);
      if (c == Comm::kAllGather || c == Comm::kReduceScatter) {
        // Grouped at its upper bound (smallest share 0): the exact form is not linear in the shares.
        const double grouped = cc.grouped(bytes, n, 0);
        if (options.grouped_collectives && grouped < cc.padded(bytes, n, max_r)) {
          fixed += repeat * grouped;
        } else {
          fixed += repeat * cc.alpha_s;
          per_share += repeat * cc.beta_s_per_byte * bytes * n;
        }
      } else {
        fixed += repeat * cc.time(c == Comm::kAllToAll ? bytes / n : bytes);  // all-to-all: per member
      }
    };
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const Conversion cv = convert(layouts[op.inputs[k]], rule.inputs[k]);
      const double bytes = p.ops[op.inputs[k]].output_bytes;
      add(cv.forward, bytes, a);
      add(cv.backward, bytes, a);
      add(rule.backward_comm, bytes, a);
    }
    if (rule.params == ParamPlacement::kGathered) {
      add(Comm::kAllGather, op.param_bytes, 2 * a);
      add(Comm::kReduceScatter, op.param_bytes, 1);
    }
    if (rule.gradient_sync) {
      if (sfb) {
        add(Comm::kAllGather, p.ops[op.inputs[0]].output_bytes, 1);
        add(Comm::kAllGather, op.output_bytes, 1);
      } else {
        add(Comm::kAllReduce, op.param_bytes, 1);
      }
    }
    for (int d = 0; d < p.devices; ++d) {
      const double full = a * op.time_s[p.type_of[d]];
      RatioTerm c{d, rule.sharded ? full : 0, rule.sharded ? 0 : full};
      if (sfb) {  // (1 - r) x the weight-gradient GEMM, formed from the gathered factors
        c.coeff -= full / 3;
        c.constant += full / 3;
      }
      step.compute.push_back(c);
      if (fixed > 0 || per_share > 0) step.comm.push_back({d, per_share, fixed});
      const double state = op.param_state_bytes[p.type_of[d]];
      const double saved = op.saved_bytes[p.type_of[d]];
      mem_coeff[d] += (stored_sharded(rule.params) ? state : 0) + (rule.sharded ? saved : 0);
      mem_const[d] += (stored_sharded(rule.params) ? 0 : state) + (rule.sharded ? 0 : saved);
    }
    lp.steps.push_back(std::move(step));
  }
  if (pass_host_cost(p) > 0) {  // the host time before each pass: a step of its own, whatever the shares
    RatioStep host;
    for (int d = 0; d < p.devices; ++d) host.compute.push_back({d, 0, 2 * a * p.pass_host_s[static_cast<size_t>(p.type_of[d])]});
    lp.steps.push_back(std::move(host));
  }
  if (options.memory_limit && !p.memory_capacity.empty()) {
    for (int d = 0; d < p.devices; ++d) lp.memory.push_back({d, mem_coeff[d], mem_const[d]});
    lp.memory_capacity = p.memory_capacity;
  }
  return lp;
}

namespace {
bool same_candidate(const SpmdCandidate& a, const SpmdCandidate& b) {
  if (a.ratios.size() != b.ratios.size() || a.program.choices.size() != b.program.choices.size()) return false;
  for (size_t i = 0; i < a.ratios.size(); ++i) {
    if (std::fabs(a.ratios[i] - b.ratios[i]) > 1e-9) return false;
  }
  for (size_t i = 0; i < a.program.choices.size(); ++i) {
    if (a.program.choices[i].rule != b.program.choices[i].rule || a.program.choices[i].sfb != b.program.choices[i].sfb) return false;
  }
  return true;
}
}  // namespace

SpmdPlan plan_spmd(const SpmdProblem& p, const SpmdPlanOptions& options) {
  SpmdPlan plan;
  // Start from shares proportional to device speed.
  std::vector<double> r = round_to_samples(speed_ratios(p), p.samples);

  auto remember = [&](const SpmdCandidate& c) {
    for (const SpmdCandidate& seen : plan.candidates) {
      if (same_candidate(seen, c)) return;
    }
    plan.candidates.push_back(c);
  };
  for (int round = 0; round < options.max_rounds; ++round) {
    ++plan.rounds;
    const SearchResult s = search_program(p, r, options.search);
    plan.search.expanded += s.stats.expanded;
    plan.search.generated += s.stats.generated;
    plan.search.seconds += s.stats.seconds;
    if (!s.found) break;
    SpmdCandidate c{s.program, r, s.program.cost_s};
    remember(c);
    if (plan.found && c.estimate_s >= plan.best.estimate_s * (1 - 1e-9)) break;  // no improvement: stop
    if (!plan.found || c.estimate_s < plan.best.estimate_s) plan.best = c;
    plan.found = true;
    if (!options.lp) break;
    const auto t0 = std::chrono::steady_clock::now();
    const RatioSolution lp = solve_ratios(ratio_problem(p, s.program, r, options.search));
    plan.lp_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (lp.status != LpStatus::kOptimal) break;
    // The same program at the LP's ratios (in whole samples), costed exactly as the search costs it.
    const std::vector<double> rounded = round_to_samples(lp.ratios, p.samples);
    SpmdCandidate tuned{s.program, rounded, program_cost(p, rounded, options.search, s.program.choices)};
    tuned.program.cost_s = tuned.estimate_s;
    if (!std::isfinite(tuned.estimate_s)) break;
    remember(tuned);
    if (tuned.estimate_s < plan.best.estimate_s) plan.best = tuned;
    r = rounded;
  }
  return plan;
}

}  // namespace hetsim
