// File: sim/repeated_step.hpp
// Program::repeated_step, both ways: the program with every copy written out, and a simulation of
// the two copies extended by the ones left out.
#pragma once

#include <functional>
#include <optional>

#include "sim/program.hpp"
#include "sim/sim_result.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// A simulation (by `run`) of `program`, whose repeated step has copies left out, extended by them:
// the two copies as written where they repeat, else more written out until they do, else
// extrapolated where they nearly repeat (extrapolate_repeats), else all written out.
[[nodiscard]] SimResult simulate_folded(const Program& program, const std::function<SimResult(const Program&)>& run);

// `p` with `copies` more copies of its repeated step written out (all 2 + more with -1, and then
// no repeated_step; otherwise the last two written are its repeated step, with `copies` fewer
// left out). Throws InputError (naming the global batch) past Program::max_program_tasks().
[[nodiscard]] Program unrolled(const Program& p, long copies = -1);

// A result of simulating `simulated` = unrolled(p, copies) (extended by the copies it still leaves
// out), as a result of `p`: its tasks' timings (those after the copies from their written-out
// twins), the devices' figures of the whole iteration, and the critical path walked over
// `simulated` (SimResult::critical_path_by_kind).
[[nodiscard]] SimResult folded_result(const Program& p, const Program& simulated, const SimResult& unrolled_result,
                                      long copies = -1);

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

// The largest share of the iteration time an extrapolation's bound may reach (0.5 %).
inline constexpr double kMostExtrapolated = 0.005;

// Extends `r` by the copies `p` leaves out when the two simulated ones are nearly periodic but not
// exactly (flows sharing links drift against each other a little each copy, so no later copy
// repeats either): each left-out copy takes the second's period (from the last end of the first to
// the last end of the second), and the iteration time holds within more x the largest deviation of
// a task of the second copy from its twin one period on (an estimate: each copy left out is assumed
// to deviate no more than the two simulated did), which must stay under kMostExtrapolated of it.
// Only where the copies cut the iteration and leave out more tasks than `p` has. Sets
// r.extrapolated_copies and r.extrapolation_bound_s; false, `r` untouched, where it does not apply.
[[nodiscard]] bool extrapolate_repeats(const Program& p, SimResult& r);

// Copies that are not periodic only where the last one meets the work after it: every task of the
// second copy that did not run one period after its twin in the first ended after work following
// the copies began (it shared links or streams with it, where a copy inside shares them with the
// next copy). Then boundary_copy_period decides.
[[nodiscard]] bool deviations_meet_what_follows(const Program& p, const SimResult& r);

// `next`, a simulation of unrolled(p, 1), is `r` with one more copy inside: the same tasks up to
// the first copy, the second copy now one period after the first, the new last copy and every later
// task one period after `r`'s last copy and later tasks. The period, or nullopt where not.
[[nodiscard]] std::optional<double> boundary_copy_period(const Program& p, const SimResult& r, const SimResult& next);

// Extends `r` by the copies `p` leaves out, each taking `period` (boundary_copy_period) and adding
// to every device what `next`'s extra copy adds.
void extend_by_next(const Program& p, SimResult& r, const SimResult& next, double period);

}  // namespace hetsim
