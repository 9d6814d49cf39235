// File: sim/repeated_step.hpp
// Program::repeated_step, both ways: the program with every copy written out, and a simulation of
// the two copies extended by the ones left out.
#pragma once

#include "sim/executor.hpp"
#include "sim/program.hpp"

namespace hetsim {

// `p` with all 2 + more copies of its repeated step (and no repeated_step). Throws InputError
// (naming the global batch) past Program::max_program_tasks().
[[nodiscard]] Program unrolled(const Program& p);

// A result of simulating unrolled(p), as a result of `p`: its tasks' timings (those after the
// copies from their written-out twins), the devices' figures of the whole iteration.
[[nodiscard]] SimResult folded_result(const Program& p, const SimResult& unrolled_result);

// Extends `r`, a simulation of `p` as it is, by the copies `p` leaves out: when every task of the
// second copy ran one period (the same for all) after its twin in the first, each left-out copy
// takes a period, later tasks move by them all, and every device adds a copy's busy time per copy.
// False, `r` untouched, when the copies are not periodic (the iteration must be written out).
[[nodiscard]] bool extend_by_repeats(const Program& p, SimResult& r);

}  // namespace hetsim
