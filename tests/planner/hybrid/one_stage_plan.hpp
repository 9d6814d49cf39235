// File: tests/planner/hybrid/one_stage_plan.hpp
// A hybrid plan of one pipeline of one stage on GPUs 0..gpus-1, for the tests of what happens
// inside a stage (expert parallelism, combined 1F1B, TP overlaps), and DGX H100 nodes to run it on.
#pragma once

#include "planner/hybrid/hybrid_plan.hpp"
#include "test_support.hpp"
#include "topologies/cluster.hpp"

namespace hetsim::test {

inline HybridPlan one_stage_plan(int gpus, int layers, long micro_batches, long micro_batch, int tp = 1, int ep = 1) {
  HybridPlan p;
  p.micro_batch = micro_batch;
  PipelinePlan pl;
  pl.micro_batches = micro_batches;
  StagePlan st;
  st.tp = tp;
  st.ep = ep;
  for (int d = 0; d < gpus; ++d) st.devices.push_back(d);
  st.chunks = {{0, layers - 1}};
  pl.stages.push_back(st);
  p.pipelines.push_back(pl);
  return p;
}

// `nodes` DGX H100 nodes (tests/fixtures/clusters/dgx-h100-16.yaml's node type).
inline Cluster h100_nodes(int nodes) {
  Cluster c = fixture_cluster("dgx-h100-16");
  c.node_types.front().count = nodes;
  index_gpus(c);
  return c;
}

}  // namespace hetsim::test
