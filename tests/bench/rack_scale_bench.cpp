// File: tests/bench/rack_scale_bench.cpp
// Rack-scale NVLink domains at scale (issue target: < 60 s): the hybrid planner with simulation
// of its candidates for Llama 3 70B on 1024 GB200 GPUs in NVL72 racks (topologies/gb200-nvl72-16
// cut to 256 trays: 14 full racks and one of 4 trays).
#include <benchmark/benchmark.h>

#include "bench_inputs.hpp"
#include "planner/hybrid/hybrid_planner.hpp"

namespace hetsim {
namespace {

using bench::shipped;

void BM_RackScale_PlanLlama3_70BOn1024Gb200(benchmark::State& state) {
  const ModelSpec m = load_model(shipped("workloads", "llama3-70b"));
  Cluster c = load_cluster(shipped("topologies", "gb200-nvl72-16"));
  c.node_types.front().count = 256;
  index_gpus(c);
  for (auto _ : state) {
    HybridPlanner planner(m, c, CostModel{}, SimOptions{});
    const HybridSearch s = planner.search(HybridFlavour::kHetsim, HybridOptions{});
    state.counters["plans_fitting"] = static_cast<double>(s.fitting);
    benchmark::DoNotOptimize(s.chosen);
  }
}
BENCHMARK(BM_RackScale_PlanLlama3_70BOn1024Gb200)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace hetsim
