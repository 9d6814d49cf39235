// File: sim/repeated_step.hpp
// Program::repeated_step, both ways: the program with every copy written out, and a simulation of
// the two copies extended by the ones left out.
#pragma once

#include <optional>

#include "sim/executor.hpp"
#include "sim/program.hpp"

namespace hetsim {

// `p` with `copies` more copies of its repeated step written out (all 2 + more with -1, and then
// no repeated_step; otherwise the last two written are its repeated step, with `copies` fewer
// left out). Throws InputError (naming the global batch) past Program::max_program_tasks().
[[nodiscard]] Program unrolled(const Program& p, long copies = -1);

// A result of simulating unrolled(p, copies) (extended by the copies it still leaves out), as a
// result of `p`: its tasks' timings (those after the copies from their written-out twins), the
// devices' figures of the whole iteration.
[[nodiscard]] SimResult folded_result(const Program& p, const SimResult& unrolled_result, long copies = -1);

// The period of `r`, a simulation of `p` as it is: every task of the second copy started and ended
// that long after its twin in the first; nullopt where not.
[[nodiscard]] std::optional<double> copy_period(const Program& p, const SimResult& r);

// In `r`, a simulation of `p` as it is, every task before the copies ended by the time the second
// began, and every task after them follows the second copy (a dependency, or its stream's order):
// the copies are then all that runs between the work before and after them, and each copy left out
// moves what comes after by one period (given copy_period). Where not, next_copy_agrees decides.
[[nodiscard]] bool copies_cut_the_iteration(const Program& p, const SimResult& r);

// `next`, a simulation of unrolled(p, 1), is `r` with one more copy: the same tasks up to the second
// copy, the third one period after the second and every later task one period later. What
// extend_by_repeats assumes of every copy it adds; it does not hold where work after the copies
// does not wait for them (a pipeline's other stages draining while one stage repeats its passes).
[[nodiscard]] bool next_copy_agrees(const Program& p, const SimResult& r, const SimResult& next);

// Extends `r`, a simulation of `p` as it is, by the copies `p` leaves out: when every task of the
// second copy ran one period (the same for all) after its twin in the first, each left-out copy
// takes a period, later tasks move by them all, and every device adds a copy's busy time per copy.
// False, `r` untouched, when the copies are not periodic (the iteration must be written out).
[[nodiscard]] bool extend_by_repeats(const Program& p, SimResult& r);

}  // namespace hetsim
