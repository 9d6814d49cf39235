// File: sim/executor.cpp
#include "sim/executor.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <cmath>
#include <map>
#include <tuple>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "base/input_error.hpp"
#include "sim/isolated_run.hpp"
#include "sim/platform.hpp"

namespace hetsim {

namespace sg4 = simgrid::s4u;

namespace {

// State shared by all stream actors of one simulation. Actors run one at a time (SimGrid is
// cooperative), so plain fields are safe.
class Run {
 public:
  Run(const Program& p, const Cluster& cluster, const Platform& platform, const SimOptions& o)
      : prog_(p), cluster_(cluster), platform_(platform), net_(platform, o.record_flows ? &flows_ : nullptr), opts_(o),
        timing_(p.tasks.size()), done_(p.tasks.size(), 0), waiters_(p.tasks.size()), arrived_(p.tasks.size(), 0),
        mem_now_(p.devices.size(), 0), mem_peak_(p.devices.size(), 0) {}

  // Runs one stream's tasks in order. `members` is how many devices' streams this actor stands
  // for: devices whose streams hold exactly the same tasks (every rank of a group whose streams
  // carry only that group's collectives) would reach every task at the same moment, so one actor
  // arrives for all of them.
  void stream(const std::vector<int>& tasks, int device, int members) {
    for (int t : tasks) {
      for (int d : prog_.tasks[t].deps) wait_for(d);
      std::visit([&](const auto& body) { this->execute(t, device, members, body); }, prog_.tasks[t].body);
    }
  }

  std::vector<TaskTiming>& timing() { return timing_; }
  const std::vector<FlowRecord>& flows() const { return flows_; }
  uint64_t activities() const { return activities_; }
  double peak_memory(int device) const { return mem_peak_[device]; }
  // Tasks that never completed: after engine.run(), a deadlock (SimGrid stops when no actor can move).
  [[nodiscard]] size_t unfinished() const { return static_cast<size_t>(std::count(done_.begin(), done_.end(), 0)); }

 private:
  void wait_for(int task) {
    while (!done_[task]) {
      waiters_[task].push_back(sg4::Actor::self());
      sg4::this_actor::suspend();
    }
  }

  void complete(int task) {
    done_[task] = 1;
    timing_[task].end_s = sg4::Engine::get_clock();
    for (const sg4::ActorPtr& a : waiters_[task]) a->resume();
    waiters_[task].clear();
  }

  double node_slowdown(int gpu) const {
    return cluster_.node_health.empty() ? 1.0 : cluster_.node_health[cluster_.gpus[gpu].node].compute_slowdown;
  }

  void execute(int t, int device, int /*members*/, const ComputeTask& c) {
    timing_[t].start_s = sg4::Engine::get_clock();
    auto account = [&](double delta) {
      for (size_t i = 0; i <= c.mirrors.size(); ++i) {
        const int d = i == 0 ? device : c.mirrors[i - 1];
        mem_now_[d] += delta;
        mem_peak_[d] = std::max(mem_peak_[d], mem_now_[d]);
      }
    };
    if (c.memory_delta_bytes > 0) account(c.memory_delta_bytes);
    if (c.duration_s > 0) {
      // A degraded node (degraded_nodes) runs its kernels slower; ranks in lockstep wait for the slowest.
      double slowdown = node_slowdown(device);
      for (int m : c.mirrors) slowdown = std::max(slowdown, node_slowdown(m));
      sg4::this_actor::sleep_for(slowdown * c.duration_s);  // a kernel of known length: a timer, not a shared CPU
      ++activities_;
    }
    if (c.memory_delta_bytes < 0) account(c.memory_delta_bytes);
    complete(t);
  }

  void execute(int t, int /*device*/, int members, const CollectiveTask& c) {
    arrived_[t] += members;
    if (arrived_[t] < static_cast<int>(c.group.size())) {
      wait_for(t);  // the last member to arrive runs the collective for everyone
      return;
    }
    timing_[t].start_s = sg4::Engine::get_clock();
    for (const PreparedSchedule& s : schedules(c)) activities_ += net_.run(s);
    complete(t);
  }

  void execute(int t, int /*device*/, int /*members*/, const SendTask& s) {
    timing_[t].start_s = sg4::Engine::get_clock();
    if (s.size_bytes > 0) {
      std::vector<Flow> flows;
      for (const auto& [src, dst] : s.transfers()) flows.push_back({src, dst, s.size_bytes});
      activities_ += net_.concurrent(flows);
    }
    complete(t);
  }

  // The schedules of a collective, computed once per distinct collective (pipelines repeat the
  // same TP and gradient collectives many times; choosing an algorithm costs estimates of each).
  const std::vector<PreparedSchedule>& schedules(const CollectiveTask& c) {
    auto key = std::make_tuple(static_cast<int>(c.op), static_cast<int>(c.algorithm), c.root, c.size_bytes, c.group, c.shard_bytes);
    auto it = schedule_cache_.find(key);
    if (it == schedule_cache_.end()) {
      const Algorithm a = choose_algorithm(c, cluster_, *platform_.fabric).algorithm;
      std::vector<PreparedSchedule> prepared;
      for (const Schedule& s : collective_schedules(c, a, cluster_)) prepared.push_back(net_.prepare(s, opts_.fidelity));
      it = schedule_cache_.emplace(std::move(key), std::move(prepared)).first;
    }
    return it->second;
  }

  using CollectiveKey = std::tuple<int, int, int, double, std::vector<int>, std::vector<double>>;
  std::map<CollectiveKey, std::vector<PreparedSchedule>> schedule_cache_;
  const Program& prog_;
  const Cluster& cluster_;
  const Platform& platform_;
  std::vector<FlowRecord> flows_;
  Network net_;
  SimOptions opts_;
  std::vector<TaskTiming> timing_;
  std::vector<char> done_;
  std::vector<std::vector<sg4::ActorPtr>> waiters_;
  std::vector<int> arrived_;
  std::vector<double> mem_now_, mem_peak_;
  uint64_t activities_ = 0;
};

// Length of the union of intervals.
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

// One actor per device stream that has work: compute, then each communication stream; streams
// with identical task lists run as one actor (see Run::stream), counted in `members` of the first.
struct ActorStreams {
  std::vector<std::vector<int>> streams;  // device * kStreams + stream -> its tasks
  std::vector<int> members;               // > 0: this stream runs an actor for that many streams
  size_t actors = 0;
};
constexpr size_t kStreams = 1 + kCommStreams;

ActorStreams actor_streams(const Program& prog) {
  ActorStreams a;
  const size_t n = prog.devices.size();
  a.streams.resize(n * kStreams);
  auto comm = [&](int device, CommStream s) -> std::vector<int>& { return a.streams[device * kStreams + 1 + static_cast<int>(s)]; };
  for (size_t i = 0; i < prog.tasks.size(); ++i) {
    const int t = static_cast<int>(i);
    if (const auto* c = std::get_if<ComputeTask>(&prog.tasks[i].body)) a.streams[c->device * kStreams].push_back(t);
    else if (const auto* g = std::get_if<CollectiveTask>(&prog.tasks[i].body)) {
      for (int d : g->group) comm(d, g->stream).push_back(t);
    } else if (const auto* s = std::get_if<SendTask>(&prog.tasks[i].body)) comm(s->src, s->stream).push_back(t);
  }
  std::map<std::vector<int>, size_t> same;  // tasks -> first stream
  a.members.assign(a.streams.size(), 0);
  for (size_t i = 0; i < a.streams.size(); ++i) {
    if (a.streams[i].empty()) continue;
    auto [it, fresh] = same.try_emplace(a.streams[i], i);
    a.actors += fresh;
    ++a.members[it->second];
  }
  return a;
}

}  // namespace

void check_actor_count(size_t actors, const std::string& what) {
  std::ifstream in("/proc/sys/vm/max_map_count");
  double limit = 0;
  if (!(in >> limit) || limit <= 0) return;
  constexpr double kMappingsPerActor = 2, kReservedMappings = 4096;  // the process's own libraries and heap
  const double most = (limit - kReservedMappings) / kMappingsPerActor;
  if (static_cast<double>(actors) <= most) return;
  throw InputError("cluster", "", "this run needs " + what + std::to_string(actors) + " SimGrid actors (one per GPU stream with work), "
                   "more than the " + std::to_string(static_cast<long>(most)) + " that vm.max_map_count = " +
                   std::to_string(static_cast<long>(limit)) + " allows (two memory mappings each); raise it "
                   "(sysctl -w vm.max_map_count=" + std::to_string(static_cast<long>(actors * 2 + kReservedMappings)) +
                   ") or simulate fewer GPUs");
}

namespace {

nlohmann::json run_in_engine(const Program& prog, const Cluster& cluster, const SimOptions& opts) {
  int argc = 1;
  char name[] = "hetsim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thresh:critical");
  configure_network_model();
  const Platform platform = build_platform(cluster);

  const size_t n = prog.devices.size();
  const ActorStreams plan = actor_streams(prog);
  const std::vector<std::vector<int>>& streams = plan.streams;
  const std::vector<int>& members = plan.members;
  Run run(prog, cluster, platform, opts);
  for (size_t i = 0; i < streams.size(); ++i) {
    if (members[i] == 0) continue;
    const int dev = static_cast<int>(i / kStreams);
    const size_t kind = i % kStreams;
    const std::string name = kind == 0 ? "compute" : std::string(comm_stream_name(static_cast<CommStream>(kind - 1)));
    sg4::Actor::create(name + std::to_string(dev), platform.gpus[dev],
                       [&run, &streams, i, dev, m = members[i]] { run.stream(streams[i], dev, m); });
  }
  engine.run();
  if (const size_t left = run.unfinished(); left > 0) {
    throw std::runtime_error("the simulation stopped with " + std::to_string(left) + " of " + std::to_string(prog.tasks.size()) +
                             " tasks unfinished (no actor could progress: a deadlock); no time is reported");
  }

  nlohmann::json out;
  std::vector<double> flat;
  flat.reserve(2 * prog.tasks.size());
  for (const TaskTiming& t : run.timing()) {
    flat.push_back(t.start_s);
    flat.push_back(t.end_s);
  }
  out["timing"] = flat;
  std::vector<double> peaks(n);
  for (size_t d = 0; d < n; ++d) peaks[d] = run.peak_memory(static_cast<int>(d));
  out["peak"] = peaks;
  out["activities"] = run.activities();
  std::vector<double> flows;
  for (const FlowRecord& f : run.flows()) {
    flows.insert(flows.end(), {f.start_s, f.end_s, f.bytes, static_cast<double>(f.src_endpoint), static_cast<double>(f.dst_endpoint)});
  }
  out["flows"] = flows;
  return out;
}

}  // namespace

SimResult simulate(const Program& program, const Cluster& cluster, const SimOptions& options) {
  if (std::string err = validate(program); !err.empty()) throw std::logic_error("malformed program: " + err);
  if (static_cast<int>(program.devices.size()) != cluster.gpu_count()) {
    throw std::logic_error("program has " + std::to_string(program.devices.size()) + " devices, cluster " +
                           std::to_string(cluster.gpu_count()));
  }
  check_actor_count(actor_streams(program).actors, "");
  const auto t0 = std::chrono::steady_clock::now();
  const std::string bytes = run_isolated([&] {
    const std::vector<uint8_t> v = nlohmann::json::to_cbor(run_in_engine(program, cluster, options));
    return std::string(v.begin(), v.end());
  });
  const nlohmann::json in = nlohmann::json::from_cbor(bytes);

  SimResult r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.activities = in["activities"].get<uint64_t>();
  const std::vector<double> flat = in["timing"].get<std::vector<double>>();
  r.tasks.resize(program.tasks.size());
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    r.tasks[i] = {flat[2 * i], flat[2 * i + 1]};
    if (!std::isfinite(r.tasks[i].start_s) || !std::isfinite(r.tasks[i].end_s) || r.tasks[i].end_s < r.tasks[i].start_s) {
      throw std::runtime_error("simulation gave task " + program.tasks[i].label + " a non-finite or negative span; no time is reported");
    }
    r.iteration_time_s = std::max(r.iteration_time_s, r.tasks[i].end_s);
  }
  const std::vector<double> flows = in["flows"].get<std::vector<double>>();
  for (size_t i = 0; i + 4 < flows.size(); i += 5) {
    r.flows.push_back({flows[i], flows[i + 1], flows[i + 2], static_cast<int>(flows[i + 3]), static_cast<int>(flows[i + 4])});
  }
  const std::vector<double> peaks = in["peak"].get<std::vector<double>>();
  const size_t n = program.devices.size();
  r.devices.resize(n);
  std::vector<std::vector<TaskTiming>> busy(n), comm(n);
  for (size_t i = 0; i < program.tasks.size(); ++i) {
    const TaskTiming& t = r.tasks[i];
    if (const auto* c = std::get_if<ComputeTask>(&program.tasks[i].body)) {
      r.devices[c->device].compute_s += t.end_s - t.start_s;
      busy[c->device].push_back(t);
      for (int m : c->mirrors) {
        r.devices[m].compute_s += t.end_s - t.start_s;
        busy[m].push_back(t);
      }
    } else if (const auto* g = std::get_if<CollectiveTask>(&program.tasks[i].body)) {
      for (int d : g->group) comm[d].push_back(t);
    } else if (const auto* s = std::get_if<SendTask>(&program.tasks[i].body)) {
      for (const auto& [src, dst] : s->transfers()) comm[src].push_back(t);
    }
  }
  for (size_t d = 0; d < n; ++d) {
    r.devices[d].comm_s = union_length(comm[d]);  // streams overlap: time any of them is busy
    busy[d].insert(busy[d].end(), comm[d].begin(), comm[d].end());
    r.devices[d].busy_s = union_length(busy[d]);
    r.devices[d].peak_memory_bytes = program.devices[d].static_memory_bytes + peaks[d];
  }
  return r;
}

}  // namespace hetsim
