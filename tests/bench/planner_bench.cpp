// File: tests/bench/planner_bench.cpp
// The sharding-ratio LP (CLP dual simplex, bulk-loaded) for 8 ... 1024 devices of three speeds,
// 50 steps each with a compute and a communication term per device.
#include <benchmark/benchmark.h>

#include "planner/ratio_lp.hpp"

namespace hetsim {
namespace {

void BM_Planner_RatioLp(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  RatioProblem p;
  p.devices = n;
  for (int k = 0; k < 50; ++k) {
    RatioStep s;
    for (int d = 0; d < n; ++d) {
      const double per_sample = 1.0 + d % 3;  // three GPU types
      s.compute.push_back({d, per_sample * 0.01, 1e-5});
      s.comm.push_back({d, 0.002, 1e-5});
    }
    p.steps.push_back(s);
  }
  for (auto _ : state) {
    const RatioSolution s = solve_ratios(p);
    benchmark::DoNotOptimize(s.cost_s);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_Planner_RatioLp)->RangeMultiplier(2)->Range(8, 1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hetsim
