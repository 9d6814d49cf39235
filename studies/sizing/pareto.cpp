// File: studies/sizing/pareto.cpp
#include "studies/sizing/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace hetsim {

std::vector<size_t> pareto_front(const std::vector<CostTime>& points) {
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return points[a].cost != points[b].cost ? points[a].cost < points[b].cost : points[a].time < points[b].time;
  });
  std::vector<size_t> front;
  double best = std::numeric_limits<double>::infinity();
  for (size_t i : order) {
    if (points[i].time < best) {
      front.push_back(i);
      best = points[i].time;
    }
  }
  return front;
}

std::vector<size_t> not_surely_dominated(const std::vector<CostTime>& estimates, const std::vector<bool>& cost_uncertain,
                                         double tolerance) {
  const size_t n = estimates.size();
  std::vector<CostTime> worse(n);  // each point made worse by the tolerance
  for (size_t i = 0; i < n; ++i) {
    worse[i] = {estimates[i].cost * (cost_uncertain[i] ? 1 + tolerance : 1.0), estimates[i].time * (1 + tolerance)};
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return worse[a].cost < worse[b].cost; });
  // best[k], second[k]: the two points of smallest worsened time among order[0..k].
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  std::vector<size_t> best(n), second(n);
  size_t b1 = kNone, b2 = kNone;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = order[k];
    if (b1 == kNone || worse[i].time < worse[b1].time) {
      b2 = b1;
      b1 = i;
    } else if (b2 == kNone || worse[i].time < worse[b2].time) {
      b2 = i;
    }
    best[k] = b1;
    second[k] = b2;
  }
  std::vector<size_t> keep;
  for (size_t b = 0; b < n; ++b) {
    // The points whose worsened cost is at most b's estimated cost: a prefix of `order`.
    const auto end = std::upper_bound(order.begin(), order.end(), estimates[b].cost,
                                      [&](double c, size_t a) { return c < worse[a].cost; });
    bool dominated = false;
    if (end != order.begin()) {
      const size_t k = static_cast<size_t>(end - order.begin()) - 1;
      size_t a = best[k] == b ? second[k] : best[k];
      if (a != kNone && worse[a].time <= estimates[b].time) {
        // Equal points (tolerance 0) would drop each other: the earlier one stays.
        const bool same = worse[a].time == estimates[b].time && worse[a].cost == estimates[b].cost;
        dominated = !same || a < b;
      }
    }
    if (!dominated) keep.push_back(b);
  }
  return keep;
}

std::vector<size_t> spread_over_times(const std::vector<size_t>& promising, const std::vector<CostTime>& est, size_t room) {
  if (promising.size() <= room) return promising;
  double lo = INFINITY, hi = -INFINITY;
  for (size_t k : promising) {
    lo = std::min(lo, std::log(est[k].time));
    hi = std::max(hi, std::log(est[k].time));
  }
  std::vector<std::vector<size_t>> bands(room);
  for (size_t k : promising) {
    const double x = hi > lo ? (std::log(est[k].time) - lo) / (hi - lo) : 0;
    bands[std::min(room - 1, static_cast<size_t>(x * static_cast<double>(room)))].push_back(k);
  }
  for (std::vector<size_t>& b : bands) {
    std::stable_sort(b.begin(), b.end(), [&](size_t x, size_t y) {
      return est[x].cost != est[y].cost ? est[x].cost < est[y].cost : est[x].time < est[y].time;
    });
  }
  // The fastest band gives its fastest mix first: the front's end, what the budget buys at most.
  std::stable_sort(bands.front().begin(), bands.front().end(), [&](size_t x, size_t y) { return est[x].time < est[y].time; });
  std::vector<size_t> out;
  for (size_t round = 0; out.size() < room; ++round) {
    for (const std::vector<size_t>& b : bands) {
      if (round < b.size() && out.size() < room) out.push_back(b[round]);
    }
  }
  return out;
}

}  // namespace hetsim
