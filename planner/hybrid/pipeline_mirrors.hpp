// File: planner/hybrid/pipeline_mirrors.hpp
// Data-parallel pipelines that nothing tells apart, written once. Pipelines of a hybrid plan whose
// stages match stage by stage (node types, node health, where the devices sit in their nodes and
// NVLink domains, layers, TP/CP/EP widths, copies and their shares of each micro-batch, schedule)
// run the same tasks from the same moments: the program
// holds one of them, and every task of it names the others' devices as mirrors (ComputeTask and
// SendTask mirrors, CollectiveTask mirror groups), as data-parallel replicas' compute already is
// (planner/data_parallel.cpp). Each copy's transfers and collectives are still simulated, as
// communications of their own; the simulator checks that the copies keep one pace (then the times
// are those of each pipeline written out), and where they do not (links shared unevenly, a
// collective beside one copy's kernel) simulates the copies written out instead
// (sim/mirror_copies.hpp, SimResult::mirrors_diverged). Internal to planner/hybrid/.
#pragma once

#include <cstddef>
#include <vector>

#include "planner/hybrid/hybrid_plan.hpp"
#include "planner/hybrid/pass_emitter.hpp"
#include "planner/hybrid/pipeline_layout.hpp"
#include "sim/program.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// For each pipeline of `plan` (as `layout` lays out its stages), the pipeline it mirrors: -1 for one
// the program writes, else the first earlier pipeline like it. None under ZeRO-3 (its gathers run in
// lockstep across pipelines, emitted with them), nor where the network between nodes has an
// oversubscribed tier or is a graph (pipelines there tend to part, and would be simulated twice).
[[nodiscard]] std::vector<int> alike_pipelines(const HybridPlan& plan, const Cluster& cluster, const PipelineLayout& layout);

// Device maps of the mirrors: for each pipeline written (mirror_of[p] == -1) the maps, one per
// pipeline that mirrors it, from each of its devices to the mirror's device in the same place
// (stage, copy, rank); -1 for devices outside it.
struct PipelineMirrors {
  std::vector<int> mirror_of;                       // per pipeline, as alike_pipelines gives it
  std::vector<std::vector<std::vector<int>>> maps;  // [written pipeline][mirror][device] -> device
  [[nodiscard]] bool any() const { return !maps.empty(); }
  [[nodiscard]] bool is_mirror(size_t p) const { return !mirror_of.empty() && mirror_of[p] >= 0; }
  // Pipelines pipeline p's tasks stand for: itself and its mirrors.
  [[nodiscard]] double stands_for(size_t p) const { return 1.0 + (any() ? static_cast<double>(maps[p].size()) : 0.0); }
};
[[nodiscard]] PipelineMirrors pipeline_mirrors(const std::vector<int>& mirror_of, const PipelineLayout& layout, int devices);

// Names the mirrors' devices on every task of [first, end) of `program` (tasks of the written
// pipelines only: each task's devices lie in one written pipeline).
void add_pipeline_mirrors(Program& program, size_t first, const PipelineMirrors& mirrors);

// Once the written pipelines are emitted: each mirror's device holds what its written device holds
// (the tasks producing its blocks' gradients, its latest TP collective, its compute stream's
// kernel and activation memory) for the gradient synchronisation and the memory check; its
// parameter gathers were waited for by the written device (`param_waits`: [device][block]).
void mirror_device_state(const PipelineMirrors& mirrors, PipelineLayout& layout, ComputeStreams& streams,
                         std::vector<std::vector<std::vector<int>>>& param_waits);

}  // namespace hetsim
