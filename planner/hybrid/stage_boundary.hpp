// File: planner/hybrid/stage_boundary.hpp
// A stage boundary in the terms of cross-mesh resharding: the part of a micro-batch's boundary
// tensor a stage copy holds, and Megatron's pairing of sending and receiving TP ranks. Internal
// to planner/hybrid/.
#pragma once

#include "planner/hybrid/pipeline_layout.hpp"
#include "planner/resharding/reshard_works.hpp"

namespace hetsim {

// Copy `r`'s part of a boundary tensor of [micro_batch samples] x [units of the sequence]: its
// samples on every TP rank, or under sequence parallelism 1/tp of the sequence on each rank.
[[nodiscard]] MeshLayout boundary_layout(const Replica& r, long micro_batch, bool sequence_parallel, long units,
                                         double element_bytes);

// Megatron pairs receiving rank k with sending rank k mod tp: offers that rank first among the
// senders of every single-receiver work of `w` (moving `from` into `into`).
void offer_matching_ranks_first(ReshardWorks& w, const MeshLayout& from, const MeshLayout& into);

}  // namespace hetsim
