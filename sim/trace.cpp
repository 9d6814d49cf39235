// File: sim/trace.cpp
#include "sim/trace.hpp"

namespace hetsim {
namespace {

constexpr int kComputeTrack = 0;
constexpr int kCommTrack = 1;

nlohmann::json slice(const std::string& name, const std::string& cat, int pid, int tid, const TaskTiming& t) {
  return {{"name", name}, {"cat", cat},    {"ph", "X"},
          {"pid", pid},   {"tid", tid},    {"ts", t.start_s * 1e6},
          {"dur", (t.end_s - t.start_s) * 1e6}};
}

}  // namespace

nlohmann::json chrome_trace(const Program& program, const Cluster& cluster, const SimResult& result) {
  nlohmann::json events = nlohmann::json::array();
  for (int node = 0; node < cluster.node_count(); ++node) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", node},
                      {"args", {{"name", "node" + std::to_string(node) + " (" + cluster.node_types[cluster.node_type_of[node]].name + ")"}}}});
  }
  auto tid = [&](int gpu, int track) { return 2 * cluster.gpus[gpu].local + track; };
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    const int pid = cluster.gpus[g].node;
    const std::string base = "gpu" + std::to_string(g) + " " + cluster.device_of(g).name;
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid(g, kComputeTrack)}, {"args", {{"name", base + " compute"}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid(g, kCommTrack)}, {"args", {{"name", base + " comm"}}}});
  }
  for (size_t i = 0; i < program.tasks.size(); ++i) {
    const Task& task = program.tasks[i];
    const TaskTiming& t = result.tasks[i];
    if (const auto* c = std::get_if<ComputeTask>(&task.body)) {
      events.push_back(slice(task.label, "compute", cluster.gpus[c->device].node, tid(c->device, kComputeTrack), t));
    } else if (const auto* col = std::get_if<CollectiveTask>(&task.body)) {
      for (int d : col->group) {
        nlohmann::json e = slice(task.label, std::string(collective_name(col->op)), cluster.gpus[d].node, tid(d, kCommTrack), t);
        e["args"] = {{"size_bytes", col->size_bytes}, {"group_size", col->group.size()}};
        events.push_back(std::move(e));
      }
    } else if (const auto* s = std::get_if<SendTask>(&task.body)) {
      nlohmann::json e = slice(task.label, "send", cluster.gpus[s->src].node, tid(s->src, kCommTrack), t);
      e["args"] = {{"size_bytes", s->size_bytes}, {"dst", s->dst}};
      events.push_back(std::move(e));
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace hetsim
