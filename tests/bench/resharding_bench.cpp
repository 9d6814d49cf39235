// File: tests/bench/resharding_bench.cpp
// Cross-mesh resharding (issue targets): the sender-and-order search within its budget (1 s by
// default) on the largest n->m case of the paper, and each microbenchmark simulated in well
// under a second.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "planner/resharding/reshard_case.hpp"
#include "sim/executor.hpp"

namespace hetsim {
namespace {

Cluster p3() {
  return load_cluster(std::filesystem::path(HETSIM_TEST_SOURCE_DIR) / "topologies" / "p3-8xlarge-5.yaml");
}

// Case 4 of the paper (S8 over dim 1 -> S8 over dim 0 on (2,4) meshes, 2 GiB int32): 64 slices.
// Arg 0: broadcast (64 works), 1: send/recv (64 works), 2: case 2 (fully replicated -> split
// over hosts; 2 works of 8 candidate senders each).
ReshardCase paper_case(int which) {
  ReshardCase c;
  c.src = {2, 4, {0, 1, 2, 3, 4, 5, 6, 7}};
  c.dst = {2, 4, {8, 9, 10, 11, 12, 13, 14, 15}};
  c.tensor = {1024, 1024, 512};
  const DimSharding R = DimSharding::kReplicated;
  if (which == 2) {
    c.src_spec = {R, R, R};
    c.dst_spec = {DimSharding::kAxis0, R, R};
  } else {
    c.src_spec = {R, DimSharding::kBoth, R};
    c.dst_spec = {DimSharding::kBoth, R, R};
  }
  c.method = which == 1 ? ReshardMethod::kSendRecv : ReshardMethod::kBroadcast;
  c.balance = LoadBalance::kOrder;
  return c;
}

void BM_Resharding_OrderSearch(benchmark::State& state) {
  const Cluster cluster = p3();
  const ReshardCase c = paper_case(static_cast<int>(state.range(0)));
  const ReshardOutcome o = build_reshard(c, cluster);
  long nodes = 0;
  for (auto _ : state) {
    SenderLoads loads;
    const ReshardSchedule s = schedule_works(o.works, cluster, LoadBalance::kOrder, loads, c.order);
    nodes += s.expansions;
    benchmark::DoNotOptimize(s.model_makespan_s);
  }
  state.SetItemsProcessed(nodes);
  state.counters["works"] = static_cast<double>(o.works.works.size());
}
BENCHMARK(BM_Resharding_OrderSearch)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_Resharding_Simulate(benchmark::State& state) {
  const Cluster cluster = p3();
  const ReshardCase c = paper_case(static_cast<int>(state.range(0)));
  const ReshardOutcome o = build_reshard(c, cluster);
  for (auto _ : state) benchmark::DoNotOptimize(simulate(o.program, cluster).iteration_time_s);
}
BENCHMARK(BM_Resharding_Simulate)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hetsim
