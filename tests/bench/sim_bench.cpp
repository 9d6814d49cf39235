// File: tests/bench/sim_bench.cpp
// Simulating a 1 GiB all-reduce over 16 ... 4096 GPUs (nodes of 8 A100 behind NVSwitch,
// 8 x 200 Gb/s NICs each, one switch). Reports wall time per simulation (process start and
// platform build included) and SimGrid activities per wall second. Targets (issue #3): phase
// fidelity, 1024 GPUs under 1 s, 4096 GPUs under 5 s; the ring to 65 536 GPUs (issue #13).
#include <benchmark/benchmark.h>

#include "sim/collective.hpp"
#include "sim/executor.hpp"

namespace hetsim {
namespace {

Cluster a100_cluster(int gpus) {
  const Device a100 = load_device(std::filesystem::path(HETSIM_TEST_SOURCE_DIR) / "kernels_profile/devices/A100-SXM4-40GB.yaml");
  Cluster c;
  c.name = "bench-a100";
  NodeType nt;
  nt.name = "dgx-a100";
  nt.count = gpus / 8;
  nt.gpu = a100;
  nt.gpus_per_node = 8;
  nt.intra.fabric = IntraFabric::kNvswitch;
  nt.intra.bandwidth_Bps = 300e9;
  nt.intra.latency_s = 1e-6;
  nt.nic.count = 8;
  nt.nic.bandwidth_Bps = 25e9;
  nt.nic.latency_s = 2e-6;
  c.node_types = {nt};
  c.network.switch_latency_s = 1e-6;
  index_gpus(c);
  return c;
}

void run_allreduce(benchmark::State& state, Fidelity fidelity, Algorithm algorithm) {
  const int n = static_cast<int>(state.range(0));
  const Cluster c = a100_cluster(n);
  Program p;
  p.devices.resize(n);
  std::vector<int> group(n);
  for (int i = 0; i < n; ++i) group[i] = i;
  CollectiveTask t = collective(CollectiveOp::kAllReduce, group, 1024.0 * 1024 * 1024);
  t.algorithm = algorithm;
  p.add({"ar", t, {}});
  uint64_t activities = 0;
  double simulated_s = 0;
  for (auto _ : state) {
    const SimResult r = simulate(p, c, SimOptions{fidelity});
    activities += r.activities;
    simulated_s = r.iteration_time_s;
  }
  state.SetItemsProcessed(static_cast<int64_t>(activities));
  state.counters["activities_per_s"] = benchmark::Counter(static_cast<double>(activities), benchmark::Counter::kIsRate);
  state.counters["simulated_s"] = simulated_s;
}

void BM_Sim_RingAllReducePhase(benchmark::State& s) { run_allreduce(s, Fidelity::kPhase, Algorithm::kRing); }
void BM_Sim_RingAllReduceStep(benchmark::State& s) { run_allreduce(s, Fidelity::kStep, Algorithm::kRing); }
void BM_Sim_AutoAllReducePhase(benchmark::State& s) { run_allreduce(s, Fidelity::kPhase, Algorithm::kAuto); }
void BM_Sim_TreeAllReducePhase(benchmark::State& s) { run_allreduce(s, Fidelity::kPhase, Algorithm::kTree); }

// The alpha-beta fits of the collectives over every GPU that SPMD synthesis prices its steps with
// (planner/spmd/spmd_problem.cpp), each from the algorithm chosen at two sizes among those that
// apply: arg 0 the op (0 all-gather, 1 reduce-scatter, 2 all-reduce, 3 all-to-all: NCCL's PXN on
// these nodes, g·m·(m−1) = 33.5 M rail transfers at 16 384 GPUs; 4 all-to-all on NVLink-mesh
// nodes: pairwise, n − 1 rounds of n transfers), arg 1 the GPUs. Reports the
// fitted alpha and beta (unchanged by speed work).
void BM_Sim_AlphaBetaFit(benchmark::State& state) {
  const CollectiveOp ops[] = {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter, CollectiveOp::kAllReduce, CollectiveOp::kAllToAll,
                              CollectiveOp::kAllToAll};
  const CollectiveOp op = ops[state.range(0)];
  const int n = static_cast<int>(state.range(1));
  Cluster c = a100_cluster(n);
  if (state.range(0) == 4) {  // NVLink-mesh nodes (DGX-1): no PXN, NCCL's pairwise exchange (ring shifts)
    c.node_types[0].intra.fabric = IntraFabric::kNvlinkMesh;
    c.node_types[0].intra.links = 6;
  }
  const Fabric fabric(c);
  std::vector<int> all(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  AlphaBetaFit f;
  for (auto _ : state) f = fit_alpha_beta(op, all, c, fabric, 16.0 * 1024 * 1024, 256.0 * 1024 * 1024);
  state.counters["alpha_s"] = f.alpha_s;
  state.counters["beta_s_per_byte"] = f.beta_s_per_byte;
}
BENCHMARK(BM_Sim_AlphaBetaFit)->ArgsProduct({{0, 1, 2, 3, 4}, {1024, 4096, 16384}})->Unit(benchmark::kMillisecond)->UseRealTime();

// An all-to-all between vendors without GPUDirect RDMA between them (the shipped hethub-768:
// MI300X GPUs 0-127, A100 from 128): arg GPUs, half of each vendor around the cut, every
// cross-vendor pair staged through host memory in three legs (n²/2 staged flows). Phase fidelity,
// 1 GiB; reports the simulated time (unchanged by speed work).
void BM_Sim_StagedAllToAll(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Cluster c = load_cluster(std::filesystem::path(HETSIM_TEST_SOURCE_DIR) / "topologies/hethub-768.yaml");
  Program p;
  p.devices.resize(static_cast<size_t>(c.gpu_count()));
  std::vector<int> group;
  for (int g = std::max(0, 128 - n / 2); static_cast<int>(group.size()) < n; ++g) group.push_back(g);
  p.add({"a2a", collective(CollectiveOp::kAllToAll, group, 1024.0 * 1024 * 1024), {}});
  double simulated_s = 0;
  for (auto _ : state) simulated_s = simulate(p, c, SimOptions{Fidelity::kPhase}).iteration_time_s;
  state.counters["simulated_s"] = simulated_s;
}
BENCHMARK(BM_Sim_StagedAllToAll)->RangeMultiplier(2)->Range(32, 768)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

BENCHMARK(BM_Sim_RingAllReducePhase)->RangeMultiplier(2)->Range(16, 65536)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sim_AutoAllReducePhase)->RangeMultiplier(4)->Range(16, 4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sim_TreeAllReducePhase)->RangeMultiplier(4)->Range(16, 4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sim_RingAllReduceStep)->RangeMultiplier(2)->Range(16, 256)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace hetsim

BENCHMARK_MAIN();
