// File: tests/bench/moe_bench.cpp
// Mixture-of-experts plans at scale (issue targets): one iteration of a DeepSeek-V3 plan on 2048
// H100 (PP 16 stages of 128 GPUs, EP 64, ZeRO-1; < 10 s), and the hybrid planner with simulation
// of its candidates for DeepSeek-V3 on 1024 H100 (< 120 s).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "bench_inputs.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "sim/executor.hpp"

namespace hetsim {
namespace {

using bench::shipped;

// DGX H100 nodes (studies/validation/clusters/dgx-h100-4.yaml, 400 Gb/s NDR rails) scaled to `nodes`.
Cluster h100(int nodes) {
  Cluster c = load_cluster(std::filesystem::path(HETSIM_TEST_SOURCE_DIR) / "studies/validation/clusters/dgx-h100-4.yaml");
  c.node_types.front().count = nodes;
  index_gpus(c);
  return c;
}

void BM_Moe_SimulateDeepSeekV3On2048Gpus(benchmark::State& state) {
  ModelSpec m = load_model(shipped("workloads", "deepseek-v3"));
  m.training.global_batch = 2048;
  const Cluster c = h100(256);
  HybridPlan p;
  p.micro_batch = 128;
  p.recompute = RecomputeMode::kFull;
  p.gradient_sync = GradientSync::kZero1;
  p.overlap_param_gather = true;
  PipelinePlan pl;
  pl.micro_batches = 16;
  int next = 0;
  for (int s = 0; s < 16; ++s) {
    StagePlan st;
    st.ep = 64;
    for (int d = 0; d < 128; ++d) st.devices.push_back(128 * s + d);
    const int n = s < 3 ? 3 : 4;  // 3 x 3 + 13 x 4 = 61 layers
    st.chunks = {{next, next + n - 1}};
    next += n;
    pl.stages.push_back(st);
  }
  p.pipelines.push_back(pl);
  PipelineProgramBuilder builder(m, c, CostModel{});
  uint64_t activities = 0;
  for (auto _ : state) {
    const PipelineProgram prog = builder.build(p);
    const SimResult r = simulate(prog.program, c);
    activities += r.activities;
    state.counters["iteration_s"] = r.iteration_time_s;
    state.counters["tasks"] = static_cast<double>(prog.program.tasks.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(activities));
}
BENCHMARK(BM_Moe_SimulateDeepSeekV3On2048Gpus)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

void BM_Moe_PlanDeepSeekV3On1024Gpus(benchmark::State& state) {
  const ModelSpec m = load_model(shipped("workloads", "deepseek-v3"));
  const Cluster c = h100(128);
  for (auto _ : state) {
    HybridPlanner planner(m, c, CostModel{}, SimOptions{});
    const HybridSearch s = planner.search(HybridFlavour::kHetsim, HybridOptions{});
    state.counters["plans_fitting"] = static_cast<double>(s.fitting);
    benchmark::DoNotOptimize(s.chosen);
  }
}
BENCHMARK(BM_Moe_PlanDeepSeekV3On1024Gpus)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace hetsim
