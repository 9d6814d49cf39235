// File: tests/cli/cli_test.cpp
// The hetsim binary end to end: golden report, determinism, list output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_support.hpp"

namespace hetsim {
namespace {

struct CliRun {
  int rc = -1;
  std::string out;
};

CliRun run(const std::string& args) {
  const test::CliRun r = test::run_hetsim(args, test::Capture::kStdout);
  return {r.rc, r.output};
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using test::temp;

// Numbers within a relative tolerance, everything else exactly.
void expect_json_near(const nlohmann::json& got, const nlohmann::json& want, const std::string& path) {
  if (want.is_number() && got.is_number()) {
    const double w = want.get<double>(), g = got.get<double>();
    EXPECT_LE(std::fabs(g - w), 1e-6 * std::max(1.0, std::fabs(w))) << path << ": " << g << " vs " << w;
  } else if (want.is_object() && got.is_object()) {
    EXPECT_EQ(got.size(), want.size()) << path;
    for (const auto& [k, v] : want.items()) {
      ASSERT_TRUE(got.contains(k)) << path << "." << k;
      expect_json_near(got[k], v, path + "." + k);
    }
  } else if (want.is_array() && got.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << path;
    for (size_t i = 0; i < want.size(); ++i) expect_json_near(got[i], want[i], path + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(got, want) << path;
  }
}

TEST(Cli, GoldenSimulateReport) {
  const auto report = temp("golden.json");
  const CliRun r = run("simulate --cluster a100-v100-2x2 --model bert-base --strategy dp-proportional --report " +
                       report.string());
  ASSERT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("iteration time:"), std::string::npos);
  const auto golden = test::source_dir() / "tests/fixtures/golden/simulate_bert-base_a100-v100-2x2.json";
  // Error bars come from the shipped calibration, which changes on its own (ValidateCli tests them).
  nlohmann::json got = nlohmann::json::parse(slurp(report));
  EXPECT_TRUE(got.contains("error_bars"));
  got.erase("error_bars");
  if (std::getenv("HETSIM_UPDATE_GOLDEN") != nullptr) std::ofstream(golden) << got.dump(2) << "\n";
  expect_json_near(got, nlohmann::json::parse(slurp(golden)), "report");
  std::filesystem::remove(report);
}

TEST(Cli, PrecisionOverridesTheModelsGemmRecipe) {
  // --precision edits training.gemm_precision: refused by name on A100 (no fp8), faster on H100.
  const test::CliRun a100 = test::run_hetsim("simulate --cluster a100-8x8 --model gpt3-1.3b --precision fp8-current "
                                             "--strategy dp-even --no-upper-bound", test::Capture::kStderr);
  EXPECT_EQ(a100.rc, 2);
  EXPECT_NE(a100.output.find("fp8-current needs fp8 tensor cores"), std::string::npos) << a100.output;
  const auto report = [](const std::string& extra) {
    const auto file = temp("precision.json");
    const CliRun r = run("simulate --cluster pair-h100-mi300x --model gpt3-1.3b --strategy dp-even --no-upper-bound --report " +
                         file.string() + extra);
    EXPECT_EQ(r.rc, 0);
    const nlohmann::json j = nlohmann::json::parse(slurp(file));
    std::filesystem::remove(file);
    return j.at("iteration_time_s").get<double>();
  };
  EXPECT_LT(report(" --precision fp8-current"), report(""));
}

TEST(Cli, TwoRunsGiveByteIdenticalReportsAndTraces) {
  const auto a = temp("a.json"), b = temp("b.json"), ta = temp("a.trace"), tb = temp("b.trace");
  const std::string args = "simulate --cluster a100-v100-2x2 --model gpt3-1.3b ";
  ASSERT_EQ(run(args + "--report " + a.string() + " --trace " + ta.string()).rc, 0);
  ASSERT_EQ(run(args + "--report " + b.string() + " --trace " + tb.string()).rc, 0);
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_EQ(slurp(ta), slurp(tb));
  EXPECT_GT(slurp(a).size(), 100u);
  for (const auto& p : {a, b, ta, tb}) std::filesystem::remove(p);
}

TEST(Cli, SetGivesTheSameReportAsAnEditedCopy) {
  // --set on the NICs of both node types and the global batch, against copies edited by hand.
  const auto a = temp("set.json"), b = temp("edited.json"), cluster = temp("edited-cluster.yaml"), model = temp("edited-model.yaml");
  std::string text = slurp(test::shipped("topologies", "a100-v100-2x2"));
  for (const std::string from : {"bandwidth: 200Gbps", "bandwidth: 100Gbps"}) text.replace(text.find(from), from.size(), "bandwidth: 400Gbps");
  std::ofstream(cluster) << text;
  std::string m = slurp(test::shipped("workloads", "gpt3-1.3b"));
  const size_t at = m.find("global_batch: ");
  ASSERT_NE(at, std::string::npos);
  m.replace(at, m.find_first_of(",}\n", at) - at, "global_batch: 256");
  std::ofstream(model) << m;
  ASSERT_EQ(run("simulate -c a100-v100-2x2 -m gpt3-1.3b --strategy dp-proportional --set 'cluster.node_types[*].nic.bandwidth=400Gbps' "
                "--set model.training.global_batch=256 --report " + a.string()).rc, 0);
  ASSERT_EQ(run("simulate -c " + cluster.string() + " -m " + model.string() + " --strategy dp-proportional --report " + b.string()).rc, 0);
  nlohmann::json ja = nlohmann::json::parse(slurp(a)), jb = nlohmann::json::parse(slurp(b));
  EXPECT_EQ(ja["iteration_time_s"], jb["iteration_time_s"]);
  EXPECT_EQ(ja["devices"].dump(), jb["devices"].dump());
  // And differs from the unedited run (the edit took effect).
  ASSERT_EQ(run("simulate -c a100-v100-2x2 -m gpt3-1.3b --strategy dp-proportional --report " + b.string()).rc, 0);
  EXPECT_NE(ja["iteration_time_s"], nlohmann::json::parse(slurp(b))["iteration_time_s"]);
  // A wrong path is an input error naming the --set and suggesting the field.
  const test::CliRun bad = test::run_hetsim("simulate --set cluster.node_types[0].nic.bandwith=1Gbps", test::Capture::kStderr);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.output.find("--set cluster.node_types[0].nic.bandwith=1Gbps: error: node_types[0].nic: unknown key \"bandwith\"; did you mean \"bandwidth\"?"),
            std::string::npos) << bad.output;
  for (const auto& p : {a, b, cluster, model}) std::filesystem::remove(p);
}

TEST(Cli, TwoPlanRunsAgreeOnEverythingButWallClock) {
  const auto a = temp("pa.json"), b = temp("pb.json"), ta = temp("pa.trace"), tb = temp("pb.trace");
  const std::string args = "plan --cluster a100-v100-2x2 --model gpt3-1.3b ";
  ASSERT_EQ(run(args + "--report " + a.string() + " --trace " + ta.string()).rc, 0);
  ASSERT_EQ(run(args + "--report " + b.string() + " --trace " + tb.string()).rc, 0);
  nlohmann::json ja = nlohmann::json::parse(slurp(a)), jb = nlohmann::json::parse(slurp(b));
  for (nlohmann::json* j : {&ja, &jb}) {  // how long planning took is the only thing allowed to differ
    j->erase("plan_time_s");
    (*j)["search"].erase("search_s");
    (*j)["search"].erase("lp_s");
    (*j)["hybrid_search"].erase("search_s");
  }
  EXPECT_EQ(ja.dump(), jb.dump());
  EXPECT_EQ(slurp(ta), slurp(tb));
  for (const auto& p : {a, b, ta, tb}) std::filesystem::remove(p);
}

TEST(Cli, AGlobalBatchOfABillionPlansAndSaysWhyNoPipelineIsSimulated) {
  // SPMD and data-parallel programs hold identical accumulation steps once or twice; pipeline
  // programs hold two periods of their steady state but still write every pass on the way, so
  // every hybrid row says it has too many passes (not memory).
  const CliRun r = run("plan --model gpt3-1.3b --global-batch 1000000000 --no-upper-bound");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("hetsim #1 "), std::string::npos) << r.out;
  for (const char* row : {"hetsim hybrid ", "hethub-faithful ", "megatron-uniform "}) {
    const size_t at = r.out.find(row);
    ASSERT_NE(at, std::string::npos) << row;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(line.find("forward and backward passes of stage copies; hetsim simulates at most 20000000"), std::string::npos) << line;
  }
}

TEST(Cli, HybridCandidatesFoldedTakeTheTimesOfEveryMicroBatch) {
  // Pipeline programs hold two periods of their steady state; --every-step writes every
  // micro-batch. Every simulated hybrid candidate takes the same time both ways, on clusters whose
  // candidates fold a lot, a little (written back) or not at all. (A fold written back before the
  // gradient synchronisation had put 5 of 8 shipped pairs 0.4 to 10 % off.)
  for (const char* setting : {"--cluster a100-v100-2x2 --model gpt3-2.7b --global-batch 2048",
                              "--cluster p3-8xlarge-5 --model unet-470m --global-batch 1024"}) {
    SCOPED_TRACE(setting);
    const auto a = temp("fold.json"), b = temp("every.json");
    const std::string base = std::string("plan ") + setting + " --no-spmd --no-upper-bound --report ";
    ASSERT_EQ(run(base + a.string()).rc, 0);
    ASSERT_EQ(run(base + b.string() + " --every-step").rc, 0);
    const nlohmann::json fold = nlohmann::json::parse(slurp(a)), every = nlohmann::json::parse(slurp(b));
    ASSERT_EQ(fold["candidates"].size(), every["candidates"].size());
    for (size_t i = 0; i < fold["candidates"].size(); ++i) {
      const nlohmann::json& x = fold["candidates"][i];
      const nlohmann::json& y = every["candidates"][i];
      EXPECT_EQ(x["strategy"], y["strategy"]);
      if (!y.contains("simulated_s") || !y["simulated_s"].is_number()) continue;
      const double t = y["simulated_s"].get<double>();
      // Exactly, or within the bound a folded run states where it extrapolated a nearly periodic
      // steady state (sim/repeated_step.hpp, extrapolate_repeats).
      const double bound = x.contains("extrapolation") ? x["extrapolation"]["bound_s"].get<double>() : 0.0;
      // (The two add up: a fold at its stated bound also differs in summation order.)
      EXPECT_NEAR(x["simulated_s"].get<double>(), t, bound + 1e-9 * t) << x["strategy"];
    }
    std::filesystem::remove(a);
    std::filesystem::remove(b);
  }
}

TEST(Cli, PlanEmitSimulateReproducesTheIterationTime) {
  const auto plan = temp("plan.yaml"), report = temp("plan.json"), again = temp("again.json");
  // Mixed clusters, and one of a single node type (its own upper bound's reference).
  for (const char* setting : {"--model gpt3-1.3b --cluster a100-v100-2x2", "--model bert-base --cluster hap-v100-p100",
                              "--model bert-base --cluster a100-8x8"}) {
    ASSERT_EQ(run(std::string("plan ") + setting + " --emit-plan " + plan.string() + " --report " + report.string()).rc, 0);
    ASSERT_EQ(run(std::string("simulate ") + setting + " --plan " + plan.string() + " --report " + again.string()).rc, 0);
    const nlohmann::json planned = nlohmann::json::parse(slurp(report)), simulated = nlohmann::json::parse(slurp(again));
    EXPECT_NEAR(simulated["iteration_time_s"].get<double>() / planned["iteration_time_s"].get<double>(), 1.0, 0.001) << setting;
    // The bound belongs to the model and cluster: the same whichever command reports it.
    EXPECT_GT(planned["upper_bound_samples_per_s"].get<double>(), 0) << setting;
    EXPECT_EQ(simulated["upper_bound_samples_per_s"], planned["upper_bound_samples_per_s"]) << setting;
    EXPECT_EQ(simulated["efficiency"], planned["efficiency"]) << setting;
  }
  for (const auto& p : {plan, report, again}) std::filesystem::remove(p);
}

TEST(Cli, NoUpperBoundSkipsTheBoundAndTheEfficiency) {
  const auto report = temp("no-bound.json");
  const CliRun r = run("simulate --model bert-base --no-upper-bound --report " + report.string());
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.find("upper bound"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(slurp(report));
  EXPECT_GT(j["samples_per_s"].get<double>(), 0);
  EXPECT_FALSE(j.contains("upper_bound_samples_per_s"));
  EXPECT_FALSE(j.contains("efficiency"));
  std::filesystem::remove(report);
}

TEST(Cli, HybridPlanEmitSimulateReproducesTheIterationTime) {
  const auto plan = temp("hybrid.yaml"), report = temp("hybrid.json"), again = temp("hybrid-again.json");
  for (const char* setting : {"--model gpt3-1.3b --cluster a100-v100-2x2 --global-batch 128",
                              "--model gpt3-6.7b --cluster a100-mi250x --global-batch 32"}) {
    ASSERT_EQ(run(std::string("plan --no-spmd ") + setting + " --emit-plan " + plan.string() + " --report " + report.string()).rc, 0);
    ASSERT_EQ(run(std::string("simulate ") + setting + " --plan " + plan.string() + " --report " + again.string()).rc, 0);
    const nlohmann::json planned = nlohmann::json::parse(slurp(report)), simulated = nlohmann::json::parse(slurp(again));
    EXPECT_EQ(planned["kind"], "hybrid") << setting;
    EXPECT_EQ(simulated["kind"], "hybrid") << setting;
    EXPECT_NEAR(simulated["iteration_time_s"].get<double>() / planned["iteration_time_s"].get<double>(), 1.0, 0.001) << setting;
    EXPECT_EQ(simulated["upper_bound_samples_per_s"], planned["upper_bound_samples_per_s"]) << setting;
  }
  for (const auto& p : {plan, report, again}) std::filesystem::remove(p);
}

TEST(Cli, SimulateAHybridPlanSaysThePlansMicroBatch) {
  // The header names the micro-batch that runs: the plan's, not the model file's.
  const auto plan = temp("micro.yaml"), doubled = temp("micro2.yaml");
  const std::string setting = " --model gpt3-1.3b --cluster a100-v100-2x2 --global-batch 128 --no-upper-bound";
  ASSERT_EQ(run("plan --no-spmd" + setting + " --emit-plan " + plan.string()).rc, 0);
  std::istringstream in(slurp(plan));
  std::ostringstream out;
  long micro_batch = 0;
  for (std::string line; std::getline(in, line);) {
    for (const std::string key : {"micro_batch: ", "micro_batches: "}) {
      const size_t at = line.find(key);
      if (at == std::string::npos) continue;
      const long v = std::stol(line.substr(at + key.size()));
      if (key == "micro_batch: ") micro_batch = 2 * v;
      ASSERT_TRUE(key == "micro_batch: " || v % 2 == 0) << line;
      line = line.substr(0, at + key.size()) + std::to_string(key == "micro_batch: " ? 2 * v : v / 2);
    }
    out << line << "\n";
  }
  ASSERT_GT(micro_batch, 1);
  std::ofstream(doubled) << out.str();
  const CliRun r = run("simulate" + setting + " --plan " + doubled.string());
  ASSERT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("global batch 128, micro-batch " + std::to_string(micro_batch) + ", seq"), std::string::npos) << r.out;
  for (const auto& p : {plan, doubled}) std::filesystem::remove(p);
}

TEST(Cli, HybridAblationSwitchesShapeTheCandidates) {
  const auto report = temp("ablation.json"), trace = temp("ablation.trace");
  // (the raw model: the plan shapes below are the switches', whatever a calibration profile moves)
  const std::string base = "plan --model gpt3-1.3b --cluster a100-v100-2x2 --global-batch 64 --candidates 2 --calibration none --report " + report.string();
  auto candidates = [&] { return nlohmann::json(nlohmann::json::parse(slurp(report))["candidates"]); };
  ASSERT_EQ(run(base + " --no-pipeline --no-spmd").rc, 0);  // nothing left to plan but the baselines
  EXPECT_TRUE(candidates().empty());
  ASSERT_EQ(run(base + " --no-pipeline").rc, 0);
  for (const auto& c : candidates()) EXPECT_EQ(c["kind"], "spmd");
  ASSERT_EQ(run(base + " --no-spmd --schedule gpipe").rc, 0);
  ASSERT_FALSE(candidates().empty());
  for (const auto& c : candidates()) {
    EXPECT_EQ(c["kind"], "hybrid");
    const std::string shape = c["shape"];
    EXPECT_NE(shape.find(", gpipe"), std::string::npos) << shape;  // the shape may go on (", micro-batch 4")
  }
  // A chosen hybrid plan of several stages (a model five times as large: its plans pipeline; 2.7B's
  // fit one stage once only a chunk's first layers could be recomputed): its trace has each GPU's
  // compute, pipeline and gradient tracks (and TP tracks where its stages use TP).
  const std::string larger = "plan --model gpt3-6.7b --cluster a100-v100-2x2 --global-batch 64 --candidates 2 --calibration none --report " +
                             report.string() + " --no-spmd --schedule gpipe --no-upper-bound --trace " + trace.string();
  ASSERT_EQ(run(larger).rc, 0);
  const std::string chosen = nlohmann::json::parse(slurp(report))["shape"];
  ASSERT_EQ(chosen.find("x 1 stage,"), std::string::npos) << chosen;
  std::set<std::string> tracks;
  const nlohmann::json events = nlohmann::json::parse(slurp(trace))["traceEvents"];
  for (const auto& e : events) {
    if (e["name"] == "thread_name") {
      const std::string name = e["args"]["name"];
      tracks.insert(name.substr(name.rfind(' ') + 1));
    }
  }
  for (const char* t : {"comm", "compute", "p2p"}) EXPECT_EQ(tracks.count(t), 1u) << t;
  ASSERT_EQ(run(base + " --no-spmd --uniform-layers --no-mixed-stages --no-stage-synthesis").rc, 0);
  EXPECT_FALSE(candidates().empty());
  for (const auto& c : candidates()) {
    const std::string shape = c["shape"];
    EXPECT_EQ(shape.find("synthesised"), std::string::npos) << shape;  // Megatron's TP only
  }
  ASSERT_EQ(run(base + " --no-spmd --no-cross-mesh").rc, 0);
  EXPECT_FALSE(candidates().empty());
  for (const auto& c : candidates()) {
    const std::string shape = c["shape"];
    EXPECT_EQ(shape.find("resharding"), std::string::npos) << shape;  // Megatron's scatter-gather
    EXPECT_EQ(shape.find("eager"), std::string::npos) << shape;
  }
  for (const auto& p : {report, trace}) std::filesystem::remove(p);
}

TEST(Cli, PlanReportsCandidatesBaselinesAndPlanTime) {
  const auto report = temp("plan-contract.json");
  ASSERT_EQ(run("plan --model bert-base --report " + report.string()).rc, 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(report));
  ASSERT_GE(j["candidates"].size(), 1u);
  for (const auto& c : j["candidates"]) {
    EXPECT_TRUE(c.contains("strategy") && c.contains("estimated_s") && c.contains("simulated_s"));
  }
  std::vector<std::string> names;
  for (const auto& b : j["baselines"]) names.push_back(b["strategy"]);
  EXPECT_EQ(names, (std::vector<std::string>{"hap-faithful", "hethub-faithful", "megatron-uniform", "dp-even", "dp-proportional"}));
  EXPECT_GT(j["plan_time_s"].get<double>(), 0);
  // The chosen plan is never slower than a baseline it could have been (data parallelism is among its programs).
  EXPECT_LE(j["iteration_time_s"].get<double>(), j["baselines"][3]["simulated_s"].get<double>() * 1.001);
  for (const auto& c : j["candidates"]) EXPECT_TRUE(c["kind"] == "spmd" || c["kind"] == "hybrid");
  std::filesystem::remove(report);
}

TEST(Cli, BarePlanPrintsTheStrategyTable) {
  const CliRun r = run("");
  ASSERT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("gpt3-1.3b on a100-v100-2x2: 32 GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dp-even"), std::string::npos);
  EXPECT_NE(r.out.find("dp-proportional"), std::string::npos);
  EXPECT_NE(r.out.find("busy A100-SXM4-40GB"), std::string::npos);
  EXPECT_NE(r.out.find("upper bound:"), std::string::npos);
}

TEST(Cli, ReportHasTheContractFields) {
  const auto report = temp("contract.json");
  ASSERT_EQ(run("plan --model bert-base --report " + report.string()).rc, 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(report));
  for (const char* k : {"iteration_time_s", "samples_per_s", "tokens_per_s", "mfu", "upper_bound_samples_per_s",
                        "devices", "strategy", "baselines", "candidates", "plan_time_s", "assumptions"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  for (const char* k : {"name", "gpu", "compute_s", "comm_s", "idle_s", "peak_memory_bytes"}) {
    EXPECT_TRUE(j["devices"][0].contains(k)) << k;
  }
  std::filesystem::remove(report);
}

TEST(Cli, ListsShippedThings) {
  EXPECT_EQ(run("list clusters").out,
            "a100-8x8\na100-mi250x\na100-v100-2x2\ngb200-nvl72-16\ngraph-h100-4\nh100-mi300x\nhap-v100-p100\nhethub-768\nmeta-h100-24k\nmi300x-mi355x\np3-8xlarge-5\npair-a100-h100\npair-a100-mi250x\n"
            "pair-a100-mi300x\npair-h100-mi250x\npair-h100-mi300x\npair-mi250x-mi300x\nselene-64\n");
  EXPECT_NE(run("list devices").out.find("MI300X\n"), std::string::npos);
  EXPECT_NE(run("list models").out.find("llama2-13b\n"), std::string::npos);
  EXPECT_NE(run("list models").out.find("deepseek-v3\n"), std::string::npos);
  EXPECT_NE(run("list strategies").out.find("dp-proportional"), std::string::npos);
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

TEST(CliCollective, SweepReportsNcclTestsFigures) {
  const auto report = temp("collective.json");
  const CliRun r = run("collective --cluster a100-8x8 --op allgather --size 1MiB:4MiB --algorithm ring --report " +
                       report.string());
  ASSERT_EQ(r.rc, 0);
  // nccl-tests' columns, sizes in bytes.
  EXPECT_NE(r.out.find("#         size         count   type  redop   root       time    algbw    busbw  algorithm\n"
                       "#          (B)    (elements)                            (us)   (GB/s)   (GB/s)\n"
                       "       1048576        262144  float   none     -1"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(report));
  ASSERT_EQ(j["results"].size(), 3u);
  for (const auto& row : j["results"]) {
    const double size = row["size_bytes"], time = row["time_s"];
    EXPECT_EQ(row["algorithm"], "ring");
    EXPECT_NEAR(row["algbw_Bps"].get<double>(), size / time, 1e-6 * size / time);
    EXPECT_NEAR(row["busbw_Bps"].get<double>(), size / time * 63.0 / 64.0, 1e-6 * size / time);  // (n-1)/n
  }
  EXPECT_DOUBLE_EQ(j["results"][2]["size_bytes"].get<double>(), 4.0 * 1024 * 1024);
  std::filesystem::remove(report);
}

TEST(CliCollective, EveryShippedClusterSweeps) {
  for (const char* c : {"a100-8x8", "a100-mi250x", "a100-v100-2x2", "h100-mi300x", "hap-v100-p100"}) {
    for (const char* op : {"allreduce", "alltoall", "broadcast"}) {
      const CliRun r = run(std::string("collective --cluster ") + c + " --op " + op + " --size 64KiB:1MiB");
      EXPECT_EQ(r.rc, 0) << c << " " << op;
    }
  }
}

TEST(CliCollective, TraceHasLinkCounters) {
  const auto trace = temp("collective.trace");
  ASSERT_EQ(run("collective --cluster a100-v100-2x2 --size 64MiB --group 0-31 --trace " + trace.string()).rc, 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(trace));
  int counters = 0;
  for (const auto& e : j["traceEvents"]) counters += e["ph"] == "C";
  EXPECT_GT(counters, 10);
  std::filesystem::remove(trace);
}

TEST(CliCollective, SetEditsTheClusterAndOnlyIt) {
  // A what-if on one collective (other NICs?) without a copy of the cluster file: a100-8x8's ring
  // across 8 nodes is bound by its 200 Gb/s NICs (174 GB/s busbw), so half as fast NICs nearly halve it
  // and twice as fast ones lift it to NVLink's bound. A model field is refused.
  const auto busbw = [&](const std::string& set) {
    const auto report = temp("collective-set.json");
    EXPECT_EQ(run("collective --cluster a100-8x8 --size 1GiB --algorithm ring --report " + report.string() + set).rc, 0) << set;
    const double b = nlohmann::json::parse(slurp(report))["results"][0]["busbw_Bps"];
    std::filesystem::remove(report);
    return b;
  };
  const double as_shipped = busbw("");
  EXPECT_LT(busbw(" --set cluster.node_types[*].nic.bandwidth=100Gbps"), 0.6 * as_shipped);
  EXPECT_GT(busbw(" --set cluster.node_types[*].nic.bandwidth=400Gbps"), 1.05 * as_shipped);
  EXPECT_EQ(test::cli_messages("collective --set model.layers=3").rc, 2);
}

TEST(Cli, ABatchTooLargeToSimulateNamesTheOptionThatSetIt) {
  // Too many tasks for this machine, found while planning: the model file's training.global_batch
  // was named, though --global-batch set it.
  const test::CliRun r = test::run_hetsim("-q simulate --no-upper-bound --every-step --global-batch 10000000", test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.output.rfind("--global-batch: error: one iteration of this run needs ", 0), 0u) << r.output;
}

TEST(CliCollective, BadArgumentsExitWithTwo) {
  auto err = [](const std::string& args) { return test::run_hetsim(args, test::Capture::kStderr); };
  EXPECT_EQ(err("collective --size 1GB:1MB").rc, 2);
  EXPECT_EQ(err("collective --size 12x").rc, 2);
  EXPECT_EQ(err("collective --size 4096").rc, 0);  // a plain count is bytes, as nccl-tests' -b takes it
  EXPECT_EQ(err("collective --size 0").output, "--size: error: \"0\" is less than one 4-byte element (nccl-tests' float); expected at least 4B\n");
  // Whole bytes but no whole float: 3 B read as 0 elements at 0.00 GB/s; 1kb is 125 bytes.
  EXPECT_EQ(err("collective --size 3B").output, "--size: error: \"3B\" is less than one 4-byte element (nccl-tests' float); expected at least 4B\n");
  EXPECT_EQ(err("collective --size 1kb").output,
            "--size: error: \"1kb\" is not a whole number of 4-byte elements (nccl-tests' float, its count column): round it to a multiple of 4 bytes\n");
  // A plain number in scientific notation is bytes too, held to the same limits (it was told it
  // had no unit, and to write "1e30GiB").
  EXPECT_EQ(err("collective --size 1e3").rc, 0);
  EXPECT_EQ(err("collective --size 1e30").output,
            "--size: error: \"1e30\" is more than one collective moves; expected at most 1TiB (more than any GPU's memory)\n");
  EXPECT_EQ(err("collective --size 1.5").output, "--size: error: \"1.5\" is not a whole number of bytes\n");
  EXPECT_EQ(err("collective --size 1.5B").output, "--size: error: \"1.5B\" is not a whole number of bytes\n");  // (rounded to 2)
  EXPECT_EQ(err("collective --size 1e-9GiB").output, "--size: error: \"1e-9GiB\" is not a whole number of bytes\n");
  EXPECT_EQ(err("collective --group 0-99").output,
            "--group: error: \"99\" is not a GPU index of this cluster: it has 32 GPUs (0 to 31); write e.g. \"0-7,16\"\n");
  EXPECT_EQ(err("collective --op broadcast --algorithm tree").output,
            "--algorithm: error: tree cannot run broadcast here: tree runs allreduce only\n");
  EXPECT_EQ(err("collective --op reduce --group 0-3 --root 9").rc, 2);
}

}  // namespace
}  // namespace hetsim

#include "kernels_profile/synthetic_tables.hpp"
#include "kernels_profile/validation.hpp"

namespace hetsim {
namespace {

TEST(CliValidate, ErrorTableAgainstLayerMeasurements) {
  // Synthetic tables (known functions, no GPU) and "layer measurements" set 3 % above and 2 %
  // below hetsim's prediction from them: the command must find exactly those errors.
  const auto dir = test::synthetic_table_dir("validate");
  const CostModel cost(std::make_shared<KernelTables>(KernelTables::load_dir(dir)), nullptr);
  const Device a100 = load_device(test::shipped("kernels_profile/devices", "A100-SXM4-40GB"));
  LayerMeasurement m;
  m.device = "A100-SXM4-40GB";
  m.hidden = 2048;
  m.heads = 16;
  m.ffn_hidden = 8192;
  m.seq_len = 2048;
  m.micro_batch = 2;
  m.dtype = DType::kFp16;
  const LayerPrediction p = predict_layer(m, a100, cost);
  EXPECT_EQ(p.sources[static_cast<int>(CostSource::kRoofline)], 0);  // every operator from the tables
  std::filesystem::create_directories(dir / "layers");
  const auto layers = dir / "layers" / "layers.csv";  // kept out of the table directory
  {
    std::ofstream out(layers);
    out << "device,hidden,heads,ffn_hidden,seq_len,micro_batch,dtype,fwd_s,bwd_s,gpu,driver,clock_mhz,date\n"
        << "A100-SXM4-40GB,2048,16,8192,2048,2,fp16," << p.fwd_s * 1.03 << "," << p.bwd_s * 0.98 << ",synthetic,none,0,2026-01-01\n";
  }
  const auto report = temp("validate.json");
  const CliRun r = run("validate --kernels " + dir.string() + " --layers " + layers.string() + " --report " + report.string());
  ASSERT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("median layer error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(slurp(report));
  const double total_pred = p.fwd_s + p.bwd_s, total_meas = p.fwd_s * 1.03 + p.bwd_s * 0.98;
  EXPECT_NEAR(j["layer_median_error"].get<double>(), std::fabs(total_pred - total_meas) / total_meas, 1e-6);
  EXPECT_LT(j["interpolation_median_error"].get<double>(), 0.10);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(report);
}

TEST(CliValidate, SaysWhenThereIsNothingMeasured) {
  const auto empty = std::filesystem::temp_directory_path() / ("hetsim_empty_" + std::to_string(::getpid()));
  std::filesystem::create_directories(empty);
  const CliRun r = run("validate --kernels " + empty.string());
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("no measured kernel tables"), std::string::npos);
  std::filesystem::remove_all(empty);
}

TEST(Cli, ReshardReportsTimeBandwidthAndNetworkBytes) {
  const auto report = temp("reshard.json");
  const std::string base =
      "reshard --cluster p3-8xlarge-5 --src 0-3,4-7 --src-shape 2x4 --src-spec R,R,R --dst 8-11,12-15 "
      "--dst-shape 2x4 --dst-spec S0,R,R --tensor 256x1024x512 --dtype int32";
  const CliRun r = run(base + " --load-balance order --seed 3 --report " + report.string());
  ASSERT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("effective bandwidth"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(slurp(report));
  // 512 MiB, half to each destination host, one broadcast per half from a different host: each
  // half crosses its sender's NIC once and its receiving host's NIC once.
  EXPECT_EQ(j["method"], "broadcast");
  EXPECT_EQ(j["seed"], 3);
  EXPECT_DOUBLE_EQ(j["network_bytes"].get<double>(), 512.0 * 1024 * 1024);
  EXPECT_GT(j["time_s"].get<double>(), 512.0 * 1024 * 1024 / 2 / 1.25e9);
  EXPECT_NEAR(j["effective_bandwidth_bps"].get<double>(), 512.0 * 1024 * 1024 * 8 / j["time_s"].get<double>(), 1);
  EXPECT_TRUE(j["order_search"]["complete"].get<bool>());
  // Same seed, same output, bit for bit.
  const auto again = temp("reshard2.json");
  ASSERT_EQ(run(base + " --load-balance order --seed 3 --report " + again.string()).rc, 0);
  EXPECT_EQ(slurp(report), slurp(again));
  for (const auto& p : {report, again}) std::filesystem::remove(p);
}

TEST(Cli, ReshardRejectsBadMeshesAndSpecs) {
  const std::string ok = "reshard --cluster p3-8xlarge-5 ";
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--src 0-3 --src-shape 1x4 --src-spec S1,R --dst 3-6 --dst-shape 1x4 --dst-spec R,R", "GPU 3 is in both meshes"},
           {"--src 0-3 --src-shape 2x4 --src-spec S1,R --dst 4-7 --dst-shape 1x4 --dst-spec R,R", "the shape 2x4 needs 8 GPUs but 4 are listed"},
           {"--src 0-2 --src-shape 1x3 --src-spec S1,R --dst 4-7 --dst-shape 1x4 --dst-spec R,R", "does not divide into 3 equal parts"},
           {"--src 0-3 --src-shape 1x4 --src-spec S2,R --dst 4-7 --dst-shape 1x4 --dst-spec R,R", "is not R, S0, S1 or S01"},
           {"--src 0-3 --src-shape 1x4 --src-spec S1,R --dst 4-7 --dst-shape 1x4 --dst-spec R", "has 1 entries but the tensor has 2"},
           {"--src 0-3 --src-shape 1x4 --src-spec S1,R --dst 4-5,8-9 --dst-shape 1x4 --dst-spec R,R", "row 0 of the mesh (a host)"},
           {"--src 0-3 --src-shape 2x2 --src-spec S0,R --dst 4-7 --dst-shape 1x4 --dst-spec R,R",
            "rows 0 and 1 of the mesh (hosts) are both on node 0; each row is a host of its own (for GPUs of one node, write the shape 1x4)"},
           {"--src 0-3 --src-shape 1x4 --src-spec S1,R --dst 4-7 --dst-shape 1x4 --dst-spec R,R --tensor 1024x0", "not a positive whole number"},
           {"--src 0-99 --src-shape 1x4 --src-spec S1,R --dst 4-7 --dst-shape 1x4 --dst-spec R,R", "is not a GPU index"}}) {
    const std::string tensor = c.args.find("--tensor") == std::string::npos ? " --tensor 1024x64" : "";
    const test::CliRun r = test::run_hetsim(ok + c.args + tensor, test::Capture::kStderr);
    EXPECT_EQ(r.rc, 2) << c.args;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(CliReliability, SimulateGivesTheGoodputWithFailuresInTheSummaryAndTheReport) {
  const auto report = std::filesystem::temp_directory_path() / ("hetsim_reliability_" + std::to_string(::getpid()) + ".json");
  const test::CliRun r = test::run_hetsim("-q simulate -s dp-even --no-upper-bound --reliability --report " + report.string(),
                                          test::Capture::kStdout);
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("with failures (--reliability): goodput "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("restart 600 s (assumed)"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(report));
  std::filesystem::remove(report);
  ASSERT_TRUE(j.contains("goodput"));
  const double g = j["goodput"]["fraction"].get<double>();
  EXPECT_GT(g, 0.9);  // 32 GPUs fail about every two months: little is lost
  EXPECT_LT(g, 1.0);
  EXPECT_NEAR(j["goodput"]["samples_per_s"].get<double>(), g * j["samples_per_s"].get<double>(), 1e-9 * j["samples_per_s"].get<double>());
}

}  // namespace
}  // namespace hetsim
