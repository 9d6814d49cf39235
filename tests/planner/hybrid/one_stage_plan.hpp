// File: tests/planner/hybrid/one_stage_plan.hpp
// A hybrid plan of one pipeline of one stage on GPUs 0..gpus-1, for the tests of what happens
// inside a stage (expert parallelism, combined 1F1B, TP overlaps), and DGX H100 nodes to run it on.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include "base/input_error.hpp"
#include "planner/hybrid/hybrid_plan.hpp"
#include "planner/hybrid/hybrid_plan_file.hpp"
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

// `plan` written as a plan file (hybrid_plan_to_yaml) with its text `from` replaced by `to` (empty: as
// written) and read back for `model` on `cluster`: the plan read, or the reader's refusal (its message).
struct EditedPlanRead {
  std::optional<HybridPlan> plan;
  std::string error;
};
inline EditedPlanRead read_edited_plan(const HybridPlan& plan, const ModelSpec& model, const Cluster& cluster,
                                       const std::string& from = "", const std::string& to = "") {
  std::string text = hybrid_plan_to_yaml(plan);
  if (!from.empty()) {
    const size_t at = text.find(from);
    if (at == std::string::npos) throw std::logic_error("read_edited_plan: the plan file has no \"" + from + "\"");
    text.replace(at, from.size(), to);
  }
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("hetsim_edited_plan_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << text;
  EditedPlanRead out;
  try {
    out.plan = load_hybrid_plan(file, model, cluster);
  } catch (const InputError& e) {
    out.error = e.what();
  }
  std::filesystem::remove(file);
  return out;
}

}  // namespace hetsim::test
