// File: tests/studies/validation_test.cpp
// Validation runs: the run file, each kind's prediction, Megatron grids, calibration classes and
// error bars, and `hetsim validate --runs`.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/temp_dir.hpp"
#include "planner/hybrid/stage_work.hpp"
#include "studies/validation/calibration.hpp"
#include "studies/validation/megatron_grid.hpp"
#include "studies/validation/run_evaluation.hpp"
#include "test_support.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

std::filesystem::path runs_file() { return test::source_dir() / "tests/fixtures/validation/runs.yaml"; }


double figure(const RunResult& r, const std::string& key) {
  for (const FigureResult& f : r.figures) {
    if (f.key == key) return f.predicted;
  }
  return -1;
}

TEST(RunFile, ReadsEveryKindWithItsFigures) {
  const std::vector<ValidationRun> runs = load_runs(runs_file());
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].kind, RunKind::kCollective);
  EXPECT_EQ(runs[0].collective.size_bytes, 1024.0 * 1024 * 1024);
  EXPECT_EQ(runs[0].class_name, "A100 NVSwitch collectives");
  ASSERT_EQ(runs[0].measured.size(), 2u);
  EXPECT_EQ(runs[0].measured[0].key, "busbw_Bps");
  EXPECT_EQ(runs[0].measured[0].value, 230e9);
  EXPECT_EQ(runs[1].kind, RunKind::kMatmul);
  EXPECT_TRUE(runs[1].cluster.empty());
  EXPECT_EQ(runs[2].kind, RunKind::kLayer);
  EXPECT_EQ(runs[2].layer.recompute, RecomputeMode::kSelective);
  EXPECT_EQ(runs[2].nodes, 1);
  EXPECT_EQ(runs[3].kind, RunKind::kTraining);
  ASSERT_TRUE(runs[3].training.megatron.has_value());
  EXPECT_EQ(runs[3].training.global_batch, 16);
  EXPECT_EQ(runs[3].training.flops, FlopsFormula::kNarayanan2021);
  EXPECT_EQ(runs[3].cluster, test::shipped("topologies", "selene-64"));
}

TEST(RunEvaluation, CollectiveBusBandwidthIsTheNcclTestsFactorTimesSizeOverTime) {
  const std::vector<ValidationRun> runs = load_runs(runs_file());
  const RunResult r = evaluate_run(runs[0], CostModel{}, SimOptions{});
  const double t = figure(r, "time_s");
  ASSERT_GT(t, 0);
  EXPECT_DOUBLE_EQ(figure(r, "busbw_Bps"), 1024.0 * 1024 * 1024 / t * 2 * 7 / 8);
  EXPECT_EQ(r.scope.name(), "1 node");
  EXPECT_EQ(r.scope.gpus, std::set<std::string>{"A100-SXM4-40GB"});
}

TEST(RunEvaluation, MatmulIsTheCostModelsProduct) {
  const std::vector<ValidationRun> runs = load_runs(runs_file());
  const CostModel cost;
  const RunResult r = evaluate_run(runs[1], cost, SimOptions{});
  Op op = Op::make("m", OpKind::kLinear, 0);
  op.gemm = {1, 8192, 8192, 8192};
  op.fwd_flops = 2.0 * 8192 * 8192 * 8192;
  op.fwd_bytes = 3.0 * 8192 * 8192 * 2;
  const Device d = load_shipped_device("A100-SXM4-40GB", Diagnostic{});
  const double t = cost.op_time(d, op, DType::kFp16, Pass::kForward).seconds;
  EXPECT_DOUBLE_EQ(figure(r, "tflops"), op.fwd_flops / t / 1e12);
  EXPECT_EQ(r.scope.name(), "1 GPU");
}

TEST(RunEvaluation, MatmulShapesAreTimedAsTheSumOfTheirProducts) {
  // A per-layer GEMM benchmark's figure (Transformer Engine's benchmark_gemm.py) is its products' times
  // summed: a run of `shapes` predicts the sum of the single-product runs, and TFLOP/s over the sum.
  ValidationRun one;
  one.kind = RunKind::kMatmul;
  one.matmul.device = "B300";
  one.matmul.dtype = DType::kNvfp4;
  one.matmul.linear = true;
  one.measured = {{"time_s", 1e-3}};
  const std::vector<GemmShape> shapes = {{1, 15872, 12288, 4096}, {1, 4096, 4096, 15872}};
  const CostModel cost;
  double sum = 0, flops = 0;
  for (const GemmShape& g : shapes) {
    one.matmul.shapes = {g};
    sum += figure(evaluate_run(one, cost, SimOptions{}), "time_s");
    flops += 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  }
  ValidationRun both = one;
  both.matmul.shapes = shapes;
  both.measured = {{"time_s", 1e-3}, {"tflops", 1}};
  const RunResult r = evaluate_run(both, cost, SimOptions{});
  EXPECT_DOUBLE_EQ(figure(r, "time_s"), sum);
  EXPECT_DOUBLE_EQ(figure(r, "tflops"), flops / sum / 1e12);
}

TEST(RunEvaluation, LayerTimesIncludeTheTensorParallelCollectives) {
  const std::vector<ValidationRun> runs = load_runs(runs_file());
  const CostModel cost;
  const RunResult r = evaluate_run(runs[2], cost, SimOptions{});
  const Cluster c = test::shipped_cluster("selene-64");
  const ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const StageWorkKey key{2, 2, false, RecomputeMode::kSelective, StageProgram::kMegatron};
  const std::vector<BlockWork> w = stage_block_work(m, c.device_of(0), DType::kFp16, cost, key);
  EXPECT_DOUBLE_EQ(figure(r, "activation_bytes"), w[1].saved_bytes);
  EXPECT_GT(figure(r, "forward_s"), w[1].fwd_s());  // the row-parallel all-reduces take time
  EXPECT_GT(figure(r, "backward_s"), w[1].bwd_s());
}

TEST(MegatronGrid, RanksAreTensorThenDataThenPipeline) {
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));  // 24 layers
  m.training.global_batch = 32;
  Cluster c = test::shipped_cluster("selene-64");
  c.node_types.front().count = 2;
  index_gpus(c);
  MegatronGrid g;
  g.tp = 2;
  g.pp = 4;
  g.micro_batch = 2;
  g.schedule = PipelineSchedule::kInterleaved;
  g.chunks = 3;
  const HybridPlan p = megatron_plan(g, m, c, Diagnostic{});
  ASSERT_EQ(p.pipelines.size(), 2u);  // 16 GPUs / (2 x 4)
  EXPECT_EQ(p.pipelines[0].micro_batches, 8);
  EXPECT_EQ(p.pipelines[0].stages[0].devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.pipelines[1].stages[0].devices, (std::vector<int>{2, 3}));
  EXPECT_EQ(p.pipelines[0].stages[1].devices, (std::vector<int>{4, 5}));
  // 24 layers in 4 stages x 3 chunks of 2: stage 1 holds layers 2-3, 10-11, 18-19.
  EXPECT_EQ(p.pipelines[0].stages[1].chunks, (std::vector<LayerRange>{{2, 3}, {10, 11}, {18, 19}}));
  g.pp = 5;
  EXPECT_THROW((void)megatron_plan(g, m, c, Diagnostic{}), InputError);
}

TEST(MegatronGrid, ContextParallelRanksAndLayoutsThatCountTheEmbeddingAndLoss) {
  // 22 layers + embedding + loss = 24 units over 4 stages x 3 chunks: 2 each, so the first virtual
  // stage holds the embedding and layer 0, the last layer 21 and the loss. With cp 2 a stage copy is
  // tp x cp = 4 GPUs, ranks TP, then CP, then DP, then PP.
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  m.layers = 22;
  m.training.global_batch = 8;
  Cluster c = test::shipped_cluster("selene-64");
  c.node_types.front().count = 4;
  index_gpus(c);
  MegatronGrid g;
  g.tp = 2;
  g.cp = 2;
  g.pp = 4;
  g.micro_batch = 1;
  g.schedule = PipelineSchedule::kInterleaved;
  g.chunks = 3;
  g.embedding_in_split = g.loss_in_split = true;
  const HybridPlan p = megatron_plan(g, m, c, Diagnostic{});
  ASSERT_EQ(p.pipelines.size(), 2u);  // 32 GPUs / (2 x 2 x 4)
  EXPECT_EQ(p.pipelines[0].stages[0].devices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(p.pipelines[1].stages[0].devices, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(p.pipelines[0].stages[1].devices, (std::vector<int>{8, 9, 10, 11}));
  EXPECT_EQ(p.pipelines[0].stages[0].cp, 2);
  EXPECT_EQ(p.pipelines[0].stages[0].chunks, (std::vector<LayerRange>{{0, 0}, {7, 8}, {15, 16}}));
  EXPECT_EQ(p.pipelines[0].stages[3].chunks, (std::vector<LayerRange>{{5, 6}, {13, 14}, {21, 21}}));
  // One unit per virtual stage (10 layers + 2 over 4 x 3): the embedding and the loss alone.
  m.layers = 10;
  const HybridPlan q = megatron_plan(g, m, c, Diagnostic{});
  EXPECT_EQ(q.pipelines[0].stages[0].chunks.front(), LayerRange::embedding());
  EXPECT_EQ(q.pipelines[0].stages[3].chunks.back(), LayerRange::loss());
  EXPECT_EQ(q.pipelines[0].stages[1].chunks.front(), (LayerRange{0, 0}));
}

TEST(MegatronGrid, ExpertParallelGridsHoldTheirReplicasInOnePipeline) {
  // Mixtral (8 experts) on 16 GPUs, tp 1, pp 2, ep 8: the 8 data-parallel replicas of a stage are one
  // expert group, so the plan is one pipeline whose stages hold all 8 (micro-batch 8 x 1 split evenly).
  ModelSpec m = load_model(test::shipped("workloads", "mixtral-8x7b"));
  m.training.global_batch = 64;
  Cluster c = test::shipped_cluster("selene-64");
  c.node_types.front().count = 2;
  index_gpus(c);
  MegatronGrid g;
  g.pp = 2;
  g.ep = 8;
  const HybridPlan p = megatron_plan(g, m, c, Diagnostic{});
  ASSERT_EQ(p.pipelines.size(), 1u);
  EXPECT_EQ(p.micro_batch, 8);
  EXPECT_EQ(p.pipelines[0].micro_batches, 8);
  EXPECT_EQ(p.pipelines[0].stages[1].devices.front(), 8);
  EXPECT_EQ(p.pipelines[0].stages[1].ep, 8);
  EXPECT_EQ(p.pipelines[0].stages[1].dp(), 8);
}

TEST(RunEvaluation, NarayananFlopsFollowEquationThree) {
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-175b"));
  m.training.global_batch = 1536;
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  EXPECT_DOUBLE_EQ(narayanan_flops(m), 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)));
}

TEST(RunEvaluation, MegatronGridRunPredictsEveryFigure) {
  const std::vector<ValidationRun> runs = load_runs(runs_file());
  const RunResult r = evaluate_run(runs[3], CostModel{}, SimOptions{});
  ASSERT_TRUE(r.failure.empty()) << r.failure;
  const double t = figure(r, "iteration_time_s");
  ASSERT_GT(t, 0);
  ModelSpec m = load_model(test::shipped("workloads", "gpt3-1.3b"));
  m.training.global_batch = 16;
  EXPECT_NEAR(figure(r, "tflops_per_gpu"), narayanan_flops(m) / t / 8 / 1e12, 1e-9);
  EXPECT_GT(figure(r, "peak_memory_bytes"), 0);
  EXPECT_EQ(r.scope.name(), "1 node");
}

TEST(RunEvaluation, APeakIsTheNamedGpusAndAllocatedBytesLeaveTheReserveOut) {
  // The shipped toy pipeline run: 4 stages, the last of which holds the LM head and the loss.
  std::vector<ValidationRun> runs = load_runs(test::source_dir() / "studies/validation/peak-memory.yaml");
  const auto it = std::find_if(runs.begin(), runs.end(), [](const ValidationRun& r) { return r.name == "megatron-ci-toy-pp4-vp3-a100"; });
  ASSERT_NE(it, runs.end());
  ValidationRun run = *it;
  EXPECT_EQ(run.training.memory.gpu, MeasuredMemory::kLast);
  EXPECT_TRUE(run.training.memory.allocated);
  auto peak = [&](int gpu, bool allocated) {
    run.training.memory = {gpu, allocated};
    const RunResult r = evaluate_run(run, CostModel::shipped(), SimOptions{});
    EXPECT_TRUE(r.failure.empty()) << r.failure;
    return figure(r, "peak_memory_bytes");
  };
  const double last = peak(MeasuredMemory::kLast, false), seventh = peak(7, false), first = peak(0, false);
  const double highest = peak(MeasuredMemory::kHighest, false);
  EXPECT_EQ(last, seventh);  // 8 GPUs: the last is GPU 7
  EXPECT_NE(last, first);    // the first stage holds the embedding, the last the LM head and loss
  EXPECT_EQ(highest, std::max(last, first));
  EXPECT_GE(highest, std::max({peak(2, false), peak(4, false)}));
  EXPECT_DOUBLE_EQ(peak(MeasuredMemory::kLast, true), last - 1024.0 * 1024 * 1024);  // the runtime reserve
  run.training.memory = {8, false};
  EXPECT_THROW((void)evaluate_run(run, CostModel::shipped(), SimOptions{}), InputError);  // no GPU 8 of 8
}

TEST(RunFile, AMemoryFieldOtherThanMaxLastOrAnIndexIsRefusedWithItsLine) {
  const TempDir dir("validation-test");
  const std::filesystem::path file = dir.new_file("bad-memory", ".yaml",
      "- name: x\n  source: s\n  cluster: selene-64\n  model: gpt3-1.3b\n  strategy: dp-even\n"
      "  memory: {gpu: first, counts: allocated}\n  measured: {peak_memory_bytes: 1e9}\n");
  const test::CliRun r = test::run_hetsim("validate --runs " + file.string(), test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find(".yaml:6:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("memory.gpu: \"first\" is none of max"), std::string::npos) << r.output;
}

TEST(RunEvaluation, AGlobalBatchTooLargeToSimulateIsRefusedAtTheRunsLine) {
  // The plan's passes are over hetsim's limit: the refusal names the run's global_batch (its file and
  // line), where the planner alone can only name the model's training.global_batch.
  const TempDir dir("validation-test");
  const std::filesystem::path file = dir.new_file("huge-batch", ".yaml",
      "- name: x\n  source: s\n  cluster: selene-64\n  nodes: 1\n  model: gpt3-1.3b\n  global_batch: 1000000000000\n"
      "  megatron: {tp: 2, pp: 2, micro_batch: 1, recompute: full}\n  measured: {iteration_time_s: 2}\n");
  const test::CliRun r = test::run_hetsim("validate --runs " + file.string(), test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find(".yaml:6:17: error: [0].global_batch: the plan has"), std::string::npos) << r.output;
}

TEST(RunFile, ASegmentPlacesTheNodesThatManyToAnNvlinkDomain) {
  // 32 trays of GB200 racks of 18: filled in order, GPUs 64-127 are 8 of the first rack's and 56 of
  // the second's, and their all-reduce crosses NICs; placed 16 to a rack (Slurm's --segment, as
  // Megatron-Bridge's launcher asks for GB200), they are the second rack's 64 and it stays on NVLink,
  // as fast as the first rack's 64.
  const TempDir dir("validation-test");
  const std::string cluster = (test::source_dir() / "studies/validation/clusters/dgx-gb200-nvl72.yaml").string();
  auto busbw = [&](const std::string& placement, const std::string& group) {
    const std::filesystem::path file = dir.new_file("segment", ".yaml",
        "- name: x\n  source: s\n  cluster: " + cluster + "\n  nodes: 32\n" + placement +
        "  collective: {op: allreduce, size: 1GiB, group: " + group + "}\n  measured: {busbw_Bps: 1e11}\n");
    const RunResult r = evaluate_run(load_runs(file).front(), CostModel{}, SimOptions{});
    EXPECT_TRUE(r.failure.empty()) << r.failure;
    return figure(r, "busbw_Bps");
  };
  const double first_rack = busbw("", "0-63");
  EXPECT_LT(busbw("", "64-127"), 0.5 * first_rack);
  EXPECT_DOUBLE_EQ(busbw("  segment: 16\n", "64-127"), first_rack);
  // More to a rack than it holds, or a segment on single-node domains: refused at the field.
  const std::filesystem::path over = dir.new_file("segment-over", ".yaml",
      "- name: x\n  source: s\n  cluster: " + cluster + "\n  nodes: 38\n  segment: 19\n"
      "  collective: {op: allreduce, size: 1GiB}\n  measured: {busbw_Bps: 1e11}\n");
  const test::CliRun r = test::run_hetsim("validate --runs " + over.string(), test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find(".yaml:5:12: error: [0].segment: segment 19 places more nodes in an NVLink domain than gb200-tray's hold (18)"),
            std::string::npos) << r.output;
  const std::filesystem::path single = dir.new_file("segment-single", ".yaml",
      "- name: x\n  source: s\n  cluster: selene-64\n  nodes: 4\n  segment: 2\n"
      "  collective: {op: allreduce, size: 1GiB}\n  measured: {busbw_Bps: 1e11}\n");
  const test::CliRun s = test::run_hetsim("validate --runs " + single.string(), test::Capture::kStderr);
  EXPECT_EQ(s.rc, 2);
  EXPECT_NE(s.output.find("segment applies to node types whose NVLink domains span several nodes"), std::string::npos) << s.output;
}

RunResult synthetic(const ValidationRun& run, std::set<std::string> gpus, int nodes, std::vector<FigureResult> f) {
  RunResult r;
  r.run = &run;
  r.scope.gpus = std::move(gpus);
  r.scope.gpu_count = 8 * nodes;
  r.scope.nodes = nodes;
  r.figures = std::move(f);
  return r;
}

TEST(Calibration, ClassesSplitTimeFromMemoryAndStateMeanAndMax) {
  ValidationRun a, b, c;
  a.kind = b.kind = c.kind = RunKind::kTraining;
  a.class_name = b.class_name = "A";
  c.class_name = "";  // derived name
  c.kind = RunKind::kCollective;
  const std::vector<RunResult> results{
      synthetic(a, {"A100"}, 2, {{"iteration_time_s", 1.0, 1.1}, {"peak_memory_bytes", 10, 9}}),
      synthetic(b, {"A100"}, 4, {{"samples_per_s", 100, 97}}),
      synthetic(c, {"H100"}, 1, {{"busbw_Bps", 100, 104}})};
  const std::vector<CalibrationClass> classes = calibration_classes(results);
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_EQ(classes[0].name, "A");
  EXPECT_EQ(classes[0].quantity, Quantity::kTime);
  EXPECT_EQ(classes[0].rows, 2);
  EXPECT_NEAR(classes[0].mean_abs_error, 0.065, 1e-12);
  EXPECT_NEAR(classes[0].max_abs_error, 0.1, 1e-12);
  EXPECT_EQ(classes[0].scope, "multi-node");
  EXPECT_EQ(classes[1].quantity, Quantity::kMemory);
  EXPECT_NEAR(classes[1].mean_abs_error, 0.1, 1e-12);
  EXPECT_EQ(classes[2].name, "collective H100 1 node");
}

TEST(Calibration, TheBarComesFromAClassOfTheseGpusOrThereIsNone) {
  CalibrationClass coll{"coll A100", Quantity::kTime, RunKind::kCollective, {"A100"}, "1 node", 9, 0.02, 0.05, 0.04};
  CalibrationClass train_h{"train H100", Quantity::kTime, RunKind::kTraining, {"H100"}, "multi-node", 3, 0.08, 0.1, 0.1};
  CalibrationClass moe_h{"train H100 MoE", Quantity::kTime, RunKind::kTraining, {"H100"}, "multi-node", 6, 0.15, 0.6, 0.6, true};
  CalibrationClass train_a{"train A100", Quantity::kTime, RunKind::kTraining, {"A100"}, "multi-node", 4, 0.04, 0.07, 0.07};
  const std::vector<CalibrationClass> all{coll, train_h, moe_h, train_a};
  const auto a = nearest_error_bar(all, Quantity::kTime, RunKind::kTraining, {"A100"}, "multi-node");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->of.name, "train A100");
  EXPECT_TRUE(a->exact);
  EXPECT_EQ(a->text(), "±7.0 % (90th percentile of |error| over 4 calibration rows: train A100)");
  // Another scope of the same GPUs: that class, said to be not this setting.
  const auto one_node = nearest_error_bar(all, Quantity::kTime, RunKind::kTraining, {"A100"}, "1 node");
  ASSERT_TRUE(one_node.has_value());
  EXPECT_FALSE(one_node->exact);
  // An H100 plan: an H100 class, dense or MoE as the model is (not the one with more rows).
  EXPECT_EQ(nearest_error_bar(all, Quantity::kTime, RunKind::kTraining, {"H100"}, "multi-node", false)->of.name, "train H100");
  EXPECT_EQ(nearest_error_bar(all, Quantity::kTime, RunKind::kTraining, {"H100"}, "multi-node", true)->of.name, "train H100 MoE");
  // A dense plan on GPUs whose only rows are MoE runs (and the other way round): no time bar, and
  // the line says which rows there are; memory bars still come from the GPUs' peak-memory rows.
  CalibrationClass moe_b{"train B300 MoE", Quantity::kTime, RunKind::kTraining, {"B300"}, "1 node", 3, 0.03, 0.05, 0.05, true};
  CalibrationClass mem_b{"memory B300", Quantity::kMemory, RunKind::kTraining, {"B300"}, "1 node", 4, 0.02, 0.03, 0.03, true};
  EXPECT_FALSE(nearest_error_bar({moe_b, mem_b}, Quantity::kTime, RunKind::kTraining, {"B300"}, "1 node", false).has_value());
  EXPECT_EQ(nearest_error_bar({moe_b, mem_b}, Quantity::kTime, RunKind::kTraining, {"B300"}, "1 node", true)->of.name, "train B300 MoE");
  EXPECT_EQ(nearest_error_bar({moe_b, mem_b}, Quantity::kMemory, RunKind::kTraining, {"B300"}, "1 node", false)->of.name, "memory B300");
  EXPECT_EQ(missing_error_bar_text({moe_b, mem_b}, Quantity::kTime, RunKind::kTraining, {"B300"}, false),
            "no calibration for this GPU and setting (its calibration rows are of mixture-of-experts runs only: train B300 MoE)");
  EXPECT_EQ(missing_error_bar_text(all, Quantity::kTime, RunKind::kTraining, {"A100"}, true),
            "no calibration for this GPU and setting (its calibration rows are of dense runs only: train A100)");
  EXPECT_EQ(missing_error_bar_text(all, Quantity::kTime, RunKind::kTraining, {"V100"}, false),
            "no calibration for these GPU types in training runs");
  // FP8 GEMMs where the only dense H100 class trained in bf16: that class, not an exact match.
  const auto fp8 = nearest_error_bar(all, Quantity::kTime, RunKind::kTraining, {"H100"}, "multi-node", false, true);
  ASSERT_TRUE(fp8.has_value());
  EXPECT_EQ(fp8->of.name, "train H100");
  EXPECT_FALSE(fp8->exact);
  EXPECT_NE(fp8->text().find("nearest class, not this setting"), std::string::npos);
  // fp32 GEMMs (SIMT kernels) and 16-bit ones each take the class of their own format, whichever
  // has more rows; a class of A100 and V100 rows speaks for either GPU.
  CalibrationClass v16{"train V100 16-bit", Quantity::kTime, RunKind::kTraining, {"V100", "A100"}, "1 node", 4, 0.05, 0.11, 0.11};
  CalibrationClass v32{"train V100 fp32", Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", 8, 0.10, 0.107, 0.107};
  v32.fp32_gemms = true;
  const std::vector<CalibrationClass> v100{v32, v16};
  EXPECT_EQ(nearest_error_bar(v100, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node")->of.name, "train V100 16-bit");
  EXPECT_TRUE(nearest_error_bar(v100, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node")->exact);
  EXPECT_EQ(nearest_error_bar(v100, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", false, false, true)->of.name,
            "train V100 fp32");
  // Two stacks' rows of the same GPU and setting: the class of the profile in force, even with fewer
  // rows; a profile no class was predicted with takes the nearest, said to be another stack's. A
  // class of 1-GPU and 1-node rows speaks for both scopes.
  CalibrationClass old_stack{"train V100 2020", Quantity::kTime, RunKind::kTraining, {"V100"}, "mixed", 8, 0.02, 0.06, 0.06};
  old_stack.scopes = {"1 GPU", "1 node"};
  old_stack.profiles = {"stack-2020"};
  CalibrationClass new_stack{"train V100 2022", Quantity::kTime, RunKind::kTraining, {"V100"}, "mixed", 2, 0.025, 0.038, 0.038};
  new_stack.scopes = {"1 GPU", "1 node"};
  new_stack.profiles = {"stack-2022"};
  const std::vector<CalibrationClass> stacks{old_stack, new_stack};
  const auto in_force = nearest_error_bar(stacks, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", false, false, false, {"stack-2022"});
  ASSERT_TRUE(in_force.has_value());
  EXPECT_EQ(in_force->of.name, "train V100 2022");
  EXPECT_TRUE(in_force->exact);
  EXPECT_EQ(nearest_error_bar(stacks, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 GPU", false, false, false, {"stack-2020"})->of.name,
            "train V100 2020");
  const auto mine = nearest_error_bar(stacks, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", false, false, false, {"my-profile"});
  ASSERT_TRUE(mine.has_value());
  EXPECT_EQ(mine->of.name, "train V100 2020");  // more rows
  EXPECT_FALSE(mine->exact);
  EXPECT_NE(mine->text().find("rows of another calibration profile"), std::string::npos) << mine->text();
  EXPECT_FALSE(nearest_error_bar(stacks, Quantity::kTime, RunKind::kTraining, {"V100"}, "multi-node", false, false, false, {"stack-2022"})->exact);
  // Of two classes of one setting, the one of the prediction's GEMM format, even with a narrower bar.
  CalibrationClass fp16_rows{"x fp16", Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", 4, 0.02, 0.045, 0.045};
  fp16_rows.gemm_formats = {"16-bit"};
  CalibrationClass tf32_rows{"y tf32", Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", 4, 0.03, 0.073, 0.073};
  tf32_rows.gemm_formats = {"tf32"};
  const auto fp16_bar = nearest_error_bar({tf32_rows, fp16_rows}, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", false, false, false, {}, "16-bit");
  EXPECT_EQ(fp16_bar->of.name, "x fp16");
  EXPECT_TRUE(fp16_bar->exact);
  const auto other_bar = nearest_error_bar({tf32_rows, fp16_rows}, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", false, false, false, {}, "fp8-current");
  EXPECT_FALSE(other_bar->exact);  // a format neither class ran: the wider, said to be not this setting
  EXPECT_EQ(other_bar->of.name, "y tf32");
  // Equally near, with as many rows: the wider bar, not the more flattering one (whatever the order).
  CalibrationClass narrow{"a narrow", Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", 4, 0.02, 0.045, 0.045};
  CalibrationClass wide{"b wide", Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node", 4, 0.03, 0.073, 0.073};
  EXPECT_EQ(nearest_error_bar({narrow, wide}, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node")->of.name, "b wide");
  EXPECT_EQ(nearest_error_bar({wide, narrow}, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node")->of.name, "b wide");
  // ... unless the wider covers the GPU type through a sibling's rows and the other holds its own.
  CalibrationClass sibling_wide = wide;
  sibling_wide.borrowed = {"V100"};
  EXPECT_EQ(nearest_error_bar({sibling_wide, narrow}, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node")->of.name, "a narrow");
  EXPECT_EQ(nearest_error_bar({narrow, sibling_wide}, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node")->of.name, "a narrow");
  // A sibling's rows in the prediction's scope stay nearer than own rows of another scope.
  CalibrationClass other_scope = narrow;
  other_scope.scope = "multi-node";
  EXPECT_EQ(nearest_error_bar({sibling_wide, other_scope}, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node")->of.name, "b wide");
  // No V100 class, and no class with both A100 and H100: none, rather than another GPU's bar.
  EXPECT_FALSE(nearest_error_bar(all, Quantity::kTime, RunKind::kTraining, {"V100"}, "1 node").has_value());
  EXPECT_FALSE(nearest_error_bar(all, Quantity::kTime, RunKind::kTraining, {"A100", "H100"}, "multi-node").has_value());
  // Collectives' classes never give a training run its bar; no memory class, no memory bar.
  EXPECT_FALSE(nearest_error_bar({coll}, Quantity::kTime, RunKind::kTraining, {"A100"}, "1 node").has_value());
  EXPECT_FALSE(nearest_error_bar(all, Quantity::kMemory, RunKind::kTraining, {"A100"}, "1 node").has_value());
}

TEST(Calibration, The90thPercentileIsTheNearestRankOfTheRowsErrors) {
  ValidationRun run;
  run.kind = RunKind::kTraining;
  run.class_name = "A";
  std::vector<RunResult> results;
  // |errors| 1 % .. 20 %: the 18th of 20 sorted (ceil(0.9 x 20)) is 18 %.
  for (int i = 1; i <= 20; ++i) results.push_back(synthetic(run, {"A100"}, 2, {{"iteration_time_s", 1.0, 1.0 + 0.01 * i}}));
  const std::vector<CalibrationClass> c = calibration_classes(results);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].p90_abs_error, 0.18, 1e-12);
  EXPECT_NEAR(c[0].max_abs_error, 0.20, 1e-12);
  // Below ten rows the percentile is the largest error.
  results.resize(5);
  EXPECT_NEAR(calibration_classes(results)[0].p90_abs_error, 0.05, 1e-12);
}

TEST(Calibration, ReportClassesReadBack) {
  const std::vector<CalibrationClass> classes{
      {"x", Quantity::kMemory, RunKind::kLayer, {"A100", "V100"}, "1 node", 5, 0.03, 0.09, 0.08, true, true}};
  const std::filesystem::path f = std::filesystem::temp_directory_path() / "hetsim_calibration_test.json";
  std::ofstream(f) << nlohmann::json{{"classes", to_json(classes)}}.dump();
  const std::vector<CalibrationClass> back = load_calibration(f);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "x");
  EXPECT_EQ(back[0].quantity, Quantity::kMemory);
  EXPECT_EQ(back[0].kind, RunKind::kLayer);
  EXPECT_EQ(back[0].gpus, (std::set<std::string>{"A100", "V100"}));
  EXPECT_EQ(back[0].rows, 5);
  EXPECT_DOUBLE_EQ(back[0].max_abs_error, 0.09);
  EXPECT_DOUBLE_EQ(back[0].p90_abs_error, 0.08);
  EXPECT_TRUE(back[0].moe);
  EXPECT_TRUE(back[0].low_precision_gemms);
  // A report written before the percentile and the MoE flag: the max stands for it, dense.
  std::ofstream(f) << R"({"classes": [{"name": "y", "quantity": "time", "kind": "training", "gpus": ["A100"], "scope": "1 node",
                          "rows": 3, "mean_abs_error": 0.05, "max_abs_error": 0.12}]})";
  const std::vector<CalibrationClass> old = load_calibration(f);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_DOUBLE_EQ(old[0].p90_abs_error, 0.12);
  EXPECT_FALSE(old[0].moe);
  EXPECT_FALSE(old[0].low_precision_gemms);
  std::ofstream(f) << "{\"classes\": [{\"name\": 3}]}";
  EXPECT_THROW((void)load_calibration(f), InputError);
  std::filesystem::remove(f);
}

TEST(ValidateCli, PrintsEveryFigureAndTheClasses) {
  const test::CliRun r = test::run_hetsim("validate --runs " + runs_file().string(), test::Capture::kStdout);
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.output.find("allreduce-8xA100-1GiB"), std::string::npos);
  EXPECT_NE(r.output.find("tflops_per_gpu"), std::string::npos);
  EXPECT_NE(r.output.find("A100 NVSwitch collectives"), std::string::npos);
  EXPECT_NE(r.output.find("memory: mean |error|"), std::string::npos);
  EXPECT_EQ(r.output.find("nan"), std::string::npos);
  EXPECT_EQ(test::run_hetsim("validate --runs " + runs_file().string() + " --only nothing-like-this", test::Capture::kStdout).rc, 2);
}

TEST(ErrorBarsCli, AnH100PredictionTakesAnH100ClassAndAMixWithoutOneSaysSo) {
  const std::string h100 = (test::source_dir() / "studies/validation/clusters/dgx-h100-4.yaml").string();
  const test::CliRun r = test::run_hetsim("simulate --no-upper-bound -m gpt3-1.3b -c " + h100, test::Capture::kStdout);
  ASSERT_EQ(r.rc, 0) << r.output;
  const size_t at = r.output.find("prediction error on published runs: time ±");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_NE(line.find("H100 dense"), std::string::npos) << line;  // a dense model: the dense H100 class
  EXPECT_NE(line.find("not this setting"), std::string::npos) << line;  // whose runs had FP8 GEMMs; this one bf16
  EXPECT_NE(line.find("90th percentile of |error|"), std::string::npos) << line;
  // The demo's A100 + V100 mix: no published run used it; each type's own bar is said as such.
  const std::filesystem::path report = std::filesystem::temp_directory_path() / ("hetsim_mix_bars_" + std::to_string(::getpid()) + ".json");
  const test::CliRun mix = test::run_hetsim("simulate --no-upper-bound -m gpt3-1.3b -c a100-v100-2x2 --report " + report.string(),
                                            test::Capture::kStdout);
  ASSERT_EQ(mix.rc, 0);
  EXPECT_NE(mix.output.find("prediction error on published runs: time no published run mixes these GPU types; each alone: "
                            "A100-SXM4-40GB ±"),
            std::string::npos)
      << mix.output;
  EXPECT_NE(mix.output.find("(Megatron-LM A100 multi-node); V100-SXM2-32GB ±"), std::string::npos) << mix.output;
  std::ifstream in(report);
  const nlohmann::json bars = nlohmann::json::parse(in)["error_bars"];
  std::filesystem::remove(report);
  EXPECT_TRUE(bars["time"].is_null());
  EXPECT_EQ(bars["per_gpu_type"]["A100-SXM4-40GB"]["time"]["class"], "Megatron-LM A100 multi-node");
  EXPECT_FALSE(bars["per_gpu_type"]["A100-SXM4-40GB"]["time"]["exact_match"].get<bool>());
  EXPECT_EQ(bars["per_gpu_type"]["V100-SXM2-32GB"]["time"]["class"], "DLE BERT 2022 V100 mixed precision");
}

TEST(ErrorBarsCli, AGptRunOnA100FortyGbTakesTheMegatronRowsItsProfileWasFittedOn) {
  // The Megatron-LM rows ran on A100 80 GB; megatron-lm-2021-a100, fitted on them, is in force on the
  // 40 GB part too. Their bar speaks for a GPT run there (said so), not the BERT rows' narrower one
  // that happened to run on 40 GB under another stack.
  const test::CliRun r = test::run_hetsim("simulate --no-upper-bound -m gpt3-1.3b -c a100-8x8", test::Capture::kStdout);
  ASSERT_EQ(r.rc, 0) << r.output;
  const size_t at = r.output.find("prediction error on published runs: time ±");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find("; memory", at) - at);
  EXPECT_NE(line.find("Megatron-LM A100 multi-node; rows on A100-SXM4-80GB for A100-SXM4-40GB, under the profile in force here"),
            std::string::npos)
      << line;
  // With the raw model no profile is in force: no sibling lends its rows.
  const test::CliRun raw = test::run_hetsim("simulate --no-upper-bound -m gpt3-1.3b -c a100-8x8 --calibration none", test::Capture::kStdout);
  ASSERT_EQ(raw.rc, 0) << raw.output;
  EXPECT_EQ(raw.output.find("rows on A100-SXM4-80GB"), std::string::npos) << raw.output;
}

TEST(ErrorBarsCli, AnMi325xRunTakesItsOwnRowsOverItsSiblingsEquallyNearOnes) {
  // The FSDP rows of MI300X and of MI325X (one chip, primus-2026 in force on both) are equally near a
  // dense MI325X run, with as many rows; MI325X rows speak for it, whichever bar is wider: since
  // 2026-12-06 the Primus blog's BF16 row on MI325X, nearer still (16-bit GEMMs, this GPU).
  const std::string cluster = (test::source_dir() / "studies/validation/clusters/mi325x-8.yaml").string();
  const test::CliRun r = test::run_hetsim("simulate --no-upper-bound -m llama2-7b -c " + cluster, test::Capture::kStdout);
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("1 calibration row: Primus MI325X dense BF16"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("rows on MI300X for MI325X"), std::string::npos) << r.output;
}

TEST(ValidateCli, TraceDirHoldsOneChromeTraceForEachTrainingRunAndNoOther) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("hetsim_traces_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);  // --trace-dir makes its folder, not the folders above it
  const test::CliRun r = test::run_hetsim("validate --runs " + runs_file().string() + " --trace-dir " + (dir / "sub").string(),
                                          test::Capture::kStdout);
  EXPECT_EQ(r.rc, 0);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir / "sub")) names.push_back(e.path().filename().string());
  ASSERT_EQ(names, std::vector<std::string>{"04-gpt-grid-2x2x2.trace.json"});  // the fourth run, the only training one
  std::ifstream in(dir / "sub" / names[0]);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_TRUE(j.contains("traceEvents"));
  const auto& ev = j["traceEvents"];
  EXPECT_TRUE(std::any_of(ev.begin(), ev.end(), [](const nlohmann::json& e) { return e.value("cat", "") == "compute"; }));
  // Without --runs it is refused, as --only and --markdown are.
  EXPECT_EQ(test::run_hetsim("validate --trace-dir " + dir.string(), test::Capture::kStdout).rc, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hetsim
