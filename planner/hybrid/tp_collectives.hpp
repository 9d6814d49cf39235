// File: planner/hybrid/tp_collectives.hpp
// How the tensor-parallel collectives of a compute span (stage_work.hpp's TpBytes) become
// simulator tasks on the TP stream of a group (or the expert stream, for expert parallelism).
#pragma once

#include <string>
#include <vector>

#include "planner/hybrid/stage_work.hpp"
#include "sim/program.hpp"

namespace hetsim {

// The TP collectives of `bytes` over `group` (sorted) after the tasks `deps`, one after the other
// on `stream`: reduce-scatters, all-gathers, all-reduces (under sequence parallelism a
// reduce-scatter plus an all-gather each), all-to-alls. Returns the last task (-1 when none: then
// nothing was added).
int add_tp_collectives(Program& p, const std::vector<int>& group, const TpBytes& bytes, bool sequence_parallel,
                       std::vector<int> deps, const std::string& label, CommStream stream = CommStream::kTensor);
// The same after one task `dep` (-1: none); returns `dep` when there is nothing to add.
int add_tp_collectives(Program& p, const std::vector<int>& group, const TpBytes& bytes, bool sequence_parallel, int dep,
                       const std::string& label, CommStream stream = CommStream::kTensor);

}  // namespace hetsim
