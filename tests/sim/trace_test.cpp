// File: tests/sim/trace_test.cpp
#include "sim/trace.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/executor.hpp"
#include "topologies/fabric.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

// The trace the CLI streams to its file, event by event, is the trace chrome_trace holds: the same
// events in the same order. A program with compute, a collective over two nodes and a send, its
// flows recorded so that the link counters are there too.
TEST(Trace, TheStreamedTraceIsTheTraceHeldWhole) {
  const Cluster c = load_cluster(test::shipped("topologies", "a100-8x8"));
  Program p;
  p.devices.resize(static_cast<size_t>(c.gpu_count()));
  const int a = p.add({"fwd \"quoted\"", ComputeTask{0, 1e-3, 1e9, 0, {1, 2}}, {}});
  const int b = p.add({"ar", collective(CollectiveOp::kAllReduce, {0, 1, 8, 9}, 1e8), {a}});
  p.add({"send", SendTask{0, 16, 5e7, CommStream::kPipeline, {{1, 17}}}, {b}});
  SimOptions o;
  o.record_flows = true;
  const SimResult r = simulate(p, c, o);
  ASSERT_FALSE(r.flows.empty());
  std::ostringstream out;
  write_chrome_trace(out, p, c, r);
  const nlohmann::json streamed = nlohmann::json::parse(out.str());
  const nlohmann::json held = chrome_trace(p, c, r);
  EXPECT_EQ(streamed, held);
  size_t counters = 0;
  for (const nlohmann::json& e : held["traceEvents"]) counters += e["ph"] == "C" ? 1 : 0;
  EXPECT_GT(counters, 0u);
  EXPECT_EQ(out.str().find("  "), std::string::npos);  // compact: no indentation
}

TEST(Trace, ALinksCounterNeverDrawsMoreThanTheLinkCarries) {
  // GPU 0 sends 1 GB to node 1 and 0.2 GB to node 2 at once, both through NIC 0 of node 0: they
  // share it until the short one ends, then the long one has it alone. Each flow's mean rate over
  // its life (what the counters are built from) sums to more than the NIC while both run (the long
  // one's mean includes its time alone); the counter is capped at what the link carries.
  const Cluster c = load_cluster(test::shipped("topologies", "a100-8x8"));
  Program p;
  p.devices.resize(static_cast<size_t>(c.gpu_count()));
  p.add({"long", SendTask{0, 8, 1e9, CommStream::kPipeline}, {}});
  p.add({"short", SendTask{0, 16, 2e8, CommStream::kPipelineBack}, {}});
  SimOptions o;
  o.record_flows = true;
  const SimResult r = simulate(p, c, o);
  double nic = 0;
  const Fabric fabric(c);
  for (const FabricLink& l : fabric.links()) nic = l.name == "node0.nic0.tx" ? l.bandwidth_Bps : nic;
  ASSERT_GT(nic, 0);
  double mean_sum = 0;  // the two flows' mean rates added, as drawn before the cap
  for (const FlowRecord& f : r.flows) mean_sum += f.bytes / (f.end_s - f.start_s);
  EXPECT_GT(mean_sum, 1.05 * nic);
  double most = 0;
  const nlohmann::json trace = chrome_trace(p, c, r);
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "C" && e["name"].get<std::string>().starts_with("node0.nic0.tx")) most = std::max(most, e["args"]["GB/s"].get<double>());
  }
  EXPECT_GT(most, 0.99 * nic / 1e9);
  EXPECT_LE(most, nic / 1e9 * (1 + 1e-12));
}

}  // namespace
}  // namespace hetsim
