// File: sim/repeat_folder.hpp
// Builds a Program::repeated_step while a program is written: a builder that emits its work in
// rounds (a pipeline's steps, round after round) hands each finished round to the folder. Once the
// rounds repeat with some period (one round, or a unit of several: an interleaved schedule's
// rounds cycle through a few shapes), the folder keeps two units and leaves out each later one
// that is the unit before it again, so identical micro-batches cost no memory however many there
// are. Exact by construction: a unit is left out only when every task of it is the corresponding
// task of the last unit kept, with dependencies one unit further on (or the same task before the
// units), which is what unrolled() writes back; anything else is kept as written.
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include "sim/program.hpp"

namespace hetsim {

class RepeatFolder {
 public:
  // `settle`: units that must repeat before two are held and later ones left out (the rounds just
  // after a pipeline fills are alike in shape but may not yet run in a steady rhythm; the simulator
  // checks the two it runs and writes every unit out when they are not periodic). `max_period`:
  // the most rounds a unit may span. A program with no period found in its first 16 max_period
  // rounds is written out whole (the search costs max_period steps a round).
  RepeatFolder(Program& program, int settle, int max_period = 64)
      : program_(program), settle_(settle < 1 ? 1 : settle), max_period_(max_period < 1 ? 1 : max_period) {}

  // Every task index the builder still holds for later tasks to depend on; the folder rewrites them
  // when it leaves a unit out. Negative entries are left alone.
  using HeldTasks = std::function<void(const std::function<void(int&)>&)>;

  // The builder finished a round: tasks [start, program.tasks.size()). Returns how many rounds it
  // left out (0, or the rounds of one unit, this one the last of them): their tasks are gone and
  // every index `held` visits refers to what is kept in their place.
  int end_round(int start, const HeldTasks& held);

  // No more rounds: writes program.repeated_step when some unit was left out. The indices the
  // builder holds stay those of the program as it is (not unrolled).
  void finish();

  // No unit has been or will be left out: everything from here on is written as it comes.
  [[nodiscard]] bool gave_up() const { return closed_ && more_ == 0; }

 private:
  // Tasks [now, now + size) are those of [was, was + size) `shift` later: same bodies, each
  // dependency from `a` on `shift` further, the same task before `a` (with was = now - size and
  // shift = size: a whole unit the image of the one before it).
  [[nodiscard]] bool round_repeats(int a, int was, int now, int size, int shift) const;
  // Leaves out the unit [start, start + size) when nothing held still points into the first held
  // unit, at `a`; true when done.
  bool leave_out(int a, int start, int size, const HeldTasks& held);

  Program& program_;
  int settle_;
  int max_period_;
  std::deque<int> starts_;     // starts of the rounds written (the last 3 max_period_) before folding
  long rounds_ = 0;            // rounds written before folding
  long retry_at_ = 0;          // round from which to try leaving a unit out again, after one
  long backoff_ = 1;           // could not be (something pointed into it): doubles each time
  std::vector<int> matched_;   // [period - 1]: round ends in a row at which the last `period`
                               // rounds repeated the `period` before them
  int period_ = 0;             // rounds a unit spans, once folding has begun
  int rounds_in_unit_ = 0;     // rounds written of the unit being written
  int first_ = -1;             // the first of the two units held, once folding has begun
  int size_ = 0;               // tasks of a unit
  long more_ = 0;
  bool closed_ = false;
  std::vector<int*> moving_;   // leave_out's scratch: the held indices it moves back a unit
};

}  // namespace hetsim
