// File: sim/trace.cpp
#include "sim/trace.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "base/units.hpp"
#include "topologies/fabric.hpp"

namespace hetsim {
namespace {

constexpr int kComputeTrack = 0;
constexpr int kTracksPerGpu = 1 + kCommStreams;
int comm_track(CommStream s) { return 1 + static_cast<int>(s); }

nlohmann::json slice(const std::string& name, const std::string& cat, int pid, int tid, const TaskTiming& t) {
  return {{"name", name}, {"cat", cat},    {"ph", "X"},
          {"pid", pid},   {"tid", tid},    {"ts", t.start_s * 1e6},
          {"dur", (t.end_s - t.start_s) * 1e6}};
}

// Counter tracks of link use, rebuilt from the recorded flows: a flow adds bytes / duration to
// every shared link of its route from its start to its end. That is each flow's mean rate over its
// life: a flow that shared the link and then had it alone adds more than its share while it
// shared, so the sum is capped at the link's achievable rate (the simulation never exceeds it).
// A sample is drawn where the bandwidth in use changes (flows ending as others start at the same
// rate leave it as it was).
template <class Emit>
void add_link_counters(Emit&& emit, const Cluster& cluster, const SimResult& result) {
  const Fabric fabric(cluster);
  std::map<int, std::vector<std::pair<double, double>>> changes;  // link -> (time, delta B/s)
  Route route;
  for (const FlowRecord& f : result.flows) {
    const double duration = f.end_s - f.start_s;
    if (duration <= 0 || f.bytes <= 0) continue;
    fabric.route(f.src_endpoint, f.dst_endpoint, route);
    for (int l : route.links) {
      if (!fabric.links()[l].shared) continue;
      changes[l].push_back({f.start_s, f.bytes / duration});
      changes[l].push_back({f.end_s, -f.bytes / duration});
    }
  }
  const int pid = cluster.node_count();
  emit({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", "network (link use, GB/s)"}}}});
  for (auto& [link, ch] : changes) {
    std::sort(ch.begin(), ch.end());
    const FabricLink& fl = fabric.links()[link];
    const std::string name = fl.name + " (" + std::string(link_kind_name(fl.kind)) + ", " +
                             std::to_string(static_cast<long>(fl.bandwidth_Bps / 1e9)) + " GB/s)";
    double in_use = 0, drawn = -1;
    for (size_t i = 0; i < ch.size(); ++i) {
      in_use += ch[i].second;
      if (i + 1 < ch.size() && ch[i + 1].first == ch[i].first) continue;  // one sample per instant
      const double gbps = std::clamp(in_use, 0.0, fl.bandwidth_Bps) / 1e9;
      if (gbps == drawn) continue;
      drawn = gbps;
      emit({{"name", name}, {"ph", "C"}, {"pid", pid}, {"ts", ch[i].first * 1e6}, {"args", {{"GB/s", gbps}}}});
    }
  }
}

// Every event of the trace, in order, to emit(const nlohmann::json&).
template <class Emit>
void trace_events(Emit&& emit, const Program& program, const Cluster& cluster, const SimResult& result) {
  for (int node = 0; node < cluster.node_count(); ++node) {
    emit({{"name", "process_name"}, {"ph", "M"}, {"pid", node},
                      {"args", {{"name", "node" + std::to_string(node) + " (" + cluster.node_types[cluster.node_type_of[node]].name + ")"}}}});
  }
  auto tid = [&](int gpu, int track) { return kTracksPerGpu * cluster.gpus[gpu].local + track; };
  std::vector<std::array<bool, kCommStreams>> used(cluster.gpu_count());
  for (const Task& task : program.tasks) {
    if (const auto* col = std::get_if<CollectiveTask>(&task.body)) {
      col->for_each_member([&](int d) { used[d][static_cast<int>(col->stream)] = true; });
    } else if (const auto* s = std::get_if<SendTask>(&task.body)) {
      for (const auto& [src, dst] : s->transfers()) used[src][static_cast<int>(s->stream)] = true;
    }
  }
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    const int pid = cluster.gpus[g].node;
    const std::string base = "gpu" + std::to_string(g) + " " + cluster.device_of(g).name;
    emit({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid(g, kComputeTrack)}, {"args", {{"name", base + " compute"}}}});
    for (int k = 0; k < kCommStreams; ++k) {
      const CommStream stream = static_cast<CommStream>(k);
      if (!used[g][k] && stream != CommStream::kData) continue;  // the data stream is always shown
      emit({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid(g, comm_track(stream))},
                        {"args", {{"name", base + " " + std::string(comm_stream_name(stream))}}}});
    }
  }
  for (size_t i = 0; i < program.tasks.size(); ++i) {
    const Task& task = program.tasks[i];
    const TaskTiming& t = result.tasks[i];
    if (const auto* c = std::get_if<ComputeTask>(&task.body)) {
      emit(slice(task.label, "compute", cluster.gpus[c->device].node, tid(c->device, kComputeTrack), t));
      for (int m : c->mirrors) emit(slice(task.label, "compute", cluster.gpus[m].node, tid(m, kComputeTrack), t));
    } else if (const auto* col = std::get_if<CollectiveTask>(&task.body)) {
      col->for_each_member([&](int d) {
        nlohmann::json e = slice(task.label, std::string(collective_name(col->op)), cluster.gpus[d].node, tid(d, comm_track(col->stream)), t);
        e["args"] = {{"size_bytes", col->size_bytes}, {"group_size", col->group.size()}};
        emit(std::move(e));
      });
    } else if (const auto* s = std::get_if<SendTask>(&task.body)) {
      for (const auto& [src, dst] : s->transfers()) {
        nlohmann::json e = slice(task.label, "send", cluster.gpus[src].node, tid(src, comm_track(s->stream)), t);
        e["args"] = {{"size_bytes", s->size_bytes}, {"dst", dst}};
        emit(std::move(e));
      }
    }
  }
  if (program.repeated_step && result.repeat_gap_s > 0) {
    // The copies of the repeated step the program leaves out: the gap before the tasks after them.
    const RepeatedStep& rs = *program.repeated_step;
    double at = 0;
    for (int i = rs.first + rs.size; i < rs.first + 2 * rs.size; ++i) at = std::max(at, result.tasks[i].end_s);
    const std::string what = result.extrapolated_copies > 0
                                 ? " more steps, nearly identical, extrapolated (± " + format_duration(result.extrapolation_bound_s) + ") and not drawn ("
                                 : " more identical steps, not drawn (";
    const std::string name = std::to_string(rs.more) + what + format_duration(result.repeat_gap_s) + ")";
    emit({{"name", name}, {"cat", "repeated"}, {"ph", "i"}, {"s", "g"}, {"pid", 0}, {"tid", 0}, {"ts", at * 1e6}});
    // And on the compute track of every GPU the step computes on, one slice over the gap, so that
    // the steps left out do not read as an idle GPU.
    std::vector<bool> computes(cluster.gpu_count(), false);
    for (int i = rs.first; i < rs.first + rs.size; ++i) {
      if (const auto* c = std::get_if<ComputeTask>(&program.tasks[i].body)) {
        computes[c->device] = true;
        for (int m : c->mirrors) computes[m] = true;
      }
    }
    const TaskTiming gap{at, at + result.repeat_gap_s};
    for (int g = 0; g < cluster.gpu_count(); ++g) {
      if (computes[g]) emit(slice(name, "repeated", cluster.gpus[g].node, tid(g, kComputeTrack), gap));
    }
  }
  if (!result.flows.empty()) add_link_counters(emit, cluster, result);
}

}  // namespace

nlohmann::json chrome_trace(const Program& program, const Cluster& cluster, const SimResult& result) {
  nlohmann::json events = nlohmann::json::array();
  trace_events([&](nlohmann::json e) { events.push_back(std::move(e)); }, program, cluster, result);
  return {{"displayTimeUnit", "ms"}, {"traceEvents", std::move(events)}};
}

void write_chrome_trace(std::ostream& out, const Program& program, const Cluster& cluster, const SimResult& result) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  bool first = true;
  trace_events(
      [&](const nlohmann::json& e) {
        out << (first ? "\n" : ",\n") << e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        first = false;
      },
      program, cluster, result);
  out << "\n]}\n";
}

}  // namespace hetsim
