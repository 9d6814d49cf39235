// File: sim/repeated_step.cpp
#include "sim/repeated_step.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/critical_path.hpp"
#include "sim/device_timing.hpp"

namespace hetsim {

Program unrolled(const Program& p, long copies) {
  const RepeatedStep rs = *p.repeated_step;
  const long written = copies < 0 ? rs.more : std::min(copies, rs.more);
  const size_t size = static_cast<size_t>(rs.size);
  const size_t a = static_cast<size_t>(rs.first), b = a + size, c = b + size;
  Program::check_program_size(static_cast<double>(p.tasks.size()) + static_cast<double>(written) * static_cast<double>(size));
  const size_t extra = static_cast<size_t>(written) * size;
  Program out = p;
  out.repeated_step.reset();
  out.tasks.resize(c);
  out.tasks.reserve(p.tasks.size() + extra);
  // Copy k (k = 2 … written + 1) is the second one again, its dependencies one copy further on.
  auto in_copy = [&](int dep, size_t copy) -> int {  // a dependency of the second copy, seen from `copy`
    const size_t d = static_cast<size_t>(dep);
    if (d >= b && d < c) return static_cast<int>(a + copy * size + (d - b));
    if (d >= a && d < b) return static_cast<int>(a + (copy - 1) * size + (d - a));
    return dep;
  };
  for (size_t copy = 2; copy < 2 + static_cast<size_t>(written); ++copy) {
    for (size_t i = b; i < c; ++i) {
      Task t = p.tasks[i];
      for (int& d : t.deps) d = in_copy(d, copy);
      out.tasks.push_back(std::move(t));
    }
  }
  const size_t last = 1 + static_cast<size_t>(written);
  for (size_t i = c; i < p.tasks.size(); ++i) {
    Task t = p.tasks[i];
    for (int& d : t.deps) {
      if (static_cast<size_t>(d) >= c) d += static_cast<int>(extra);
      else d = in_copy(d, last);
    }
    out.tasks.push_back(std::move(t));
  }
  // The last two copies written are the copies of the same kind (their dependencies follow the
  // same rule), with the rest still left out.
  if (written < rs.more) out.repeated_step = RepeatedStep{rs.first + static_cast<int>(extra), rs.size, rs.more - written};
  return out;
}

SimResult folded_result(const Program& p, const Program& simulated, const SimResult& u, long copies) {
  const RepeatedStep rs = *p.repeated_step;
  const long written = copies < 0 ? rs.more : std::min(copies, rs.more);
  const size_t c = static_cast<size_t>(rs.first) + 2 * static_cast<size_t>(rs.size);
  const size_t extra = static_cast<size_t>(written) * static_cast<size_t>(rs.size);
  SimResult r = u;
  r.tasks.assign(u.tasks.begin(), u.tasks.begin() + static_cast<std::ptrdiff_t>(c));
  r.tasks.insert(r.tasks.end(), u.tasks.begin() + static_cast<std::ptrdiff_t>(c + extra), u.tasks.end());
  // The last copy ran u.repeat_gap_s after the last one `u` holds (0 when every copy is written).
  const size_t second = static_cast<size_t>(rs.first + rs.size);
  r.repeat_gap_s = rs.size > 0 ? u.tasks[second + extra].end_s + u.repeat_gap_s - u.tasks[second].end_s : 0;
  r.critical_path_by_kind = critical_path(simulated, u).by_kind;
  return r;
}

namespace {

// `x` started and ended `shift` after `y`, within `tolerance`.
bool same_shifted(const TaskTiming& x, const TaskTiming& y, double shift, double tolerance) {
  return std::abs(x.start_s - (y.start_s + shift)) <= tolerance && std::abs(x.end_s - (y.end_s + shift)) <= tolerance;
}

// Task i of the second copy (from b) did not run `period` after its twin in the first (from a).
bool off_period(const SimResult& r, size_t a, size_t b, size_t i, double period, double tolerance) {
  return std::abs(r.tasks[b + i].start_s - r.tasks[a + i].start_s - period) > tolerance ||
         std::abs(r.tasks[b + i].end_s - r.tasks[a + i].end_s - period) > tolerance;
}

// Moves the tasks after the copies of `r` (and their flows) `gap` later: the copies left out.
void shift_after_copies(const Program& p, SimResult& r, double gap) {
  const RepeatedStep rs = *p.repeated_step;
  const size_t size = static_cast<size_t>(rs.size);
  const size_t b = static_cast<size_t>(rs.first) + size, c = b + size;
  r.repeat_gap_s = gap;
  double later_start = r.iteration_time_s;
  for (size_t i = c; i < r.tasks.size(); ++i) later_start = std::min(later_start, r.tasks[i].start_s);
  double end = 0;
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    if (i >= c) {
      r.tasks[i].start_s += r.repeat_gap_s;
      r.tasks[i].end_s += r.repeat_gap_s;
    }
    end = std::max(end, r.tasks[i].end_s + (i >= b && i < c ? r.repeat_gap_s : 0));
  }
  r.iteration_time_s = end;
  for (FlowRecord& f : r.flows) {  // flows of the tasks after the copies
    if (f.start_s >= later_start && c < r.tasks.size()) {
      f.start_s += r.repeat_gap_s;
      f.end_s += r.repeat_gap_s;
    }
  }
}

}  // namespace

std::optional<double> copy_period(const Program& p, const SimResult& r) {
  const RepeatedStep rs = *p.repeated_step;
  const size_t size = static_cast<size_t>(rs.size);
  const size_t a = static_cast<size_t>(rs.first), b = a + size, c = b + size;
  if (size == 0) return 0.0;
  const double period = r.tasks[b].end_s - r.tasks[a].end_s;
  // Timers within SimGrid's precision end together; beyond that the copies differ.
  const double tolerance = 1e-9 + 1e-9 * r.tasks[c - 1].end_s;
  for (size_t i = 0; i < size; ++i) {
    if (off_period(r, a, b, i, period, tolerance)) return std::nullopt;
  }
  return period;
}

bool copies_cut_the_iteration(const Program& p, const SimResult& r) {
  const RepeatedStep rs = *p.repeated_step;
  const size_t size = static_cast<size_t>(rs.size);
  const size_t a = static_cast<size_t>(rs.first), b = a + size, c = b + size;
  double second_start = r.iteration_time_s;
  for (size_t i = b; i < c; ++i) second_start = std::min(second_start, r.tasks[i].start_s);
  const double tolerance = 1e-9 + 1e-9 * r.iteration_time_s;
  for (size_t i = 0; i < a; ++i) {
    if (r.tasks[i].end_s > second_start + tolerance) return false;
  }
  // A task after the copies follows the second copy through a dependency or its stream's order.
  std::vector<char> after(p.tasks.size(), 0), stream_after(p.devices.size() * kStreamsPerDevice, 0);
  for (size_t i = b; i < c; ++i) {
    after[i] = 1;
    for_each_stream(p.tasks[i], [&](size_t k) { stream_after[k] = 1; });
  }
  for (size_t i = c; i < p.tasks.size(); ++i) {
    bool follows = false;
    for (int d : p.tasks[i].deps) follows = follows || after[static_cast<size_t>(d)] != 0;
    for_each_stream(p.tasks[i], [&](size_t k) { follows = follows || stream_after[k] != 0; });
    if (!follows) return false;
    after[i] = 1;
    for_each_stream(p.tasks[i], [&](size_t k) { stream_after[k] = 1; });
  }
  return true;
}

bool next_copy_agrees(const Program& p, const SimResult& r, const SimResult& next) {
  const RepeatedStep rs = *p.repeated_step;
  const size_t size = static_cast<size_t>(rs.size);
  const size_t b = static_cast<size_t>(rs.first) + size, c = b + size;
  const std::optional<double> period = copy_period(p, r);
  if (!period || next.tasks.size() != r.tasks.size() + size) return false;
  const double tolerance = 1e-9 + 1e-9 * next.iteration_time_s;
  auto same = [&](const TaskTiming& x, const TaskTiming& y, double shift) { return same_shifted(x, y, shift, tolerance); };
  for (size_t i = 0; i < c; ++i) {
    if (!same(next.tasks[i], r.tasks[i], 0)) return false;
  }
  for (size_t i = 0; i < size; ++i) {
    if (!same(next.tasks[c + i], r.tasks[b + i], *period)) return false;
  }
  for (size_t i = c; i < r.tasks.size(); ++i) {
    if (!same(next.tasks[i + size], r.tasks[i], *period)) return false;
  }
  return true;
}

namespace {

// Each left-out copy takes `period`: what follows moves by them all, and every device adds what the
// second copy's intervals add once a copy one period later joins them (a copy overlaps only its
// neighbours: streams run in order).
void add_copies(const Program& p, SimResult& r, double period) {
  const RepeatedStep rs = *p.repeated_step;
  const size_t size = static_cast<size_t>(rs.size);
  const size_t b = static_cast<size_t>(rs.first) + size, c = b + size;
  const double more = static_cast<double>(rs.more);
  const std::vector<StreamIntervals> second = stream_intervals(p, r.tasks, b, c);
  const std::vector<StreamIntervals> third = stream_intervals(p, r.tasks, b, c, period);
  for (size_t d = 0; d < r.devices.size(); ++d) {
    StreamIntervals both = second[d];
    both.compute.insert(both.compute.end(), third[d].compute.begin(), third[d].compute.end());
    both.comm.insert(both.comm.end(), third[d].comm.begin(), third[d].comm.end());
    const DeviceTiming one = device_timings({second[d]})[0];
    const DeviceTiming two = device_timings({both})[0];
    r.devices[d].compute_s += more * second[d].compute_s;
    r.devices[d].comm_s += more * (two.comm_s - one.comm_s);
    r.devices[d].busy_s += more * (two.busy_s - one.busy_s);
  }
  shift_after_copies(p, r, more * period);
}

// The last end of a copy's tasks [from, to).
double last_end(const SimResult& r, size_t from, size_t to) {
  double end = 0;
  for (size_t i = from; i < to; ++i) end = std::max(end, r.tasks[i].end_s);
  return end;
}

}  // namespace

bool extend_by_repeats(const Program& p, SimResult& r) {
  const RepeatedStep rs = *p.repeated_step;
  if (rs.size == 0 || rs.more == 0) return true;
  const std::optional<double> period = copy_period(p, r);
  if (!period) return false;
  add_copies(p, r, *period);
  return true;
}

bool extrapolate_repeats(const Program& p, SimResult& r) {
  const RepeatedStep rs = *p.repeated_step;
  const size_t size = static_cast<size_t>(rs.size);
  const size_t a = static_cast<size_t>(rs.first), b = a + size, c = b + size;
  // Worth it only where the copies left out are more work than the program simulated.
  if (size == 0 || rs.more == 0 || static_cast<double>(rs.more) * rs.size <= static_cast<double>(p.tasks.size())) return false;
  if (!copies_cut_the_iteration(p, r)) return false;
  const double period = last_end(r, b, c) - last_end(r, a, b);
  if (!(period > 0)) return false;
  double jitter = 0;
  for (size_t i = 0; i < size; ++i) {
    jitter = std::max({jitter, std::abs(r.tasks[b + i].start_s - r.tasks[a + i].start_s - period),
                       std::abs(r.tasks[b + i].end_s - r.tasks[a + i].end_s - period)});
  }
  const double more = static_cast<double>(rs.more);
  const double bound = more * jitter;
  if (bound > kMostExtrapolated * (r.iteration_time_s + more * period)) return false;
  add_copies(p, r, period);
  r.extrapolated_copies = rs.more;
  r.extrapolation_bound_s = bound;
  return true;
}

SimResult simulate_folded(const Program& program, const std::function<SimResult(const Program&)>& run) {
  // What the tries have cost, in tasks simulated: they stop before passing half the full run's.
  double spent = 0;
  const auto counted = [&](const Program& p) {
    spent += static_cast<double>(p.tasks.size());
    return run(p);
  };
  // Two copies simulated, periodic, and all that runs between the work before and after them, or
  // else one more copy written out moves everything after them by one period: then every copy left
  // out does (the same state, a period later). Or the last copy differs from the one before only
  // where it meets the work after it (a copy inside meets the next copy there instead): then one
  // more copy written out must move the last copy and all after it by one period, the copy before
  // it now periodic.
  auto extended = [&](const Program& p, SimResult& r) {
    const bool periodic = copy_period(p, r).has_value();
    if (periodic && copies_cut_the_iteration(p, r)) return extend_by_repeats(p, r);
    if (!periodic && !deviations_meet_what_follows(p, r)) return false;
    const SimResult next = counted(unrolled(p, 1));
    if (periodic && next_copy_agrees(p, r, next)) return extend_by_repeats(p, r);
    const std::optional<double> period = boundary_copy_period(p, r, next);
    if (period) extend_by_next(p, r, next, *period);
    return period.has_value();
  };
  SimResult r = counted(program);
  if (extended(program, r)) return r;
  // Not periodic yet: the copies may settle into their rhythm a few copies on (a pipeline's
  // steady state after its warm-up, about as many copies as stages). Write out 2, 4, 8, ... of
  // them, up to a quarter of the rest, and take the last two. A try is made only while everything
  // tried so far and the try itself stay within half the full run's tasks (where the copies never
  // settle, as the pipelines of MoE plans whose flows drift against each other, the tries would
  // otherwise cost nearly a full run before it), so a run that folds costs a few copies and one that
  // does not about one and a half runs at most (a try that extends by one copy more may pass it by that).
  const RepeatedStep& rs = *program.repeated_step;
  const double size = static_cast<double>(rs.size);
  const double half_full = 0.5 * (static_cast<double>(program.tasks.size()) + static_cast<double>(rs.more) * size);  // unrolled(program)
  const double budget = static_cast<double>(Program::max_program_tasks()) / 8;
  for (long copies = 2; copies <= std::max(2L, rs.more / 4); copies *= 2) {
    if (copies >= rs.more) break;  // as many as the full run
    const double tasks = static_cast<double>(program.tasks.size()) + static_cast<double>(copies) * size;
    if (tasks + size > budget || spent + tasks > half_full) break;
    const Program later = unrolled(program, copies);
    SimResult u = counted(later);
    if (extended(later, u)) return folded_result(program, later, u, copies);
  }
  // Never exactly periodic (flows that share links drift against each other by a little each
  // copy): the copies left out at the second one's period, with a bound, where that bound is small.
  if (extrapolate_repeats(program, r)) return r;
  const Program all = unrolled(program);
  return folded_result(program, all, run(all));
}

bool deviations_meet_what_follows(const Program& p, const SimResult& r) {
  const RepeatedStep rs = *p.repeated_step;
  const size_t size = static_cast<size_t>(rs.size);
  const size_t a = static_cast<size_t>(rs.first), b = a + size, c = b + size;
  if (size == 0 || c >= r.tasks.size()) return false;
  double later_start = r.iteration_time_s;
  for (size_t i = c; i < r.tasks.size(); ++i) later_start = std::min(later_start, r.tasks[i].start_s);
  const double period = r.tasks[b].end_s - r.tasks[a].end_s;
  const double tolerance = 1e-9 + 1e-9 * r.iteration_time_s;
  for (size_t i = 0; i < size; ++i) {
    if (off_period(r, a, b, i, period, tolerance) && r.tasks[b + i].end_s <= later_start + tolerance) return false;
  }
  return true;
}

std::optional<double> boundary_copy_period(const Program& p, const SimResult& r, const SimResult& next) {
  const RepeatedStep rs = *p.repeated_step;
  const size_t size = static_cast<size_t>(rs.size);
  const size_t a = static_cast<size_t>(rs.first), b = a + size, c = b + size;
  if (size == 0 || next.tasks.size() != r.tasks.size() + size) return std::nullopt;
  const double period = next.tasks[b].end_s - next.tasks[a].end_s;
  const double tolerance = 1e-9 + 1e-9 * next.iteration_time_s;
  auto same = [&](const TaskTiming& x, const TaskTiming& y, double shift) { return same_shifted(x, y, shift, tolerance); };
  for (size_t i = 0; i < b; ++i) {
    if (!same(next.tasks[i], r.tasks[i], 0)) return std::nullopt;  // up to the first copy: unchanged
  }
  for (size_t i = 0; i < size; ++i) {
    if (!same(next.tasks[b + i], next.tasks[a + i], period)) return std::nullopt;  // the second copy, now inside
    if (!same(next.tasks[c + i], r.tasks[b + i], period)) return std::nullopt;     // the last copy, a period on
  }
  for (size_t i = c; i < r.tasks.size(); ++i) {
    if (!same(next.tasks[i + size], r.tasks[i], period)) return std::nullopt;  // what follows, a period on
  }
  return period;
}

void extend_by_next(const Program& p, SimResult& r, const SimResult& next, double period) {
  const double more = static_cast<double>(p.repeated_step->more);
  // Each left-out copy adds what the copy `next` has more adds: every copy inside runs alike.
  for (size_t d = 0; d < r.devices.size(); ++d) {
    r.devices[d].compute_s += more * (next.devices[d].compute_s - r.devices[d].compute_s);
    r.devices[d].comm_s += more * (next.devices[d].comm_s - r.devices[d].comm_s);
    r.devices[d].busy_s += more * (next.devices[d].busy_s - r.devices[d].busy_s);
  }
  shift_after_copies(p, r, more * period);
}

}  // namespace hetsim
