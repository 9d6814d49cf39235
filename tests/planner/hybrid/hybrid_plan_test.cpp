// File: tests/planner/hybrid/hybrid_plan_test.cpp
// Hybrid plans: descriptions, every rule of check_hybrid_plan() with its message, and the plan
// file round trip. File errors with file:line:col are in tests/fixtures/bad/hybrid_plan_*.yaml.
#include "planner/hybrid/hybrid_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "base/input_error.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

std::vector<int> range(int first, int last) {
  std::vector<int> out;
  for (int d = first; d <= last; ++d) out.push_back(d);
  return out;
}

// gpt3-1.3b (24 layers, 16 heads, global batch 512, fp16) on a100-v100-2x2 (GPUs 0-15 A100 in
// nodes 0-1, 16-31 V100 in nodes 2-3): four 8-GPU stages at tp 8, more layers on the A100s.
HybridPlan valid_plan() {
  HybridPlan plan;
  plan.model = "gpt3-1.3b";
  plan.cluster = "a100-v100-2x2";
  plan.micro_batch = 1;
  PipelinePlan p;
  p.micro_batches = 512;
  p.stages = {{range(0, 7), 8, {{0, 7}}},
              {range(8, 15), 8, {{8, 15}}},
              {range(16, 23), 8, {{16, 19}}},
              {range(24, 31), 8, {{20, 23}}}};
  plan.pipelines = {p};
  return plan;
}

class HybridPlanCheck : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new ModelSpec(load_model(test::shipped("workloads", "gpt3-1.3b")));
    cluster_ = new Cluster(test::shipped_cluster("a100-v100-2x2"));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete cluster_;
  }

  // The problems of `plan`, one "field: message" line each.
  static std::vector<std::string> problems(const HybridPlan& plan, const ModelSpec* model = nullptr) {
    std::vector<std::string> out;
    for (const PlanProblem& p : check_hybrid_plan(plan, model ? *model : *model_, *cluster_)) {
      out.push_back(p.field + ": " + p.message);
    }
    return out;
  }

  static ModelSpec* model_;
  static Cluster* cluster_;
};

ModelSpec* HybridPlanCheck::model_ = nullptr;
Cluster* HybridPlanCheck::cluster_ = nullptr;

using Lines = std::vector<std::string>;

// `line` is one of `lines` (all of them printed when not).
::testing::AssertionResult Has(const Lines& lines, const std::string& line) {
  if (std::find(lines.begin(), lines.end(), line) != lines.end()) return ::testing::AssertionSuccess();
  ::testing::AssertionResult r = ::testing::AssertionFailure();
  r << "missing: " << line << "\ngot:";
  for (const std::string& l : lines) r << "\n  " << l;
  return r;
}

TEST(HybridPlan, FormatDevicesCompressesRuns) {
  EXPECT_EQ(format_devices({0, 1, 2, 3, 4, 5, 6, 7, 16, 18, 19}), "0-7,16,18-19");
  EXPECT_EQ(format_devices({5}), "5");
  EXPECT_EQ(format_devices({}), "");
}

TEST(HybridPlan, ShapeNamesPipelinesStagesTpAndSchedule) {
  HybridPlan plan = valid_plan();
  EXPECT_EQ(plan.shape(), "1 pipeline x 4 stages, tp 8, 1f1b");
  plan.pipelines.push_back(plan.pipelines[0]);
  EXPECT_EQ(plan.shape(), "2 pipelines x 4 stages, tp 8, 1f1b");
  plan.pipelines[1].stages.pop_back();
  plan.pipelines[0].stages[2].tp = 4;
  plan.pipelines[0].stages[2].chunks = {{16, 17}, {20, 21}};
  plan.schedule = PipelineSchedule::kInterleaved;
  // Stages that differ show each value in stage order (the TP-4 stage has two copies).
  EXPECT_EQ(plan.shape(), "2 pipelines x 4+3 stages, tp 8/4, dp 1/2, 2 chunks, interleaved-1f1b");
}

TEST(HybridPlan, SamplesAndLayerCount) {
  HybridPlan plan = valid_plan();
  plan.micro_batch = 2;
  plan.pipelines[0].micro_batches = 100;
  plan.pipelines.push_back(plan.pipelines[0]);
  plan.pipelines[1].micro_batches = 28;
  EXPECT_EQ(plan.samples(), 2 * (100 + 28));
  const StagePlan st{range(0, 7), 8, {{0, 3}, {12, 15}}};
  EXPECT_EQ(st.layer_count(), 8);
  EXPECT_EQ(st.dp(), 1);
}

TEST(HybridPlan, NamesOfSchedulesSyncsAndRecompute) {
  EXPECT_EQ(schedule_names(),
            (std::vector<std::string>{"gpipe", "1f1b", "interleaved-1f1b", "eager-1f1b", "zero-bubble"}));
  EXPECT_EQ(schedule_name(PipelineSchedule::kEager), "eager-1f1b");
  EXPECT_EQ(gradient_sync_name(GradientSync::kZero3), "zero-3");
  EXPECT_EQ(recompute_name(RecomputeMode::kSelective), "selective");
}

TEST_F(HybridPlanCheck, ValidPlanHasNoProblems) { EXPECT_EQ(problems(valid_plan()), Lines{}); }

TEST_F(HybridPlanCheck, NamesOfModelAndCluster) {
  HybridPlan plan = valid_plan();
  plan.model = "llama2-7b";
  plan.cluster = "a100-8x8";
  EXPECT_EQ(problems(plan), (Lines{"model: plan is for model \"llama2-7b\", not \"gpt3-1.3b\"",
                                   "cluster: plan is for cluster \"a100-8x8\", not \"a100-v100-2x2\""}));
}

TEST_F(HybridPlanCheck, NoPipelinesOrStages) {
  HybridPlan plan = valid_plan();
  plan.pipelines.clear();
  EXPECT_EQ(problems(plan), (Lines{"pipelines: no pipelines"}));
  plan = valid_plan();
  plan.pipelines.push_back(PipelinePlan{});
  EXPECT_TRUE(Has(problems(plan), "pipelines[1].stages: no stages"));
}

TEST_F(HybridPlanCheck, DevicesInRangeAndInOneStage) {
  HybridPlan plan = valid_plan();
  plan.pipelines[0].stages[3].devices = range(33, 40);
  plan.pipelines[0].stages[2].devices = {5, 17, 18, 19, 20, 21, 22, 23};
  const std::vector<std::string> got = problems(plan);
  EXPECT_TRUE(Has(got, "pipelines[0].stages[3].devices: GPU 33 is not in cluster a100-v100-2x2 (0 to 31)"));
  EXPECT_TRUE(Has(got, "pipelines[0].stages[2].devices: GPU 5 is also in pipelines[0].stages[0]"));
}

TEST_F(HybridPlanCheck, TpDividesStageAndHeadsAndStaysInANode) {
  HybridPlan plan = valid_plan();
  plan.pipelines[0].stages[0].tp = 3;
  plan.pipelines[0].stages[1].devices = range(4, 11);
  plan.pipelines[0].stages[0].devices = {0, 1, 2, 3, 12, 13, 14, 15};
  plan.pipelines[0].stages[0].tp = 3;
  const std::vector<std::string> got = problems(plan);
  EXPECT_TRUE(Has(got, "pipelines[0].stages[0].tp: tp 3 does not divide the stage's 8 GPUs"));
  EXPECT_TRUE(Has(got, "pipelines[0].stages[0].tp: tp 3 does not divide the model's 16 attention heads"));
  EXPECT_TRUE(Has(got, "pipelines[0].stages[1].tp: TP group 4-11 spans nodes 0 and 1 (a TP group must stay "
                            "inside one node)"));
}

TEST_F(HybridPlanCheck, TpDividesKeyValueHeads) {
  ModelSpec gqa = *model_;
  gqa.kv_heads = 4;
  EXPECT_TRUE(Has(problems(valid_plan(), &gqa),
                  "pipelines[0].stages[0].tp: tp 8 does not divide the model's 4 key/value heads"));
}

TEST_F(HybridPlanCheck, LayersInsideTheModelAndNotEmpty) {
  HybridPlan plan = valid_plan();
  plan.pipelines[0].stages[3].chunks = {{20, 27}};
  plan.pipelines[0].stages[2].chunks = {{19, 16}};
  const std::vector<std::string> got = problems(plan);
  EXPECT_TRUE(Has(got, "pipelines[0].stages[3].layers: layer range 20-27 is outside the model's layers 0-23"));
  EXPECT_TRUE(Has(got, "pipelines[0].stages[2].layers: range 19-16 is empty"));
  EXPECT_TRUE(Has(got, "pipelines[0].stages: layers 16-19 are in no stage"));
}

TEST_F(HybridPlanCheck, EveryLayerExactlyOncePerPipeline) {
  HybridPlan plan = valid_plan();
  plan.pipelines[0].stages[1].chunks = {{4, 11}};   // 4-7 twice
  plan.pipelines[0].stages[3].chunks = {{20, 21}};  // 12-15 and 22-23 nowhere
  EXPECT_EQ(problems(plan), (Lines{"pipelines[0].stages[1].layers: layer 4 is also in pipelines[0].stages[0]",
                          "pipelines[0].stages: layers 12-15, 22-23 are in no stage"}));
}

TEST_F(HybridPlanCheck, ChunksFollowEachOther) {
  HybridPlan plan = valid_plan();
  plan.pipelines[0].stages[1].chunks = {{16, 19}};
  plan.pipelines[0].stages[2].chunks = {{8, 15}};
  EXPECT_EQ(problems(plan), (Lines{"pipelines[0].stages[1].layers: chunk 0 of this stage holds layers 16-19 but the "
                          "pipeline's previous chunk ends at layer 7 (chunks must follow each other: stage by "
                          "stage, then chunk by chunk)"}));
}

TEST_F(HybridPlanCheck, InterleavedChunksOrderedStageByStageThenChunkByChunk) {
  HybridPlan plan = valid_plan();
  plan.schedule = PipelineSchedule::kInterleaved;
  // 24 layers in 2 chunks of 4 stages x 3 layers: chunk 0 holds 0-11, chunk 1 holds 12-23.
  for (int s = 0; s < 4; ++s) plan.pipelines[0].stages[s].chunks = {{3 * s, 3 * s + 2}, {12 + 3 * s, 14 + 3 * s}};
  EXPECT_EQ(problems(plan), Lines{});
  std::swap(plan.pipelines[0].stages[1].chunks[1], plan.pipelines[0].stages[2].chunks[1]);
  EXPECT_EQ(problems(plan),
            (Lines{"pipelines[0].stages[1].layers: chunk 1 of this stage holds layers 18-20 but the "
                   "pipeline's previous chunk ends at layer 14 (chunks must follow each other: stage by "
                   "stage, then chunk by chunk)"}));
}

TEST_F(HybridPlanCheck, SeveralRangesNeedInterleaved) {
  HybridPlan plan = valid_plan();
  plan.pipelines[0].stages[0].chunks = {{0, 3}, {4, 7}};
  EXPECT_EQ(problems(plan), (Lines{"pipelines[0].stages[0].layers: 2 ranges need schedule interleaved-1f1b "
                                          "(one per model chunk)"}));
}

TEST_F(HybridPlanCheck, InterleavedNeedsEqualChunksAndMicroBatchMultiples) {
  HybridPlan plan = valid_plan();
  plan.schedule = PipelineSchedule::kInterleaved;
  plan.pipelines[0].micro_batches = 6;
  plan.micro_batch = 1;
  plan.pipelines[0].stages[0].chunks = {{0, 3}, {4, 7}};
  const std::vector<std::string> got = problems(plan);
  EXPECT_TRUE(Has(got, "pipelines[0].stages[1].layers: 1 chunk, but stage 0 has 2 (interleaved-1f1b needs "
                            "the same number on every stage)"));
  EXPECT_TRUE(Has(got, "pipelines[0].micro_batches: interleaved-1f1b needs micro-batches in multiples of the "
                            "4 stages (got 6)"));
}

TEST_F(HybridPlanCheck, BatchAddsUpAndCoversDataParallelCopies) {
  HybridPlan plan = valid_plan();
  plan.pipelines[0].micro_batches = 96;
  EXPECT_EQ(problems(plan), (Lines{"pipelines: micro-batches add up to 96 samples (sum of micro_batches x "
                                          "micro_batch 1), but the model's global batch is 512"}));
  plan = valid_plan();
  plan.micro_batch = 2;
  plan.pipelines[0].micro_batches = 256;
  plan.pipelines[0].stages[0].tp = 2;  // 4 copies of 2 GPUs
  EXPECT_EQ(problems(plan), (Lines{"pipelines[0].stages[0].devices: the stage's 4 data-parallel copies "
                                          "cannot share a micro-batch of 2 samples"}));
  plan.micro_batch = 0;
  EXPECT_TRUE(Has(problems(plan), "micro_batch: must be at least 1"));
}

TEST_F(HybridPlanCheck, DtypeEveryStageComputes) {
  ModelSpec bf16 = *model_;
  bf16.training.dtype = DType::kBf16;
  bf16.training.dtype_fallback.reset();
  EXPECT_EQ(problems(valid_plan(), &bf16), (Lines{"pipelines[0].stages[2].devices: V100-SXM2-32GB does not support bf16 and the model "
                          "states no fallback"}));
  bf16.training.dtype_fallback = DType::kFp8;
  EXPECT_EQ(problems(valid_plan(), &bf16), (Lines{"pipelines[0].stages[2].devices: V100-SXM2-32GB does not support bf16 nor the "
                          "fallback fp8"}));
  bf16.training.dtype_fallback = DType::kFp16;
  EXPECT_EQ(problems(valid_plan(), &bf16), Lines{});
  HybridPlan a100_only = valid_plan();  // bf16 everywhere when no V100 is used
  a100_only.pipelines[0].stages.resize(2);
  a100_only.pipelines[0].stages[1].chunks = {{8, 23}};
  bf16.training.dtype_fallback.reset();
  EXPECT_EQ(problems(a100_only, &bf16), Lines{});
}

TEST_F(HybridPlanCheck, OneTpWidthPerLayerAcrossPipelines) {
  HybridPlan plan = valid_plan();
  plan.micro_batch = 2;  // the tp-4 stage has 2 data-parallel copies
  plan.pipelines[0].micro_batches = 128;
  PipelinePlan second = plan.pipelines[0];
  plan.pipelines[0].stages = {{range(0, 7), 8, {{0, 11}}}, {range(16, 23), 8, {{12, 23}}}};
  second.stages = {{range(8, 15), 4, {{0, 11}}}, {range(24, 31), 8, {{12, 23}}}};
  plan.pipelines.push_back(second);
  EXPECT_EQ(problems(plan), (Lines{"pipelines[1].stages[0].tp: layer 0 is held at tp 8 by "
                                   "pipelines[0].stages[0]; every copy of a layer must use one tp width"}));
}

TEST_F(HybridPlanCheck, FileRoundTripKeepsEveryField) {
  HybridPlan plan = valid_plan();
  plan.schedule = PipelineSchedule::kInterleaved;
  plan.recompute = RecomputeMode::kSelective;
  plan.sequence_parallel = true;
  plan.tp_comm_overlap = true;
  plan.vocab_parallel = false;
  plan.gradient_sync = GradientSync::kZero1;
  plan.overlap_param_gather = true;
  plan.grad_sync_overlap = false;
  plan.cp_comm = CpComm::kAllToAll;
  plan.resharding = {ReshardMethod::kBroadcast, LoadBalance::kOrder, false, 42};
  plan.estimate_s = 1.0 / 3.0;
  plan.pipelines[0].micro_batches = 256;
  for (int s = 0; s < 4; ++s) plan.pipelines[0].stages[s].chunks = {{3 * s, 3 * s + 2}, {12 + 3 * s, 14 + 3 * s}};
  plan.pipelines[0].stages[3].devices = {24, 25, 26, 27, 28, 29, 31, 30};  // order matters: TP groups
  plan.pipelines[0].stages[3].tp = 4;
  PipelinePlan second = plan.pipelines[0];
  plan.pipelines[0].stages.resize(2);
  plan.pipelines[0].stages[0].chunks = {{0, 5}, {12, 17}};
  plan.pipelines[0].stages[1] = {range(16, 23), 8, {{6, 11}, {18, 23}}};
  second.micro_batches = 256;
  second.stages = {{range(8, 15), 8, {{0, 5}, {12, 17}}}, {range(24, 31), 8, {{6, 11}, {18, 23}}}};
  // Context parallelism: two TP groups of 4 on a node, each with half of every sequence.
  for (PipelinePlan* pl : {&plan.pipelines[0], &second}) {
    pl->stages[1].tp = 4;
    pl->stages[1].cp = 2;
  }
  plan.pipelines.push_back(second);
  ASSERT_EQ(problems(plan), Lines{});

  const std::filesystem::path file = std::filesystem::temp_directory_path() / "hetsim_hybrid_plan_test.yaml";
  std::ofstream(file) << hybrid_plan_to_yaml(plan);
  EXPECT_EQ(plan_file_kind(file), "hybrid");
  const HybridPlan back = load_hybrid_plan(file, *model_, *cluster_);
  std::filesystem::remove(file);
  EXPECT_EQ(back.model, plan.model);
  EXPECT_EQ(back.cluster, plan.cluster);
  EXPECT_EQ(back.micro_batch, plan.micro_batch);
  EXPECT_EQ(back.schedule, plan.schedule);
  EXPECT_EQ(back.recompute, plan.recompute);
  EXPECT_EQ(back.sequence_parallel, plan.sequence_parallel);
  EXPECT_EQ(back.tp_comm_overlap, plan.tp_comm_overlap);
  EXPECT_EQ(back.vocab_parallel, plan.vocab_parallel);
  EXPECT_EQ(back.gradient_sync, plan.gradient_sync);
  EXPECT_EQ(back.overlap_param_gather, plan.overlap_param_gather);
  EXPECT_EQ(back.cp_comm, plan.cp_comm);
  EXPECT_EQ(back.grad_sync_overlap, plan.grad_sync_overlap);
  EXPECT_EQ(back.resharding.method, plan.resharding.method);
  EXPECT_EQ(back.resharding.load_balance, plan.resharding.load_balance);
  EXPECT_EQ(back.resharding.overlap, plan.resharding.overlap);
  EXPECT_EQ(back.resharding.seed, plan.resharding.seed);
  EXPECT_EQ(back.estimate_s, plan.estimate_s);  // bit for bit: written with 17 digits
  ASSERT_EQ(back.pipelines.size(), plan.pipelines.size());
  for (size_t p = 0; p < plan.pipelines.size(); ++p) {
    EXPECT_EQ(back.pipelines[p].micro_batches, plan.pipelines[p].micro_batches);
    ASSERT_EQ(back.pipelines[p].stages.size(), plan.pipelines[p].stages.size());
    for (size_t s = 0; s < plan.pipelines[p].stages.size(); ++s) {
      EXPECT_EQ(back.pipelines[p].stages[s].devices, plan.pipelines[p].stages[s].devices);
      EXPECT_EQ(back.pipelines[p].stages[s].tp, plan.pipelines[p].stages[s].tp);
      EXPECT_EQ(back.pipelines[p].stages[s].cp, plan.pipelines[p].stages[s].cp);
      EXPECT_EQ(back.pipelines[p].stages[s].chunks, plan.pipelines[p].stages[s].chunks);
    }
  }
}

TEST_F(HybridPlanCheck, ReaderAcceptsEveryDeviceAndLayerSyntaxAndDefaults) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "hetsim_hybrid_plan_syntax.yaml";
  std::ofstream(file) << "kind: hybrid\n"
                         "pipelines:\n"
                         "  - micro_batches: 512\n"
                         "    stages:\n"
                         "      - {devices: 0, layers: 0-11}\n"
                         "      - {devices: [1, 2-4], tp: 4, layers: [12-22, 23]}\n";
  try {
    (void)load_hybrid_plan(file, *model_, *cluster_);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    // Stage 1 holds two ranges under 1f1b: the only problem, reported at its field's value.
    EXPECT_EQ(std::string(e.what()), file.string() + ":6:44: error: pipelines[0].stages[1].layers: 2 ranges need "
                                                     "schedule interleaved-1f1b (one per model chunk)");
  }
  std::ofstream(file) << "kind: hybrid\n"
                         "pipelines:\n"
                         "  - micro_batches: 512\n"
                         "    stages:\n"
                         "      - {devices: 0, layers: 0-11}\n"
                         "      - {devices: [1, 2-4], tp: 4, layers: [12-23]}\n";
  const HybridPlan ok = load_hybrid_plan(file, *model_, *cluster_);
  std::filesystem::remove(file);
  EXPECT_EQ(ok.micro_batch, 1);
  EXPECT_EQ(ok.schedule, PipelineSchedule::kOneFOneB);
  EXPECT_EQ(ok.recompute, RecomputeMode::kNone);
  ASSERT_EQ(ok.pipelines.size(), 1u);
  ASSERT_EQ(ok.pipelines[0].stages.size(), 2u);
  EXPECT_EQ(ok.pipelines[0].stages[0].devices, std::vector<int>{0});
  EXPECT_EQ(ok.pipelines[0].stages[1].devices, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(ok.pipelines[0].stages[1].chunks, (std::vector<LayerRange>{{12, 23}}));
}

TEST_F(HybridPlanCheck, EmbeddingAndLossChunksRoundTrip) {
  // Megatron-Core's layout: 4 stages x 3 chunks = 12 virtual stages, the first holding only the
  // embedding, the last only the head and loss, the 24 layers over the ten between (3 3 3 3 2 2 2 2
  // 2 2). Written as `embedding` and `loss` and read back as the same chunks.
  HybridPlan plan = valid_plan();
  plan.schedule = PipelineSchedule::kInterleaved;
  const int sizes[10] = {3, 3, 3, 3, 2, 2, 2, 2, 2, 2};
  for (StagePlan& st : plan.pipelines[0].stages) st.chunks.assign(3, {});
  int next = 0;
  for (int vs = 0; vs < 12; ++vs) {
    LayerRange& r = plan.pipelines[0].stages[vs % 4].chunks[vs / 4];
    if (vs == 0) r = LayerRange::embedding();
    else if (vs == 11) r = LayerRange::loss();
    else {
      r = {next, next + sizes[vs - 1] - 1};
      next += sizes[vs - 1];
    }
  }
  ASSERT_EQ(problems(plan), Lines{});
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "hetsim_hybrid_layout_test.yaml";
  std::ofstream(file) << hybrid_plan_to_yaml(plan);
  const HybridPlan back = load_hybrid_plan(file, *model_, *cluster_);
  std::filesystem::remove(file);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(back.pipelines[0].stages[s].chunks, plan.pipelines[0].stages[s].chunks) << s;
  // Elsewhere they are refused: the embedding must open the pipeline, the loss close it.
  HybridPlan moved = plan;
  std::swap(moved.pipelines[0].stages[0].chunks[0], moved.pipelines[0].stages[1].chunks[0]);
  EXPECT_TRUE(Has(problems(moved), "pipelines[0].stages[1].layers: an embedding chunk must be the pipeline's first chunk "
                                   "(stage 0, chunk 0), not chunk 0 of stage 1"));
}

TEST(HybridPlanFile, KindIsSpmdWhenAbsent) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "hetsim_plan_kind_test.yaml";
  std::ofstream(file) << "model: gpt3-1.3b\n";  // plans written before `kind` existed
  EXPECT_EQ(plan_file_kind(file), "spmd");
  std::filesystem::remove(file);
  EXPECT_EQ(plan_file_kind(test::source_dir() / "tests/fixtures/bad/plan_bad_rule_and_ratios.yaml"), "spmd");
  EXPECT_THROW((void)plan_file_kind(test::source_dir() / "tests/fixtures/bad/no-such-file.yaml"), InputError);
}

}  // namespace
}  // namespace hetsim
