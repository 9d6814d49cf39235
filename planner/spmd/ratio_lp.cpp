// File: planner/spmd/ratio_lp.cpp
#include "planner/spmd/ratio_lp.hpp"

#include <map>
#include <tuple>

#include "base/text.hpp"

namespace hetsim {

namespace {

// The LP over share columns with multiplicities (1 per device unless classes were merged).
LpModel build(const RatioProblem& p, const std::vector<double>& multiplicity) {
  LpModel m;
  for (int d = 0; d < p.devices; ++d) m.add_col(0, 1, 0, indexed_name("r", static_cast<size_t>(d)));
  std::vector<std::pair<int, double>> all;
  for (int d = 0; d < p.devices; ++d) all.push_back({d, multiplicity[d]});
  m.add_row(1, 1, all);  // shares sum to 1
  for (size_t k = 0; k < p.steps.size(); ++k) {
    const RatioStep& s = p.steps[k];
    for (const auto* terms : {&s.compute, &s.comm}) {
      if (terms->empty()) continue;
      // t_k >= coeff r_d + constant  <=>  coeff r_d - t_k <= -constant
      const int t = m.add_col(0, kLpInfinity, 1, indexed_name(terms == &s.compute ? "C" : "M", k));
      for (const RatioTerm& term : *terms) m.add_row(-kLpInfinity, -term.constant, {{term.device, term.coeff}, {t, -1.0}});
    }
  }
  if (!p.memory_capacity.empty()) {
    for (const RatioTerm& term : p.memory) {
      m.add_row(-kLpInfinity, p.memory_capacity[term.device] - term.constant, {{term.device, term.coeff}});
    }
  }
  return m;
}

// A device's terms in every step, memory and capacity: equal signatures, interchangeable devices.
using Signature = std::vector<std::tuple<int, int, double, double>>;

}  // namespace

LpModel build_ratio_lp(const RatioProblem& p) { return build(p, std::vector<double>(p.devices, 1.0)); }

RatioSolution solve_ratios(const RatioProblem& p) {
  std::vector<Signature> sig(p.devices);
  for (size_t k = 0; k < p.steps.size(); ++k) {
    for (const RatioTerm& t : p.steps[k].compute) sig[t.device].push_back({static_cast<int>(k), 0, t.coeff, t.constant});
    for (const RatioTerm& t : p.steps[k].comm) sig[t.device].push_back({static_cast<int>(k), 1, t.coeff, t.constant});
  }
  if (!p.memory_capacity.empty()) {
    for (const RatioTerm& t : p.memory) sig[t.device].push_back({-1, 2, t.coeff, t.constant - p.memory_capacity[t.device]});
  }
  std::map<Signature, int> class_of_sig;
  std::vector<int> class_of(p.devices);
  std::vector<int> representative;
  for (int d = 0; d < p.devices; ++d) {
    const auto [it, fresh] = class_of_sig.try_emplace(sig[d], static_cast<int>(representative.size()));
    if (fresh) representative.push_back(d);
    class_of[d] = it->second;
  }
  // The reduced problem: one device per class, its terms renumbered.
  RatioProblem q;
  q.devices = static_cast<int>(representative.size());
  std::vector<double> multiplicity(q.devices, 0);
  for (int d = 0; d < p.devices; ++d) multiplicity[class_of[d]] += 1;
  auto keep = [&](const std::vector<RatioTerm>& terms) {
    std::vector<RatioTerm> out;
    for (const RatioTerm& t : terms) {
      if (representative[class_of[t.device]] == t.device) out.push_back({class_of[t.device], t.coeff, t.constant});
    }
    return out;
  };
  for (const RatioStep& s : p.steps) q.steps.push_back({keep(s.compute), keep(s.comm)});
  if (!p.memory_capacity.empty()) {
    q.memory = keep(p.memory);
    for (int c = 0; c < q.devices; ++c) q.memory_capacity.push_back(p.memory_capacity[representative[c]]);
  }
  const LpSolution s = solve_lp(build(q, multiplicity));
  RatioSolution out;
  out.status = s.status;
  if (s.status != LpStatus::kOptimal) return out;
  for (int d = 0; d < p.devices; ++d) out.ratios.push_back(s.x[class_of[d]]);
  out.cost_s = s.objective;
  return out;
}

}  // namespace hetsim
