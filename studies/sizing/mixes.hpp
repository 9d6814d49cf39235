// File: studies/sizing/mixes.hpp
// The clusters a sizing can buy or rent: how many nodes of each offer, within the budget.
#pragma once

#include <string>
#include <vector>

#include "studies/sizing/sizing_file.hpp"

namespace hetsim {

struct Mix {
  std::vector<long> counts;  // nodes of each offer, in the sizing's order
  double capex_usd = 0;      // bought nodes' prices
  double rent_usd_per_s = 0; // rented nodes' rents
  double power_w = 0;        // at load
  long nodes = 0;
  long gpus = 0;
};

// Every mix with each offer between its min_count and max_count, at least one node, and capex,
// rent and power within the budget; in counting order (the first offer slowest). Throws
// InputError (naming the sizing file) when there are more than `limit`.
[[nodiscard]] std::vector<Mix> enumerate_mixes(const Sizing& s, size_t limit);

// The mix of `counts` (its totals computed).
[[nodiscard]] Mix make_mix(const Sizing& s, std::vector<long> counts);

// "4 dgx-h100 + 2 mi300x-node"; a cluster name: "dgx-h100x4-mi300x-nodex2".
[[nodiscard]] std::string mix_label(const Sizing& s, const Mix& m);
[[nodiscard]] std::string mix_name(const Sizing& s, const Mix& m);

}  // namespace hetsim
