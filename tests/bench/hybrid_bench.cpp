// File: tests/bench/hybrid_bench.cpp
// Hybrid plans at scale (issue targets): one iteration of GPT-3 175B as TP 8 x PP 16 x DP 8 on
// 1024 A100-80GB (< 5 s), the hybrid planner with simulation of its candidates for Llama 2 13B on
// 512 mixed GPUs (< 20 s) and for the 140B model on HETHUB's 768-GPU cluster (< 60 s).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "bench_inputs.hpp"
#include "planner/hybrid/hybrid_planner.hpp"
#include "sim/executor.hpp"
#include "sim/trace.hpp"

namespace hetsim {
namespace {

using bench::scaled;
using bench::shipped;

// Megatron's layout: TP groups innermost, then data-parallel copies, then stages; layers split
// as evenly as they go (the first stages take one more where they do not divide).
HybridPlan megatron_layout(const ModelSpec& m, int tp, int pp, int dp) {
  HybridPlan p;
  p.recompute = RecomputeMode::kFull;
  const int layers = static_cast<int>(m.layers);
  const auto first_layer = [&](int s) { return s * (layers / pp) + std::min(s, layers % pp); };
  for (int d = 0; d < dp; ++d) {
    PipelinePlan pl;
    pl.micro_batches = m.training.global_batch / dp;
    for (int s = 0; s < pp; ++s) {
      StagePlan st;
      st.tp = tp;
      const int group = s * dp + d;
      for (int k = 0; k < tp; ++k) st.devices.push_back(group * tp + k);
      st.chunks = {{first_layer(s), first_layer(s + 1) - 1}};
      pl.stages.push_back(st);
    }
    p.pipelines.push_back(pl);
  }
  return p;
}

void BM_Hybrid_SimulateGpt3OnThousandGpus(benchmark::State& state) {
  const ModelSpec m = load_model(shipped("workloads", "gpt3-175b"));
  const Cluster c = scaled("selene-64", 128);
  const HybridPlan plan = megatron_layout(m, 8, 16, 8);
  PipelineProgramBuilder builder(m, c, CostModel{});
  builder.set_mirror_pipelines(state.range(0) == 0);  // 1: every pipeline written out (--every-replica)
  uint64_t activities = 0;
  double iteration_s = 0, tasks = 0;
  for (auto _ : state) {
    const PipelineProgram p = builder.build(plan);
    const SimResult r = simulate(p.program, c);
    activities += r.activities;
    iteration_s = r.iteration_time_s;
    tasks = static_cast<double>(p.program.tasks.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(activities));
  state.counters["simulated_s"] = iteration_s;
  state.counters["tasks_held"] = tasks;
}
BENCHMARK(BM_Hybrid_SimulateGpt3OnThousandGpus)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// The same iteration traced (--trace): simulated with its flows recorded, then its Chrome trace
// written to a temporary file; reports its bytes.
void BM_Hybrid_TraceGpt3OnThousandGpus(benchmark::State& state) {
  const ModelSpec m = load_model(shipped("workloads", "gpt3-175b"));
  const Cluster c = scaled("selene-64", 128);
  const HybridPlan plan = megatron_layout(m, 8, 16, 8);
  PipelineProgramBuilder builder(m, c, CostModel{});
  SimOptions traced;
  traced.record_flows = true;
  double bytes = 0;
  for (auto _ : state) {
    const PipelineProgram p = builder.build(plan);
    const SimResult r = simulate(p.program, c, traced);
    const std::filesystem::path file = std::filesystem::temp_directory_path() / "hetsim-bench.trace.json";
    {
      std::ofstream out(file);
      write_chrome_trace(out, p.program, c, r);
    }
    bytes = static_cast<double>(std::filesystem::file_size(file));
    std::filesystem::remove(file);
  }
  state.counters["trace_bytes"] = bytes;
}
BENCHMARK(BM_Hybrid_TraceGpt3OnThousandGpus)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// The same layout (TP 8 x PP 16) on 128 ... 16 384 A100-80GB: DP = GPUs / 128, the global batch
// (1536) split over the pipelines. Program build and simulation, one run each.
void BM_Hybrid_SimulateGpt3Scaling(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const ModelSpec m = load_model(shipped("workloads", "gpt3-175b"));
  const Cluster c = scaled("selene-64", gpus / 8);
  const HybridPlan plan = megatron_layout(m, 8, 16, gpus / 128);
  PipelineProgramBuilder builder(m, c, CostModel{});
  uint64_t activities = 0;
  double iteration_s = 0;
  for (auto _ : state) {
    const PipelineProgram p = builder.build(plan);
    const SimResult r = simulate(p.program, c);
    activities += r.activities;
    iteration_s = r.iteration_time_s;
  }
  state.SetItemsProcessed(static_cast<int64_t>(activities));
  state.counters["gpus"] = gpus;
  state.counters["simulated_s"] = iteration_s;
}
BENCHMARK(BM_Hybrid_SimulateGpt3Scaling)->RangeMultiplier(2)->Range(128, 16384)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// Pipeline micro-batches held as two periods of the steady state (issue 12: memory must not grow
// with them): GPT-3 175B as TP 8 x PP 16 x DP 2 on 256 A100-80GB, arg 0 micro-batches per
// pipeline, arg 1: 1 = every micro-batch written out (--every-step). Build and simulation; the
// counters give the tasks held and the simulated iteration.
void BM_Hybrid_SimulateManyMicroBatches(benchmark::State& state) {
  const long m = state.range(0);
  ModelSpec model = load_model(shipped("workloads", "gpt3-175b"));
  model.training.global_batch = 2 * m;
  const Cluster c = scaled("selene-64", 32);
  const HybridPlan plan = megatron_layout(model, 8, 16, 2);
  PipelineProgramBuilder builder(model, c, CostModel{});
  builder.set_fold_rounds(state.range(1) == 0);
  double iteration_s = 0, tasks = 0;
  for (auto _ : state) {
    const PipelineProgram p = builder.build(plan);
    SimOptions sim;
    sim.every_step = state.range(1) != 0;
    const SimResult r = simulate(p.program, c, sim);
    iteration_s = r.iteration_time_s;
    tasks = static_cast<double>(p.program.tasks.size());
  }
  state.counters["tasks_held"] = tasks;
  state.counters["simulated_s"] = iteration_s;
}
BENCHMARK(BM_Hybrid_SimulateManyMicroBatches)
    ->Args({64, 0})->Args({512, 0})->Args({4096, 0})->Args({64, 1})->Args({512, 1})->Args({4096, 1})
    ->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// Deep pipelines (issue 37's targets): arg 0 = Megatron's 1T model (Korthikanti et al. 2022,
// Table 3) as TP 8 x PP 64 on 512 A100-80GB, 512 micro-batches of 1 (target 3 s); arg 1 =
// Llama 3.1 405B as TP 8 x PP 16 x DP 128 on 16 384 H100 (Meta's 24k cluster cut to 2048 nodes;
// target 30 s). Program build and simulation, one run each.
void BM_Hybrid_SimulateDeepPipelines(benchmark::State& state) {
  const bool llama = state.range(0) == 1;
  const ModelSpec m = load_model(llama ? shipped("workloads", "llama3.1-405b")
                                       : shipped("studies/validation/models", "korthikanti-1t"));
  const Cluster c = scaled(llama ? "meta-h100-24k" : "selene-64", llama ? 2048 : 64);
  const HybridPlan plan = megatron_layout(m, 8, llama ? 16 : 64, llama ? 128 : 1);
  PipelineProgramBuilder builder(m, c, CostModel{});
  builder.set_mirror_pipelines(state.range(1) == 0);  // 1: every pipeline written out (--every-replica)
  double iteration_s = 0, tasks = 0, diverged = 0;
  for (auto _ : state) {
    const PipelineProgram p = builder.build(plan);
    const SimResult r = simulate(p.program, c);
    iteration_s = r.iteration_time_s;
    tasks = static_cast<double>(p.program.tasks.size());
    diverged = r.mirrors_diverged ? 1 : 0;  // 1: the copies parted, so the written-out program was simulated too
  }
  state.counters["mirrors_diverged"] = diverged;
  state.counters["gpus"] = static_cast<double>(c.gpus.size());
  state.counters["tasks_held"] = tasks;
  state.counters["simulated_s"] = iteration_s;
}
BENCHMARK(BM_Hybrid_SimulateDeepPipelines)->Args({0, 0})->Args({1, 0})->Args({1, 1})->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

void BM_Hybrid_PlanLlama13bOn512MixedGpus(benchmark::State& state) {
  const ModelSpec m = load_model(shipped("workloads", "llama2-13b"));
  const Cluster c = scaled("a100-mi250x", 32);
  for (auto _ : state) {
    HybridPlanner planner(m, c, CostModel{}, SimOptions{});
    const HybridSearch s = planner.search(HybridFlavour::kHetsim, HybridOptions{});
    state.counters["plans_fitting"] = static_cast<double>(s.considered);
    benchmark::DoNotOptimize(s.chosen);
  }
}
BENCHMARK(BM_Hybrid_PlanLlama13bOn512MixedGpus)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

void BM_Hybrid_PlanHethub768(benchmark::State& state) {
  const ModelSpec m = load_model(shipped("workloads", "llama-140b"));
  const Cluster c = load_cluster(shipped("topologies", "hethub-768"));
  for (auto _ : state) {
    HybridPlanner planner(m, c, CostModel{}, SimOptions{});
    const HybridSearch s = planner.search(HybridFlavour::kHetsim, HybridOptions{});
    state.counters["plans_fitting"] = static_cast<double>(s.considered);
    benchmark::DoNotOptimize(s.chosen);
  }
}
BENCHMARK(BM_Hybrid_PlanHethub768)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace hetsim
