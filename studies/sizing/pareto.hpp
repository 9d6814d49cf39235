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

// How far each of `which` is from being dominated: min over other points a of
// max(cost_a / cost_b, time_a / time_b); above 1 on the front, below 1 behind it.
[[nodiscard]] std::vector<double> front_margin(const std::vector<CostTime>& points, const std::vector<size_t>& which);

}  // namespace hetsim
