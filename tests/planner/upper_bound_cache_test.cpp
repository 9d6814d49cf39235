// File: tests/planner/upper_bound_cache_test.cpp
// The upper bound's homogeneous references kept on disk (planner/reference_key.hpp,
// base/disk_cache.hpp): a cached bound equals the computed one bit for bit, a second run reads
// every reference from the cache, and any input that changes a reference changes its key.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "base/temp_dir.hpp"
#include "planner/planner.hpp"
#include "planner/reference_key.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(UpperBoundCache, ACachedBoundEqualsTheComputedOneAndIsReadBack) {
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster cluster = test::shipped_cluster("a100-v100-2x2");  // two GPU types: two references
  const CostModel cost = CostModel::shipped();
  std::vector<std::string> uncached_notes;
  double uncached = 0;
  {
    const test::ScopedEnv off("HETSIM_CACHE_DIR", "off");
    uncached = plan_upper_bound(model, cluster, cost, SimOptions{}, uncached_notes);
  }
  ASSERT_GT(uncached, 0);
  const TempDir tmp("bound-cache");
  const test::ScopedEnv on("HETSIM_CACHE_DIR", tmp.path().string());
  std::vector<std::string> first_notes, second_notes;
  const double first = plan_upper_bound(model, cluster, cost, SimOptions{}, first_notes);
  const std::vector<fs::path> written = entries(tmp.path() / "upper-bound");
  ASSERT_EQ(written.size(), 2U);
  const double second = plan_upper_bound(model, cluster, cost, SimOptions{}, second_notes);
  EXPECT_EQ(first, uncached);  // bit for bit
  EXPECT_EQ(second, uncached);
  EXPECT_EQ(first_notes, uncached_notes);
  EXPECT_EQ(second_notes, uncached_notes);
  EXPECT_EQ(entries(tmp.path() / "upper-bound"), written);  // nothing new: both read back
  // A traced run (--trace keeps every flow) reads them too: a reference is never traced.
  SimOptions traced;
  traced.record_flows = true;
  std::vector<std::string> traced_notes;
  EXPECT_EQ(plan_upper_bound(model, cluster, cost, traced, traced_notes), uncached);
  EXPECT_EQ(entries(tmp.path() / "upper-bound"), written);

  // The second run read the entries, not the programs: an entry's figure changed by hand is what
  // it then reports (per GPU x 16 GPUs of that type).
  std::ifstream in(written.front(), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const size_t at = s.rfind("{\"notes\"");
  ASSERT_NE(at, std::string::npos);
  s = s.substr(0, at) + R"({"notes":[],"per_gpu_samples_per_s":"0x1p+10"})";
  fs::remove(written.front());
  std::ofstream(written.front(), std::ios::binary) << s;
  std::vector<std::string> notes;
  EXPECT_NE(plan_upper_bound(model, cluster, cost, SimOptions{}, notes), uncached);

  // A damaged value (not a finite figure) is recomputed and replaced.
  s = s.substr(0, at) + R"({"notes":[],"per_gpu_samples_per_s":"nan"})";
  fs::remove(written.front());
  std::ofstream(written.front(), std::ios::binary) << s;
  notes.clear();
  EXPECT_EQ(plan_upper_bound(model, cluster, cost, SimOptions{}, notes), uncached);
  notes.clear();
  EXPECT_EQ(plan_upper_bound(model, cluster, cost, SimOptions{}, notes), uncached);

  // A faster NIC on one type: that reference is new, the other one is read back.
  Cluster faster = cluster;
  faster.node_types[0].nic.bandwidth_Bps *= 2;
  notes.clear();
  (void)plan_upper_bound(model, faster, cost, SimOptions{}, notes);
  EXPECT_EQ(entries(tmp.path() / "upper-bound").size(), 3U);
}

TEST(UpperBoundCache, EveryInputOfAReferenceIsInItsKeyAndNamesAreNot) {
  const ModelSpec model = load_model(test::shipped("workloads", "gpt3-1.3b"));
  const Cluster sub = test::shipped_cluster("a100-v100-2x2").only_node_type(0);
  const CostModel cost = CostModel::shipped();
  const std::string key = reference_key(sub, model, 64, cost, SimOptions{}, "dp");
  EXPECT_EQ(reference_key(sub, model, 64, cost, SimOptions{}, "dp"), key);
  auto changed = [&](auto&& edit) {
    Cluster c = sub;
    ModelSpec m = model;
    SimOptions o;
    long batch = 64;
    std::string refs = "dp";
    CostModel k = cost;
    edit(c, m, o, batch, refs, k);
    return reference_key(c, m, batch, k, o, refs) != key;
  };
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].gpu.memory_bytes /= 2; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].gpu.efficiency.matmul *= 0.9; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].gpu.peak_flops[DType::kFp16] *= 2; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].gpu.fitted.gemm_time_excess = 0.1; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].gpu.fitted.memory_bound_time_excess = 0.1; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].gpu.fitted.overlap_slowdown = 0.1; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].gpu.calibration = "another"; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].count += 1; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].nic.latency_s *= 2; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].intra.achievable = 0.8; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.node_types[0].degraded_nodes.push_back({0, Degradation{2, 1, 1}}); }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) { c.network.oversubscription = 2; }));
  EXPECT_TRUE(changed([](Cluster& c, auto&...) {
    c.network.topology = c.network.topology == NetTopology::kFatTree ? NetTopology::kSingleSwitch : NetTopology::kFatTree;
  }));
  EXPECT_TRUE(changed([](Cluster&, ModelSpec& m, auto&...) { m.layers += 1; }));
  EXPECT_TRUE(changed([](Cluster&, ModelSpec& m, auto&...) { m.training.micro_batch += 1; }));
  EXPECT_TRUE(changed([](Cluster&, ModelSpec& m, auto&...) { m.training.gemm_precision = GemmPrecision::kFp8Delayed; }));
  EXPECT_TRUE(changed([](Cluster&, ModelSpec& m, auto&...) { MoeSpec moe;
    moe.experts = 8;
    m.moe = moe; }));
  EXPECT_TRUE(changed([](Cluster&, ModelSpec&, SimOptions& o, auto&...) { o.fidelity = Fidelity::kStep; }));
  EXPECT_TRUE(changed([](Cluster&, ModelSpec&, SimOptions& o, auto&...) { o.collective_interference = false; }));
  EXPECT_TRUE(changed([](Cluster&, ModelSpec&, SimOptions&, long& b, auto&...) { b = 128; }));
  EXPECT_TRUE(changed([](Cluster&, ModelSpec&, SimOptions&, long&, std::string& r, auto&) { r = "dp, spmd"; }));
  EXPECT_TRUE(changed([](Cluster&, ModelSpec&, SimOptions&, long&, std::string&, CostModel& k) { k = CostModel{}; }));
  // A graph network: its switches, links and attachments, read from memory, not from the file
  // (whose path is relative to the cluster file's folder).
  const Cluster graph = test::shipped_cluster("graph-h100-4");
  const std::string graph_key = reference_key(graph, model, 64, cost, SimOptions{}, "dp");
  EXPECT_NE(graph_key.find("graph="), std::string::npos);
  Cluster regraphed = graph;
  regraphed.network.graph_nodes = {3, 2, 1, 0};  // the nodes plugged in elsewhere
  EXPECT_NE(reference_key(regraphed, model, 64, cost, SimOptions{}, "dp"), graph_key);
  // Where inputs came from changes nothing computed.
  EXPECT_FALSE(changed([](Cluster& c, auto&...) { c.name = "renamed"; c.file = "/elsewhere.yaml"; }));
  EXPECT_FALSE(changed([](Cluster& c, ModelSpec& m, auto&...) { c.node_types[0].gpu.source = "another datasheet"; m.file = "/x.yaml"; }));
}

}  // namespace
}  // namespace hetsim
