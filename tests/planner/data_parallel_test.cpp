// File: tests/planner/data_parallel_test.cpp
#include "planner/data_parallel.hpp"
#include "workloads/gemm_precision.hpp"

#include <gtest/gtest.h>

#include "base/input_error.hpp"
#include "planner/block_costs.hpp"
#include "planner/strategies.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

ModelSpec model(const std::string& name) { return load_model(test::shipped("workloads", name)); }
Cluster cluster(const std::string& name) { return load_cluster(test::shipped("topologies", name)); }

TEST(SplitProportionally, SumsToTotalAndBreaksTiesLow) {
  EXPECT_EQ(split_proportionally(10, {1, 1, 1}), (std::vector<long>{4, 3, 3}));
  EXPECT_EQ(split_proportionally(512, {2, 1}), (std::vector<long>{341, 171}));
  EXPECT_EQ(split_proportionally(3, {1, 1, 1, 1}), (std::vector<long>{1, 1, 1, 0}));
}

TEST(DataParallel, ProportionalBeatsEvenOnMixedCluster) {
  const ModelSpec m = model("gpt3-1.3b");
  const Cluster c = cluster("a100-v100-2x2");
  const CostModel cost;
  const Evaluation even = evaluate_strategy("dp-even", m, c, cost, {});
  const Evaluation prop = evaluate_strategy("dp-proportional", m, c, cost, {});
  ASSERT_TRUE(even.report.feasible);
  ASSERT_TRUE(prop.report.feasible);
  EXPECT_LT(prop.report.iteration_time_s, 0.9 * even.report.iteration_time_s);
}

TEST(DataParallel, APartialMicroBatchRunsFirstSoTheLastStepHidesTheGradientAllReduces) {
  // bert-large (global batch 256, micro-batch 8) on mixed clusters: shares by speed are not always
  // multiples of 8. Each GPU's gradient all-reduces run under its last step's backward, so that step
  // is a full micro-batch and the partial one runs first; last, a step of one or two samples left
  // the all-reduces exposed and the proportional split slower than the even one (103.2 ms against
  // 96.3 ms on a100-mi250x). And since a partial micro-batch runs fewer samples a second, the
  // proportional split takes its shares in whole micro-batches, or even ones, where its slowest
  // GPU's compute then ends first: never later than under the even split (the estimate leaves out
  // communication; with the shipped tables the CLI's h100-mi300x took 43.9 ms against 38.8 ms before).
  const ModelSpec m = model("bert-large");
  const long mb = m.training.micro_batch;
  int partial = 0;
  for (const char* name : {"a100-mi250x", "a100-v100-2x2", "pair-a100-mi300x", "h100-mi300x", "pair-h100-mi250x"}) {
    SCOPED_TRACE(name);
    const Cluster c = cluster(name);
    const DataParallelPlan plan = plan_data_parallel(m, c, CostModel{}, BatchSplit::kProportional, m.training.global_batch, true, true);
    ASSERT_TRUE(plan.feasible);
    const auto step_seconds = [&](int g, long k) {  // the forward of micro-batch step k on GPU g
      double s = 0;
      const std::string tag = "gpu" + std::to_string(g) + ".mb" + std::to_string(k) + ".";
      for (const Task& t : plan.program.tasks) {
        if (t.label.starts_with(tag) && t.label.ends_with(".fwd")) s += std::get<ComputeTask>(t.body).duration_s;
      }
      return s;
    };
    for (int g = 0; g < c.gpu_count(); ++g) {
      if (plan.samples[g] <= mb || plan.samples[g] % mb == 0) continue;
      ++partial;
      const long last = plan.samples[g] / mb;  // steps 0 .. last
      EXPECT_LT(step_seconds(g, 0), step_seconds(g, last)) << "gpu " << g << ": " << plan.samples[g] << " samples";
    }
    const DataParallelPlan even = plan_data_parallel(m, c, CostModel{}, BatchSplit::kEven, m.training.global_batch, true, true);
    ASSERT_TRUE(even.feasible);
    const auto slowest_compute_s = [&](const DataParallelPlan& p) {
      double worst = 0;
      for (int g = 0; g < c.gpu_count(); ++g) {
        double s = 0;
        const std::string tag = "gpu" + std::to_string(g) + ".";
        for (const Task& t : p.program.tasks) {
          if (t.label.starts_with(tag) && std::holds_alternative<ComputeTask>(t.body)) s += std::get<ComputeTask>(t.body).duration_s;
        }
        worst = std::max(worst, s);
      }
      return worst;
    };
    EXPECT_LE(slowest_compute_s(plan), slowest_compute_s(even) * (1 + 1e-9));
  }
  EXPECT_GT(partial, 0);
  // Where the GPUs' speeds differ much, the proportional split is much the faster end to end.
  const Cluster c = cluster("a100-v100-2x2");
  const Evaluation even = evaluate_strategy("dp-even", m, c, CostModel{}, {});
  const Evaluation prop = evaluate_strategy("dp-proportional", m, c, CostModel{}, {});
  ASSERT_TRUE(even.report.feasible && prop.report.feasible);
  EXPECT_LT(prop.report.iteration_time_s, 0.8 * even.report.iteration_time_s);
}

TEST(DataParallel, GpusLeftWithoutASampleAreSaid) {
  // 16 samples over 32 GPUs: half compute nothing yet join the all-reduce. 32 samples: none idle.
  const ModelSpec m = model("bert-base");
  const Cluster c = cluster("a100-v100-2x2");
  const auto said = [&](const std::string& strategy, long batch) {
    for (const std::string& a : evaluate_strategy(strategy, m, c, CostModel{}, {}, batch).report.assumptions) {
      if (a.find("get no sample of the global batch") != std::string::npos) return a;
    }
    return std::string();
  };
  EXPECT_EQ(said("dp-even", 16).substr(0, 76), "16 of 32 GPUs get no sample of the global batch of 16 (dp-even): they hold t");
  EXPECT_NE(said("dp-even", 16).find("A global batch of at least 32 gives each GPU one"), std::string::npos);
  EXPECT_EQ(said("dp-even", 32), "");
  EXPECT_NE(said("dp-proportional", 40).find("rounds to none"), std::string::npos);
}

TEST(DataParallel, ProportionalEqualsEvenOnHomogeneousCluster) {
  const ModelSpec m = model("gpt3-1.3b");
  const Cluster c = cluster("a100-8x8");
  const CostModel cost;
  const double even = evaluate_strategy("dp-even", m, c, cost, {}).report.iteration_time_s;
  const double prop = evaluate_strategy("dp-proportional", m, c, cost, {}).report.iteration_time_s;
  EXPECT_NEAR(prop / even, 1.0, 0.01);
}

TEST(DataParallel, GradientCommunicationOverlapsBackward) {
  const ModelSpec m = model("gpt3-1.3b");
  const Cluster c = cluster("a100-8x8");
  const Evaluation ev = evaluate_strategy("dp-even", m, c, CostModel{}, {});
  ASSERT_TRUE(ev.report.feasible);
  const DeviceReport& d = ev.report.devices[0];
  // Without overlap the iteration would take compute + comm; at least half of comm is hidden.
  const double exposed_comm = ev.report.iteration_time_s - d.compute_s;
  EXPECT_GE(exposed_comm, 0);
  EXPECT_LT(exposed_comm, 0.5 * d.comm_s) << "compute " << d.compute_s << " comm " << d.comm_s;
}

TEST(DataParallel, ShareFollowsSpeed) {
  const ModelSpec m = model("gpt3-1.3b");
  const Cluster c = cluster("a100-v100-2x2");
  const DataParallelPlan p = plan_data_parallel(m, c, CostModel{}, BatchSplit::kProportional, 512);
  ASSERT_TRUE(p.feasible);
  long total = 0;
  for (long s : p.samples) total += s;
  EXPECT_EQ(total, 512);
  EXPECT_GT(p.samples[0], p.samples[31]);  // A100 gets more than V100
  // Whole samples: every GPU within one sample of its exact speed-proportional share.
  double speed = 0;
  for (double v : p.speed_samples_per_s) speed += v;
  for (size_t g = 0; g < p.samples.size(); ++g) {
    EXPECT_NEAR(static_cast<double>(p.samples[g]), 512 * p.speed_samples_per_s[g] / speed, 1.0) << g;
  }
}

TEST(DataParallel, IdenticalStepsAsOneTaskGiveTheTimesOfEveryStep) {
  // bert-base, global batch 4096 on 32 mixed GPUs at micro-batch 16: 7-10 steps per GPU.
  const ModelSpec m = model("bert-base");
  const Cluster c = cluster("a100-v100-2x2");
  for (const char* strategy : {"dp-even", "dp-proportional"}) {
    SimOptions every;
    every.every_step = true;
    const Evaluation all = evaluate_strategy(strategy, m, c, CostModel{}, every, 4096);
    const Evaluation once = evaluate_strategy(strategy, m, c, CostModel{}, {}, 4096);
    ASSERT_TRUE(all.report.feasible && once.report.feasible) << strategy;
    EXPECT_LT(once.program.tasks.size() * 4, all.program.tasks.size()) << strategy;
    EXPECT_NEAR(once.report.iteration_time_s / all.report.iteration_time_s, 1.0, 1e-9) << strategy;
    EXPECT_NEAR(once.report.mfu / all.report.mfu, 1.0, 1e-9) << strategy;
    ASSERT_EQ(once.report.devices.size(), all.report.devices.size());
    for (size_t d = 0; d < all.report.devices.size(); ++d) {
      EXPECT_DOUBLE_EQ(once.report.devices[d].peak_memory_bytes, all.report.devices[d].peak_memory_bytes) << d;
      EXPECT_NEAR(once.report.devices[d].compute_s / all.report.devices[d].compute_s, 1.0, 1e-9) << d;
    }
  }
}

TEST(DataParallel, ReusedCollectiveTimesGiveTheTimesOfEveryCollective) {
  // gpt3-1.3b on 32 mixed GPUs: its gradient buckets are all-reduces over every GPU, one after the
  // other on the data stream; by default a bucket identical to one already simulated takes its time.
  const ModelSpec m = model("gpt3-1.3b");
  const Cluster c = cluster("a100-v100-2x2");
  for (const char* strategy : {"dp-even", "dp-proportional"}) {
    SimOptions every;
    every.every_collective = true;
    const Evaluation all = evaluate_strategy(strategy, m, c, CostModel{}, every);
    const Evaluation reused = evaluate_strategy(strategy, m, c, CostModel{}, {});
    ASSERT_TRUE(all.report.feasible && reused.report.feasible) << strategy;
    EXPECT_LT(reused.report.sim_activities, all.report.sim_activities) << strategy;
    EXPECT_NEAR(reused.report.iteration_time_s / all.report.iteration_time_s, 1.0, 1e-12) << strategy;
    ASSERT_EQ(reused.report.devices.size(), all.report.devices.size());
    for (size_t d = 0; d < all.report.devices.size(); ++d) {
      EXPECT_NEAR(reused.report.devices[d].comm_s / all.report.devices[d].comm_s, 1.0, 1e-12) << d;
      EXPECT_NEAR(reused.report.devices[d].idle_s, all.report.devices[d].idle_s, 1e-12 * all.report.iteration_time_s) << d;
      EXPECT_DOUBLE_EQ(reused.report.devices[d].peak_memory_bytes, all.report.devices[d].peak_memory_bytes) << d;
    }
  }
}

TEST(DataParallel, ReplicasWrittenOnceGiveTheTimesOfEveryReplica) {
  // GPUs of one type, node health and share compute in lockstep: written once and mirrored, they
  // give every figure of each written out. A straggler node (simulated only) and dp-proportional's
  // uneven shares (one sample more for some GPUs of a type) make classes of their own.
  Cluster slow = load_cluster(test::shipped("topologies", "a100-v100-2x2"),
                              {FieldOverride{"cluster", "node_types[0].degraded_nodes", "[{node: 1, compute_slowdown: 1.3}]"}});
  const Cluster mixed = cluster("a100-v100-2x2");
  struct Case {
    const Cluster* cluster;
    const char* model;
    const char* strategy;
    long batch;
    size_t streams;  // compute streams written once: kinds of GPU
  };
  for (const Case& k : {Case{&mixed, "gpt3-1.3b", "dp-even", 512, 2}, Case{&slow, "bert-base", "dp-even", 512, 3},
                        Case{&mixed, "bert-base", "dp-proportional", 500, 3}, Case{&slow, "bert-base", "dp-proportional", 4096, 3}}) {
    SCOPED_TRACE(std::string(k.model) + " " + k.strategy + " on " + (k.cluster == &slow ? "a straggler" : "a100-v100-2x2"));
    SimOptions every;
    every.every_replica = true;
    const Evaluation all = evaluate_strategy(k.strategy, model(k.model), *k.cluster, CostModel{}, every, k.batch);
    const Evaluation once = evaluate_strategy(k.strategy, model(k.model), *k.cluster, CostModel{}, {}, k.batch);
    ASSERT_TRUE(all.report.feasible && once.report.feasible);
    size_t optimizers = 0;
    for (const Task& t : once.program.tasks) optimizers += t.label.ends_with(".optimizer") ? 1 : 0;
    EXPECT_EQ(optimizers, k.streams);
    EXPECT_LT(once.program.tasks.size() * 4, all.program.tasks.size());
    EXPECT_LT(once.report.sim_activities, all.report.sim_activities);
    EXPECT_EQ(once.report.iteration_time_s, all.report.iteration_time_s);
    EXPECT_EQ(once.report.mfu, all.report.mfu);
    // Shares of the compute time by source: the same, but for the order the devices' sums are added in.
    ASSERT_EQ(once.report.compute_time_sources.size(), all.report.compute_time_sources.size());
    for (size_t i = 0; i < all.report.compute_time_sources.size(); ++i) {
      EXPECT_EQ(once.report.compute_time_sources[i].first, all.report.compute_time_sources[i].first);
      EXPECT_NEAR(once.report.compute_time_sources[i].second, all.report.compute_time_sources[i].second, 1e-12)
          << all.report.compute_time_sources[i].first;
    }
    ASSERT_EQ(once.report.devices.size(), all.report.devices.size());
    for (size_t d = 0; d < all.report.devices.size(); ++d) {
      EXPECT_EQ(once.report.devices[d].compute_s, all.report.devices[d].compute_s) << d;
      EXPECT_EQ(once.report.devices[d].comm_s, all.report.devices[d].comm_s) << d;
      EXPECT_EQ(once.report.devices[d].idle_s, all.report.devices[d].idle_s) << d;
      EXPECT_EQ(once.report.devices[d].peak_memory_bytes, all.report.devices[d].peak_memory_bytes) << d;
    }
  }
}

TEST(DataParallel, AGlobalBatchOfABillionSimulatesInAProgramOfFewTasks) {
  const DataParallelPlan p = plan_data_parallel(model("bert-base"), cluster("a100-v100-2x2"), CostModel{},
                                                BatchSplit::kProportional, 1'000'000'000);
  ASSERT_TRUE(p.feasible);
  EXPECT_LT(p.program.tasks.size(), 32u * 200);  // each GPU: one collapsed task, its last step, the optimizer
}

TEST(DataParallel, TooBigModelIsInfeasibleNamingDeviceAndShortfall) {
  const Evaluation ev = evaluate_strategy("dp-even", model("llama2-7b"), cluster("a100-8x8"), CostModel{}, {});
  EXPECT_FALSE(ev.report.feasible);
  EXPECT_NE(ev.report.infeasible_reason.find("gpu0 (A100-SXM4-40GB) needs"), std::string::npos) << ev.report.infeasible_reason;
  EXPECT_NE(ev.report.infeasible_reason.find("short by"), std::string::npos);
}

TEST(DataParallel, FeasiblePlansFitEveryDevice) {
  const Evaluation ev = evaluate_strategy("dp-proportional", model("gpt3-1.3b"), cluster("a100-v100-2x2"), CostModel{}, {});
  ASSERT_TRUE(ev.report.feasible);
  for (const DeviceReport& d : ev.report.devices) {
    EXPECT_LE(d.peak_memory_bytes, d.memory_capacity_bytes) << d.name;
    EXPECT_GT(d.peak_memory_bytes, 0.5 * d.memory_capacity_bytes) << d.name;  // 1.3B x 16 B + activations
  }
}

TEST(DataParallel, Bf16ModelFallsBackOnV100) {
  ModelSpec m = model("bert-base");
  m.training.dtype = DType::kBf16;
  const Cluster c = cluster("a100-v100-2x2");
  EXPECT_THROW((void)plan_data_parallel(m, c, CostModel{}, BatchSplit::kEven, 64), InputError);
  m.training.dtype_fallback = DType::kFp16;
  EXPECT_TRUE(plan_data_parallel(m, c, CostModel{}, BatchSplit::kEven, 64).feasible);
}

TEST(DataParallel, GradientsAccumulateInFp32UnderBf16AsMegatronForces) {
  // Mixed-precision Adam: 2 (weights) + 2 (gradients) + 4 (master) + 8 (moments) = 16 bytes per
  // parameter; with fp32 gradients 18, and the gradient all-reduce moves 4 bytes per parameter.
  ModelSpec m = model("llama2-7b");
  ASSERT_EQ(m.training.dtype, DType::kBf16);
  EXPECT_TRUE(m.training.fp32_grads);  // grad_accumulation: auto
  EXPECT_EQ(state_bytes_per_param(m, DType::kBf16, false), 18);
  EXPECT_EQ(grad_bytes_per_param(m, DType::kBf16), 4);
  m.training.fp32_grads = false;  // grad_accumulation: dtype
  EXPECT_EQ(state_bytes_per_param(m, DType::kBf16, false), 16);
  EXPECT_EQ(grad_bytes_per_param(m, DType::kBf16), 2);
  EXPECT_FALSE(model("gpt3-1.3b").training.fp32_grads);  // fp16: Megatron's default keeps fp16 gradients
}

TEST(DataParallel, Fp8ParamGatherKeepsNoSixteenBitCopyOfTheFp8Weights) {
  // Megatron's --fp8-param-gather: the GEMM weights live only in FP8 (and its transposed copy, which
  // Blackwell's FP8 GEMMs do without), so
  // the 2 bytes of their 16-bit copy leave every device, and ZeRO-1 gathers them in 1 byte (per-tensor
  // scaling) or in 16 bits through the gradient buffer (MXFP8).
  ModelSpec m = model("llama2-7b");
  m.training.fp32_grads = false;
  m.training.gemm_precision = GemmPrecision::kFp8Current;
  const double share = gemm_precision_param_share(m);
  ASSERT_GT(share, 0.9);
  ASSERT_LT(share, 1.0);
  const double copies = low_precision_copy_bytes_per_param(m, false);
  EXPECT_DOUBLE_EQ(copies, 2 * share);  // rowwise and transposed
  EXPECT_DOUBLE_EQ(low_precision_copy_bytes_per_param(m, true), share);  // where FP8 GEMMs take any layout
  EXPECT_DOUBLE_EQ(state_bytes_per_param(m, DType::kBf16, false), 16 + copies);
  EXPECT_DOUBLE_EQ(state_bytes_per_param(m, DType::kBf16, true), 16 + share);
  // The optimizer recasts the updated weights to one copy fewer there: 1 byte less per such weight.
  EXPECT_NEAR(optimizer_traffic_per_param(m, DType::kBf16, false) - optimizer_traffic_per_param(m, DType::kBf16, true), share, 1e-12);
  EXPECT_DOUBLE_EQ(held_weight_bytes_per_param(m, DType::kBf16), 2);
  EXPECT_DOUBLE_EQ(gathered_weight_bytes_per_param(m, DType::kBf16), 2);
  m.training.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(state_bytes_per_param(m, DType::kBf16, false), 16 + copies - 2 * share);
  EXPECT_DOUBLE_EQ(held_weight_bytes_per_param(m, DType::kBf16), 2 * (1 - share));
  EXPECT_DOUBLE_EQ(gathered_weight_bytes_per_param(m, DType::kBf16), 2 * (1 - share) + share);
  m.training.gemm_precision = GemmPrecision::kMxfp8;
  EXPECT_DOUBLE_EQ(held_weight_bytes_per_param(m, DType::kBf16), 2 * (1 - share));
  EXPECT_DOUBLE_EQ(gathered_weight_bytes_per_param(m, DType::kBf16), 2);
}

TEST(DataParallel, OptimizerStepMovesWhatMegatronsPassesMove) {
  // fp16 Adam: gradient to fp32 (2 + 4), unscale (4 + 4), norm (4), update (read 4 + 4 + 8, write
  // 4 + 8), weights back to fp16 (4 + 2) = 52 bytes; bf16 with fp32 gradients skips the copy and
  // the unscale: 38; fp32 SGD: update (4 + 4 + 4, 4 + 4) and norm = 24.
  ModelSpec m = model("gpt3-1.3b");
  EXPECT_EQ(optimizer_traffic_per_param(m, DType::kFp16, false), 52);
  m.training.fp32_grads = true;
  EXPECT_EQ(optimizer_traffic_per_param(m, DType::kBf16, false), 38);
  m.training.optimizer = Optimizer::kSgd;
  EXPECT_EQ(optimizer_traffic_per_param(m, DType::kFp32, false), 24);
}

TEST(UpperBound, HomogeneousClusterBoundIsItsBestStrategy) {
  const ModelSpec m = model("bert-base");
  const Cluster c = cluster("a100-8x8");
  std::vector<std::string> notes;
  const double bound = upper_bound_samples_per_s(m, c, CostModel{}, {}, notes);
  const double best = evaluate_strategy("dp-even", m, c, CostModel{}, {}).report.samples_per_s;
  EXPECT_NEAR(bound / best, 1.0, 1e-9);
}

}  // namespace
}  // namespace hetsim
