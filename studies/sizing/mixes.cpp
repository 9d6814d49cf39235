// File: studies/sizing/mixes.cpp
#include "studies/sizing/mixes.hpp"

#include "base/input_error.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {
namespace {

// Relative slack on budget comparisons, so that a budget of exactly 10 nodes' price allows 10.
constexpr double kBudgetSlack = 1e-9;

bool within(double used, const std::optional<double>& budget) { return !budget || used <= *budget * (1 + kBudgetSlack); }

}  // namespace

Mix make_mix(const Sizing& s, std::vector<long> counts) {
  Mix m;
  m.counts = std::move(counts);
  for (size_t i = 0; i < s.offers.size(); ++i) {
    const Offer& o = s.offers[i];
    const double n = static_cast<double>(m.counts[i]);
    m.capex_usd += n * o.price_usd.value_or(0);
    m.rent_usd_per_s += n * o.rent_usd_per_s.value_or(0);
    m.power_w += n * o.power_w;
    m.nodes += m.counts[i];
    m.gpus += m.counts[i] * o.gpus_per_node;
  }
  return m;
}

std::vector<Mix> enumerate_mixes(const Sizing& s, size_t limit) {
  std::vector<Mix> out;
  std::vector<long> counts(s.offers.size());
  // Depth-first over the offers; a partial mix already over budget stops its branch (every
  // figure only grows with more nodes).
  auto visit = [&](auto&& self, size_t i, double capex, double rent, double power) -> void {
    if (!within(capex, s.budget_capex_usd) || !within(rent, s.budget_rent_usd_per_s) || !within(power, s.budget_power_w)) return;
    if (i == s.offers.size()) {
      long nodes = 0;
      for (long c : counts) nodes += c;
      if (nodes == 0) return;
      if (out.size() == limit) {
        throw InputError(s.file, "offers", "the budget allows more than " + std::to_string(limit) +
                                               " mixes of the offers; lower their max_count or tighten the budget");
      }
      Mix m = make_mix(s, counts);
      if (m.gpus > kMaxClusterGpus) {
        throw InputError(s.file, "offers", "the budget allows " + mix_label(s, m) + ", " + std::to_string(m.gpus) +
                                               " GPUs; hetsim simulates at most " + std::to_string(kMaxClusterGpus) +
                                               ": lower the offers' max_count or tighten the budget");
      }
      out.push_back(std::move(m));
      return;
    }
    const Offer& o = s.offers[i];
    for (long n = o.first_count(); n <= o.max_count; n += o.count_step) {
      counts[i] = n;
      const double k = static_cast<double>(n);
      self(self, i + 1, capex + k * o.price_usd.value_or(0), rent + k * o.rent_usd_per_s.value_or(0), power + k * o.power_w);
      if (!within(capex + k * o.price_usd.value_or(0), s.budget_capex_usd) ||
          !within(rent + k * o.rent_usd_per_s.value_or(0), s.budget_rent_usd_per_s) || !within(power + k * o.power_w, s.budget_power_w)) {
        break;  // more of this offer only costs more
      }
    }
    counts[i] = 0;
  };
  visit(visit, 0, 0, 0, 0);
  return out;
}

std::string mix_label(const Sizing& s, const Mix& m) {
  std::string out;
  for (size_t i = 0; i < s.offers.size(); ++i) {
    if (m.counts[i] == 0) continue;
    if (!out.empty()) out += " + ";
    out += std::to_string(m.counts[i]);
    out += " ";
    out += s.offers[i].name;
  }
  return out;
}

std::string mix_name(const Sizing& s, const Mix& m) {
  std::string out;
  for (size_t i = 0; i < s.offers.size(); ++i) {
    if (m.counts[i] == 0) continue;
    if (!out.empty()) out += "-";
    out += s.offers[i].name;
    out += "x";
    out += std::to_string(m.counts[i]);
  }
  return out;
}

}  // namespace hetsim
