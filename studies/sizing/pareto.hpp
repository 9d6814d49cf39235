// File: studies/sizing/pareto.hpp
// Pareto fronts of (cost, time) points, both minimised, and the estimate-based pruning that
// decides which mixes are worth planning.
#pragma once

#include <cstddef>
#include <vector>

namespace hetsim {

struct CostTime {
  double cost = 0;
  double time = 0;
};

// The non-dominated points, cheapest first: along it cost rises and time strictly falls. Of
// points with equal figures the first wins.
[[nodiscard]] std::vector<size_t> pareto_front(const std::vector<CostTime>& points);

// Points that may be on the true front when every estimate may be off by `tolerance`: point b is
// dropped only when some other point a stays at least as good on both figures after a's time (and
// its cost, where `cost_uncertain[a]`) is made (1 + tolerance) times worse. Indices in input order.
[[nodiscard]] std::vector<size_t> not_surely_dominated(const std::vector<CostTime>& estimates,
                                                       const std::vector<bool>& cost_uncertain, double tolerance);

// At most `room` of `which` (indices into `est`), spread along the times: the estimated times, on
// a log scale, cut into `room` equal bands; each band offers its cheapest point first (the fastest
// band its fastest: the front's end, what the budget buys at most), then its next, band after band,
// until `room` are chosen. So plans sample the estimated front over
// its whole range of times, however flat its cost (with rents, linear scaling costs the same).
[[nodiscard]] std::vector<size_t> spread_over_times(const std::vector<size_t>& which, const std::vector<CostTime>& est, size_t room);

}  // namespace hetsim
