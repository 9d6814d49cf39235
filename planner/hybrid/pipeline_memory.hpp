// File: planner/hybrid/pipeline_memory.hpp
// Whether a pipeline program fits its GPUs: each GPU's peak memory (its weights, gradients and
// optimizer state with the runtime reserve, plus the activations in flight in the order its compute
// stream runs the passes) against the device's memory, and the activations it offloads against its
// host's.
#pragma once

#include "planner/hybrid/pass_emitter.hpp"
#include "planner/hybrid/pipeline_program.hpp"

namespace hetsim {

// Sets out.peak_memory_bytes for every GPU, and out.feasible false with out.infeasible_reason naming
// the first GPU that does not fit and its shortfall. `reserve_bytes`: the runtime reserve counted in
// each device's static memory.
void check_pipeline_memory(const HybridPlan& plan, const Cluster& cluster, const StageWorkFn& work,
                           const PipelineLayout& layout, const ComputeStreams& streams, double reserve_bytes,
                           PipelineProgram& out);

}  // namespace hetsim
