// File: tests/sim/trace_test.cpp
#include "sim/trace.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/executor.hpp"
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

}  // namespace
}  // namespace hetsim
