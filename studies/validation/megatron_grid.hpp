// File: studies/validation/megatron_grid.hpp
// The hybrid plan of a Megatron-LM run given as its grid (tensor x pipeline x data parallel sizes,
// micro-batch, schedule): equal layers per stage (and per chunk when interleaved), ranks ordered
// as Megatron orders them by default (TP fastest, then data parallel, then pipeline), one hetsim
// pipeline per data-parallel replica.
#pragma once

#include "planner/hybrid/hybrid_plan.hpp"
#include "studies/validation/run_file.hpp"

namespace hetsim {

// Throws InputError at `where` when the grid does not fit the model and cluster (GPUs not a
// multiple of tp x pp, layers not divisible by pp x chunks, batch not divisible by dp x micro_batch)
// or the plan breaks a rule of check_hybrid_plan.
[[nodiscard]] HybridPlan megatron_plan(const MegatronGrid& grid, const ModelSpec& model, const Cluster& cluster,
                                       const Diagnostic& where);

}  // namespace hetsim
