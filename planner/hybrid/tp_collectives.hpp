// File: planner/hybrid/tp_collectives.hpp
// How the tensor-parallel collectives of a compute span (stage_work.hpp's TpBytes) become
// simulator tasks on the TP stream of a group.
#pragma once

#include <string>
#include <vector>

#include "planner/hybrid/stage_work.hpp"
#include "sim/program.hpp"

namespace hetsim {

// The TP collectives of `bytes` over `group` (sorted) after task `dep` (-1: none), one after the other
// on the TP stream: reduce-scatters, all-gathers, all-reduces (under sequence parallelism a
// reduce-scatter plus an all-gather each), all-to-alls. Returns the last task (`dep` when none).
int add_tp_collectives(Program& p, const std::vector<int>& group, const TpBytes& bytes, bool sequence_parallel, int dep,
                       const std::string& label);

}  // namespace hetsim
