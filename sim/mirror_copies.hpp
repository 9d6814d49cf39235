// File: sim/mirror_copies.hpp
// Tasks written once for several alike data-parallel pipelines (ComputeTask/SendTask::copies, a
// collective's mirror groups: planner/hybrid/pipeline_mirrors.hpp) written out again, each copy a
// task of its own, for when the copies did not keep one pace in a simulation (links shared
// unevenly, a collective beside one copy's kernel): simulate() then runs the written-out program
// and reads its times back onto the mirrored one.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/program.hpp"
#include "sim/sim_result.hpp"

namespace hetsim {

struct WrittenOut {
  Program program;
  std::vector<size_t> first;  // per task of the mirrored program: its first copy in `program`
  std::vector<size_t> count;  // ... and how many copies it has
};

// Whether some task of `p` stands for several copies.
[[nodiscard]] bool has_copies(const Program& p);

// Every copy a task of its own, in place (each stream's order kept): copy k of a task depends on
// copy k of each dependency with as many copies, on every copy of one with other counts that
// shares a device with it (all of them where none does: a collective over every pipeline waits
// for each one's copy), and on a dependency of one copy as before. Every copy keeps the label. A
// repeated step covers the same tasks' copies.
[[nodiscard]] WrittenOut written_out(const Program& p);

// `r`, a simulation of w.program, read for the mirrored program `p`: each task from its first
// copy's start to its last copy's end; devices, peaks, flows and the critical path as simulated.
[[nodiscard]] SimResult onto_copies(const Program& p, const WrittenOut& w, SimResult r);

}  // namespace hetsim
