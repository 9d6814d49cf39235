// File: sim/device_timing.cpp
#include "sim/device_timing.hpp"

#include <algorithm>
#include <variant>

namespace hetsim {

std::vector<StreamIntervals> stream_intervals(const Program& program, const std::vector<TaskTiming>& timing, size_t begin,
                                              size_t end, double shift_s) {
  std::vector<StreamIntervals> out(program.devices.size());
  for (size_t i = begin; i < end; ++i) {
    const TaskTiming t{timing[i].start_s + shift_s, timing[i].end_s + shift_s};
    if (const auto* c = std::get_if<ComputeTask>(&program.tasks[i].body)) {
      for (size_t k = 0; k <= c->mirrors.size(); ++k) {
        StreamIntervals& s = out[k == 0 ? c->device : c->mirrors[k - 1]];
        s.compute_s += t.end_s - t.start_s;
        s.compute.push_back(t);
      }
    } else if (const auto* g = std::get_if<CollectiveTask>(&program.tasks[i].body)) {
      g->for_each_member([&](int d) { out[d].comm.push_back(t); });
    } else if (const auto* s = std::get_if<SendTask>(&program.tasks[i].body)) {
      for (const auto& [src, dst] : s->transfers()) out[src].comm.push_back(t);
    }
  }
  return out;
}

double union_length(std::vector<TaskTiming> iv) {
  std::sort(iv.begin(), iv.end(), [](const TaskTiming& a, const TaskTiming& b) { return a.start_s < b.start_s; });
  double total = 0, cur_s = 0, cur_e = -1;
  for (const TaskTiming& x : iv) {
    if (x.start_s > cur_e) {
      if (cur_e > cur_s) total += cur_e - cur_s;
      cur_s = x.start_s;
      cur_e = x.end_s;
    } else {
      cur_e = std::max(cur_e, x.end_s);
    }
  }
  if (cur_e > cur_s) total += cur_e - cur_s;
  return total;
}

std::vector<DeviceTiming> device_timings(const std::vector<StreamIntervals>& streams) {
  std::vector<DeviceTiming> out(streams.size());
  for (size_t d = 0; d < streams.size(); ++d) {
    out[d].compute_s = streams[d].compute_s;
    out[d].comm_s = union_length(streams[d].comm);  // streams overlap: time any of them is busy
    std::vector<TaskTiming> busy = streams[d].compute;
    busy.insert(busy.end(), streams[d].comm.begin(), streams[d].comm.end());
    out[d].busy_s = union_length(std::move(busy));
  }
  return out;
}

}  // namespace hetsim
