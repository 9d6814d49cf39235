// File: planner/hybrid/stage_synthesis.hpp
// HAP inside a stage: the SPMD synthesis (planner/spmd: A* over sharding rules alternating with
// the ratio LP) run on one TP group for the operators of a transformer layer, and its program as
// the layer's placements for stage_block_work. The layer's input arrives replicated on every rank
// and its output must leave replicated (the next layer, or the stage boundary, expects it), so the
// search pays for any other layout at both ends. Rules that replicate weights over split data
// (gradient synchronisation inside the group) are left out: splitting the batch is the data-
// parallel axis, which the hybrid planner chooses across TP groups. Megatron's tensor parallelism
// (column QKV, heads attention, row output projection, column/row MLP) is one of the programs the
// search can find; it costs both with the same model so that the choice is visible.
#pragma once

#include <string>
#include <vector>

#include "planner/hybrid/stage_work.hpp"
#include "planner/spmd/spmd_search.hpp"

namespace hetsim {

// Alpha-beta costs of the collectives over the TP group (even shards).
struct GroupCollectives {
  CollectiveCost all_gather, reduce_scatter, all_reduce, all_to_all;
};

struct LayerSynthesis {
  LayerProgram program;            // placements of the layer's operators for stage_block_work
  std::vector<std::string> rules;  // "layer0.qkv: column", one per operator
  std::vector<double> ratios;      // each rank's share, from the LP (in whole attention heads)
  double cost_s = 0;               // the search's cost of one layer for one micro-batch slice
  double megatron_cost_s = 0;      // Megatron's rules under the same cost model
  bool megatron = false;           // the search chose Megatron's rules
  SearchStats search;
};

// The program of one transformer layer of `model` on a TP group of `tp` GPUs of type `device`,
// each running `samples` samples per micro-batch in `dtype`.
[[nodiscard]] LayerSynthesis synthesise_layer(const ModelSpec& model, const Device& device, DType dtype, const CostModel& cost,
                                              long samples, int tp, const GroupCollectives& comm);

}  // namespace hetsim
