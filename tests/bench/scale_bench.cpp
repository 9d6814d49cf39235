// File: tests/bench/scale_bench.cpp
// Scale (issue 13): one simulated iteration of gpt3-1.3b, data parallel (dp-even, 2 samples per
// GPU), on 32 ... 16 384 mixed GPUs (the default cluster's A100 and V100 nodes, as many of each);
// the whole `hetsim plan` (search, candidate simulations, baselines, upper bound) of gpt3-1.3b on
// 32 ... 16 384 of those GPUs (its limit, kMaxPlanGpus), of llama2-13b on 512 and of GPT-3
// 175B on 64 ... 16 384 A100-80GB (64: the fewest that hold it). Targets: 16 384 GPUs under 60 s; planning
// 512 GPUs under 20 s (gpt3-1.3b) and 60 s (llama2-13b). Wall time per run, process start and
// platform build included; counters: the simulated iteration time and SimGrid activities.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "bench_inputs.hpp"
#include "planner/strategies.hpp"
#include "sim/platform_server.hpp"
#include "sim/executor.hpp"

namespace hetsim {
namespace {

void BM_Scale_SimulateDataParallel(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const ModelSpec m = load_model(bench::shipped("workloads", "gpt3-1.3b"));
  const Cluster c = bench::scaled("a100-v100-2x2", gpus / 16);
  uint64_t activities = 0;
  double iteration_s = 0;
  for (auto _ : state) {
    const Evaluation e = evaluate_strategy("dp-even", m, c, CostModel{}, SimOptions{}, 2L * gpus);
    activities += e.report.sim_activities;
    iteration_s = e.report.iteration_time_s;
  }
  state.SetItemsProcessed(static_cast<int64_t>(activities));
  state.counters["gpus"] = gpus;
  state.counters["simulated_s"] = iteration_s;
}
BENCHMARK(BM_Scale_SimulateDataParallel)->RangeMultiplier(2)->Range(32, 16384)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// What every simulation pays whatever its program (one 1 ms kernel): the request to the cluster's
// platform server, a fork of it and the answer (sim/platform_server.hpp). The first run on a
// cluster also starts the server, which builds the engine and platform (one host per GPU and
// staging buffer, one link per fabric link): counter first_run_ms, a fresh server each time.
void BM_Scale_SimulationFixedCost(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const Cluster c = bench::scaled("a100-v100-2x2", gpus / 16);
  Program p;
  p.devices.resize(c.gpu_count());
  p.add({"kernel", ComputeTask{0, 1e-3, 0, 0}, {}});
  stop_platform_servers();
  const auto t0 = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(simulate(p, c).iteration_time_s);
  state.counters["first_run_ms"] = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto _ : state) {
    const SimResult r = simulate(p, c);
    benchmark::DoNotOptimize(r.iteration_time_s);
  }
  state.counters["gpus"] = gpus;
  stop_platform_servers();
}
BENCHMARK(BM_Scale_SimulationFixedCost)->RangeMultiplier(4)->Range(32, 131072)->Unit(benchmark::kMillisecond)->UseRealTime();

// `hetsim plan` of `model` on `gpus` GPUs of `cluster` (a shipped name; every node type scaled to
// as many nodes, of `gpus_per_node_set` GPUs together), through the executable.
void plan(benchmark::State& state, const std::string& model, const std::string& cluster = "a100-v100-2x2", int gpus_per_node_set = 16) {
  const int gpus = static_cast<int>(state.range(0));
  const std::string cmd = std::string(HETSIM_BINARY) + " -q plan --model " + model + " -c " + cluster +
                          " --set 'cluster.node_types[*].count=" + std::to_string(gpus / gpus_per_node_set) + "' > /dev/null";
  for (auto _ : state) {
    if (std::system(cmd.c_str()) != 0) state.SkipWithError("hetsim plan failed");
  }
  state.counters["gpus"] = gpus;
}
void BM_Scale_PlanGpt3(benchmark::State& state) { plan(state, "gpt3-1.3b"); }
void BM_Scale_PlanLlama13b(benchmark::State& state) { plan(state, "llama2-13b"); }
BENCHMARK(BM_Scale_PlanGpt3)->RangeMultiplier(2)->Range(32, 16384)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_Scale_PlanLlama13b)->Arg(512)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);
// GPT-3 175B on DGX A100 80GB nodes (selene-64 scaled): the hybrid search (TP x PP x DP), SPMD
// synthesis, baselines and upper bound.
void BM_Scale_PlanGpt3_175B(benchmark::State& state) { plan(state, "gpt3-175b", "selene-64", 8); }
BENCHMARK(BM_Scale_PlanGpt3_175B)->RangeMultiplier(4)->Range(64, 16384)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace hetsim
