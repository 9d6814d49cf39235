// File: studies/sizing/costs.hpp
// What training on a mix costs, from its throughput: time to train, capex or rent, energy, and
// the total cost of ownership per million tokens (capex amortised over the training's share of
// the amortization period, plus energy x PUE for bought nodes; a rent includes its energy).
#pragma once

#include "studies/sizing/mixes.hpp"

namespace hetsim {

struct MixCosts {
  double tokens = 0;              // trained on (train_tokens, or train_samples x tokens per sample)
  double time_to_train_s = 0;
  double capex_usd = 0;
  double rent_usd = 0;            // rent over the training
  double cost_usd = 0;            // capex + rent over the training
  double energy_kwh = 0;          // at the nodes' power at load, before PUE
  double energy_usd = 0;          // bought nodes: energy x PUE x price
  double cost_per_million_tokens_usd = 0;
};

// Costs of training on `m` at `samples_per_s` with `tokens_per_sample` (> 0 both).
[[nodiscard]] MixCosts costs_of(const Sizing& s, const Mix& m, double samples_per_s, double tokens_per_sample);

// The value of the front's cost objective (cost, cost_per_token or energy) in `c`.
[[nodiscard]] double cost_objective_value(const Sizing& s, const MixCosts& c);
// Whether that objective grows with the time to train (all but a capex-only cost).
[[nodiscard]] bool cost_objective_depends_on_time(const Sizing& s, const Mix& m);

}  // namespace hetsim
