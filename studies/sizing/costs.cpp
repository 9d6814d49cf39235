// File: studies/sizing/costs.cpp
#include "studies/sizing/costs.hpp"

namespace hetsim {

MixCosts costs_of(const Sizing& s, const Mix& m, double samples_per_s, double tokens_per_sample) {
  MixCosts c;
  const double samples = s.train_tokens > 0 ? s.train_tokens / tokens_per_sample : s.train_samples;
  c.tokens = samples * tokens_per_sample;
  c.time_to_train_s = samples / samples_per_s;
  c.capex_usd = m.capex_usd;
  c.rent_usd = m.rent_usd_per_s * c.time_to_train_s;
  c.cost_usd = c.capex_usd + c.rent_usd;
  c.energy_kwh = m.power_w * c.time_to_train_s / 3.6e6;
  double bought_w = 0;
  for (size_t i = 0; i < s.offers.size(); ++i) {
    if (s.offers[i].price_usd) bought_w += static_cast<double>(m.counts[i]) * s.offers[i].power_w;
  }
  c.energy_usd = bought_w * c.time_to_train_s * s.pue * s.energy_usd_per_j;
  const double amortised = s.amortization_s > 0 ? c.capex_usd * c.time_to_train_s / s.amortization_s : 0;
  c.cost_per_million_tokens_usd = (amortised + c.energy_usd + c.rent_usd) / (c.tokens / 1e6);
  return c;
}

double cost_objective_value(const Sizing& s, const MixCosts& c) {
  switch (s.cost_objective) {
    case Objective::kCostPerToken: return c.cost_per_million_tokens_usd;
    case Objective::kEnergy: return c.energy_kwh;
    case Objective::kCost:
    case Objective::kTimeToTrain: break;
  }
  return c.cost_usd;
}

bool cost_objective_depends_on_time(const Sizing& s, const Mix& m) {
  return s.cost_objective != Objective::kCost || m.rent_usd_per_s > 0;
}

}  // namespace hetsim
