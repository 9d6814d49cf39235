// File: sim/event_loop.cpp
#include "sim/event_loop.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "base/input_error.hpp"
#include "base/log.hpp"
#include "base/progress.hpp"
#include "base/text.hpp"
#include "sim/collective.hpp"
#include "sim/network.hpp"
#include "sim/network_overlap.hpp"
#include "sim/platform.hpp"

namespace hetsim {

namespace sg4 = simgrid::s4u;

namespace {

// Every stream's tasks in program order (for_each_stream numbers the streams).
struct Streams {
  std::vector<std::vector<int>> tasks;  // device * kStreamsPerDevice + stream -> its tasks

  explicit Streams(const Program& prog) : tasks(prog.devices.size() * kStreamsPerDevice) {
    for (size_t i = 0; i < prog.tasks.size(); ++i) {
      for_each_stream(prog.tasks[i], [&](size_t s) { tasks[s].push_back(static_cast<int>(i)); });
    }
  }
};

// Every transfer of a send, as flows.
std::vector<Flow> flows_of(const SendTask& s) {
  std::vector<Flow> flows;
  for (const auto& [src, dst] : s.transfers()) flows.push_back({src, dst, s.size_bytes});
  return flows;
}

// One simulation as an event loop in a single SimGrid actor. Every stream runs its tasks in
// program order; a task starts when it is at the head of every stream that holds it (all members
// of a collective have reached it) and its dependencies are done. Kernels are timers of the loop
// (a kernel of known length, not a shared CPU); each communication task runs in a worker actor
// that moves its flows through the network and wakes the loop when done. So a run needs one
// actor plus one per communication in flight at once, not one per GPU stream, and the memory
// SimGrid maps for actor stacks no longer grows with the number of GPUs.
class Run {
 public:
  Run(const Program& p, const Cluster& cluster, const Platform& platform, const SimOptions& o)
      : prog_(p), cluster_(cluster), platform_(platform), net_(platform, o.record_flows ? &flows_ : nullptr), opts_(o),
        streams_(p), cursor_(streams_.tasks.size(), 0), timing_(p.tasks.size()), done_(p.tasks.size(), 0),
        comm_live_(static_cast<size_t>(cluster.gpu_count()), 0), running_on_(static_cast<size_t>(cluster.gpu_count()), -1),
        pending_(p.tasks.size(), 0), dependents_(p.tasks.size()), mem_now_(p.devices.size(), 0),
        mem_peak_(p.devices.size(), 0), mutex_(sg4::Mutex::create()), wake_(sg4::ConditionVariable::create()),
        reuse_collectives_(!o.every_collective && network_tasks_in_sequence(p)) {
    for (size_t i = 0; i < p.tasks.size(); ++i) {
      pending_[i] = static_cast<int>(p.tasks[i].deps.size());
      for (int d : p.tasks[i].deps) dependents_[d].push_back(static_cast<int>(i));
      for_each_stream(p.tasks[i], [&](size_t) { ++pending_[i]; });
    }
    const size_t workers = most_workers(p, streams_);
    if (const size_t fit = Network::stacks_that_fit(); workers + 1 > fit) refuse_for_stacks(workers + 1, fit);
    net_.set_actor_budget(o.actor_budget, workers);
    net_.set_relays_from(o.relays_from_flows);
    net_.show_rounds(p.tasks.size() == 1);
    if (!o.every_collective && !reuse_collectives_) find_collectives_alone();
  }

  // The run needs `needed` actor stacks at once (the loop and its workers) where only `fit` fit in
  // the address space left: SimGrid would abort half-way ("Failed to allocate stack"). A resource
  // limit the user can change, so reported as bad input (exit 2), not as a crash.
  [[noreturn]] static void refuse_for_stacks(size_t needed, size_t fit) {
    const auto mib = [](double bytes) { return format_double("%.0f", bytes / (1 << 20)) + " MiB"; };
    const double limit = static_cast<double>(Network::address_space_limit());
    throw InputError("ulimit -v " + format_double("%.0f", limit / 1024), "",
                     "this simulation needs up to " + std::to_string(needed) + " SimGrid actor stacks of " +
                         mib(static_cast<double>(Network::stack_bytes())) + " at once, and the address-space limit of " + mib(limit) +
                         " leaves room for " + std::to_string(fit) + " beside the run's memory; raise the limit (ulimit -v) or "
                         "simulate fewer GPUs")
        .set_machine_limit();
  }

  // At most how many communications run at once, so many workers. Each holds its streams alone:
  // a communication holding n streams takes at least 1/n of each, and a stream whose tasks hold
  // at least f streams each can give no communication more than 1/f of itself; so at most the
  // sum over communication streams of 1 / (the fewest streams one of its tasks holds). (A pipeline
  // of TP 8 stages whose sends are mirrored on the group's first rank counts 1/8 per TP stream and
  // one per sending stream, not one per stream of every GPU: relays keep the actors this leaves.)
  // A collective with mirror groups is one communication per group.
  static size_t most_workers(const Program& p, const Streams& streams) {
    size_t tasks = 0;
    std::vector<double> share(p.tasks.size(), 0);  // of a stream a task's communications take at least
    for (size_t i = 0; i < p.tasks.size(); ++i) {
      if (std::holds_alternative<ComputeTask>(p.tasks[i].body)) continue;
      const auto* c = std::get_if<CollectiveTask>(&p.tasks[i].body);
      const auto* s = std::get_if<SendTask>(&p.tasks[i].body);
      const size_t parts = c != nullptr ? c->parts() : static_cast<size_t>(s->copies);
      tasks += parts;
      size_t held = 0;
      for_each_stream(p.tasks[i], [&](size_t) { ++held; });
      share[i] = static_cast<double>(parts) / static_cast<double>(std::max<size_t>(held, 1));
    }
    double bound = 0;
    for (size_t s = 0; s < streams.tasks.size(); ++s) {
      if (s % kStreamsPerDevice == 0 || streams.tasks[s].empty()) continue;
      double most = 0;
      for (int t : streams.tasks[s]) most = std::max(most, share[static_cast<size_t>(t)]);
      bound += most;
    }
    return std::min(tasks, static_cast<size_t>(bound) + 1);  // + 1: rounding of the sum
  }

  // The loop: starts every task that is ready, then waits for the next kernel to end or a
  // communication to finish, until no task is left to run.
  void loop() {
    std::unique_lock lock(*mutex_);
    for (size_t s = 0; s < streams_.tasks.size(); ++s) {
      if (!streams_.tasks[s].empty()) arrive(streams_.tasks[s].front());
    }
    start_ready();
    // Copies that no longer keep one pace stop the run (simulate() runs them written out): nothing
    // more starts, and the communications in flight end (SimGrid may not drop them midway).
    while (in_flight_ > 0 || (!timers_.empty() && !mirrors_diverged_)) {
      bool timed_out = false;
      if (in_flight_ == 0) {
        sg4::this_actor::sleep_until(timers_.top().end_s);
        timed_out = true;
      } else if (timers_.empty()) {
        wake_->wait(lock);
      } else {
        timed_out = wake_->wait_until(lock, timers_.top().end_s) == std::cv_status::timeout;
      }
      const double now = sg4::Engine::get_clock();
      std::vector<int> finished;
      finished.swap(finished_);
      for (int t : finished) {
        --in_flight_;
        part_done(t);
      }
      // The timer the loop waited for is due even where the clock landed an ulp short of it, and
      // so is every timer within SimGrid's time precision of now: SimGrid ends such sleeps in the
      // same step (an actor per stream, as before the loop, saw them end together).
      if (timed_out && !timers_.empty()) pop_timer();
      while (!timers_.empty() && timers_.top().end_s <= now + precision_s_) pop_timer();
      start_ready();
      show_progress();
    }
    progress_.update(completed_);
    progress_.finish();
  }

  std::vector<TaskTiming>& timing() { return timing_; }
  const std::vector<FlowRecord>& flows() const { return flows_; }
  uint64_t activities() const { return activities_; }
  [[nodiscard]] bool mirrors_diverged() const { return mirrors_diverged_; }
  double peak_memory(int device) const { return mem_peak_[device]; }
  // Tasks that never completed: after the loop, a deadlock (nothing left to run or wait for).
  [[nodiscard]] size_t unfinished() const { return static_cast<size_t>(std::count(done_.begin(), done_.end(), 0)); }

 private:
  struct PreparedCollective;
  struct Timer {
    double end_s;
    uint64_t order;  // ties: the earlier started first
    int task;
    uint32_t version = 0;  // a compute task's timer is stale once its end moved (interference)
    bool operator>(const Timer& o) const { return end_s != o.end_s ? end_s > o.end_s : order > o.order; }
  };

  // One more stream has reached `task`.
  void arrive(int task) {
    if (--pending_[task] == 0) ready_.push_back(task);
  }

  void start_ready() {
    while (!ready_.empty() && !mirrors_diverged_) {  // starting a task of no length completes it, which may ready more
      std::vector<int> now;
      now.swap(ready_);
      for (int t : now) start(t);
    }
  }

  // A bar with ETA once a run has taken more than a few seconds (100 000 GPUs take minutes; the
  // bar waits kProgressAfterS and redraws at most four times a second), told every 4096 tasks.
  void show_progress() {
    if (completed_ < next_check_) return;
    next_check_ = completed_ + 4096;
    progress_.update(completed_);
  }

  // A communication of `task` ended: the task, or one part of it (a collective's group or a send's
  // copy, ComputeTask/SendTask::copies); the task completes with its last part. The parts are copies
  // of one pipeline's task for others alike: they must end together (mirrors_diverged_).
  void part_done(int task) {
    if (const auto it = parts_.find(task); it != parts_.end()) {
      const double now = sg4::Engine::get_clock();
      Parts& p = it->second;
      if (p.first_end < 0) p.first_end = now;
      if (p.first_end != now) mirrors_diverged_ = true;
      if (--p.left > 0) return;
      parts_.erase(it);
    }
    complete(task);
  }

  void complete(int task) {
    ++completed_;
    if (const auto* c = std::get_if<CollectiveTask>(&prog_.tasks[task].body)) {
      c->for_each_member([&](int d) { --comm_live_[static_cast<size_t>(d)]; });
      repace(*c);
    }
    done_[task] = 1;
    timing_[task].end_s = sg4::Engine::get_clock();
    for_each_stream(prog_.tasks[task], [&](size_t s) {
      const std::vector<int>& list = streams_.tasks[s];
      if (++cursor_[s] < list.size()) arrive(list[cursor_[s]]);
    });
    for (int u : dependents_[task]) arrive(u);
  }

  void pop_timer() {
    const Timer t = timers_.top();
    timers_.pop();
    if (done_[t.task]) return;  // an earlier timer of a compute task a collective moved ended it
    if (const auto* c = std::get_if<ComputeTask>(&prog_.tasks[t.task].body)) {
      if (const auto it = running_.find(t.task); it != running_.end()) {
        if (it->second.version != t.version) return;  // moved by a collective: a later timer ends it
        running_.erase(it);
        running_on_[static_cast<size_t>(c->device)] = -1;
        for (int m : c->mirrors) running_on_[static_cast<size_t>(m)] = -1;
      }
      if (c->memory_delta_bytes < 0) account(*c, c->memory_delta_bytes);
      complete(t.task);
      return;
    }
    part_done(t.task);
  }

  void add_timer(int task, double duration_s) {
    const double end_s = sg4::Engine::get_clock() + duration_s;
    if (const auto it = running_.find(task); it != running_.end()) it->second.end_s = end_s;
    timers_.push({end_s, timer_order_++, task, 0});
    ++activities_;
  }

  double node_slowdown(int gpu) const {
    return cluster_.node_health.empty() ? 1.0 : cluster_.node_health[cluster_.gpus[gpu].node].compute_slowdown;
  }

  void account(const ComputeTask& c, double delta) {
    for (size_t i = 0; i <= c.mirrors.size(); ++i) {
      const int d = i == 0 ? c.device : c.mirrors[i - 1];
      mem_now_[d] += delta;
      mem_peak_[d] = std::max(mem_peak_[d], mem_now_[d]);
    }
  }

  void start(int t) {
    timing_[t].start_s = sg4::Engine::get_clock();
    std::visit([&](const auto& body) { this->start(t, body); }, prog_.tasks[t].body);
  }

  // Compute beside a running collective: the collective's kernels hold SMs and memory bandwidth
  // (measured where it was), times the calibration profile's share beyond it.
  double interference(int gpu) const {
    if (!opts_.collective_interference || comm_live_[static_cast<size_t>(gpu)] == 0) return 1.0;
    const Device& d = cluster_.device_of(gpu);
    return d.collective_interference * (1 + d.fitted.overlap_slowdown);
  }

  // How much slower than its duration a compute task runs now: a degraded node (degraded_nodes)
  // runs its kernels slower, and so does a GPU with a collective beside the task; ranks in
  // lockstep (mirrors) wait for the slowest.
  // Copies of one kernel for alike pipelines (ComputeTask::copies) must keep one pace: each copy's
  // slowest rank the same, or the copies would have run apart (mirrors_diverged_).
  double slowdown(const ComputeTask& c) {
    const auto at = [&](size_t i) {
      const int d = i == 0 ? c.device : c.mirrors[i - 1];
      return node_slowdown(d) * interference(d);
    };
    const size_t n = 1 + c.mirrors.size(), run = n / static_cast<size_t>(c.copies);
    double first = 0, s = 0;
    for (size_t k = 0; k < static_cast<size_t>(c.copies); ++k) {
      double copy = 0;
      for (size_t i = k * run; i < (k + 1) * run; ++i) copy = std::max(copy, at(i));
      if (k == 0) first = copy;
      if (copy != first) mirrors_diverged_ = true;
      s = std::max(s, copy);
    }
    return s;
  }

  void start(int t, const ComputeTask& c) {
    if (c.memory_delta_bytes > 0) account(c, c.memory_delta_bytes);
    if (c.duration_s > 0) {
      const double s = slowdown(c);
      running_[t] = {s, 0};
      running_on_[static_cast<size_t>(c.device)] = t;
      for (int m : c.mirrors) running_on_[static_cast<size_t>(m)] = t;
      add_timer(t, s * c.duration_s);
      return;
    }
    if (c.memory_delta_bytes < 0) account(c, c.memory_delta_bytes);
    complete(t);
  }

  // A collective started or ended on `group`: the compute tasks running there go on at their new
  // pace, the work left the same (their timers move; the old ones are dropped as stale).
  void repace(const CollectiveTask& c) {
    if (!opts_.collective_interference) return;
    const double now = sg4::Engine::get_clock();
    std::unordered_set<int> seen;  // a task mirrored on many members is re-paced once
    c.for_each_member([&](int d) {
      const int t = running_on_[static_cast<size_t>(d)];
      if (t < 0 || !seen.insert(t).second) return;
      Running& r = running_.at(t);
      const double s = slowdown(std::get<ComputeTask>(prog_.tasks[t].body));
      if (s == r.slowdown) return;
      const double left = std::max(0.0, r.end_s - now) / r.slowdown;  // at the task's own pace
      r.slowdown = s;
      r.end_s = now + left * s;
      timers_.push({r.end_s, timer_order_++, t, ++r.version});
    });
  }

  void start(int t, const CollectiveTask& c) {
    c.for_each_member([&](int d) { ++comm_live_[static_cast<size_t>(d)]; });
    repace(c);
    // The same collective alone on the same links (an idle network, or links no other task can
    // cross meanwhile): the same time, and in a traced run the same flows, moved in time.
    const bool reuse = reuse_collectives_ || (!alone_.empty() && alone_[static_cast<size_t>(t)] != 0);
    if (c.mirror_groups.empty()) {
      start_part(t, prepared(c), reuse);
      return;
    }
    // Each group's collective from now, as if each were a task of its own started together.
    parts_[t] = {static_cast<int>(c.parts())};
    for (size_t k = 0; k < c.parts(); ++k) start_part(t, prepared(c.part(k)), reuse);
  }

  // One group's collective of task `t`; part_done(t) when it ends.
  void start_part(int t, PreparedCollective& prepared, bool reuse) {
    if (reuse && prepared.duration_s >= 0) {
      const double start_s = timing_[t].start_s;
      for (const FlowRecord& f : prepared.flows) flows_.push_back({start_s + f.start_s, start_s + f.end_s, f.bytes, f.src_endpoint, f.dst_endpoint});
      add_timer(t, prepared.duration_s);
      return;
    }
    communicate(t, [this, &prepared, reuse, start_s = timing_[t].start_s] {
      // The call's fixed cost (the calibration profile's collective_latency) before its data moves.
      if (prepared.latency_s > 0) sg4::this_actor::sleep_for(prepared.latency_s);
      uint64_t n = 0;
      std::vector<FlowRecord> own;  // a traced collective that others repeat: its flows, kept
      const bool keep = reuse && prepared.duration_s < 0 && net_.records();
      for (const PreparedSchedule& s : prepared.schedules) n += net_.run(s, keep ? &own : nullptr);
      if (keep) flows_.insert(flows_.end(), own.begin(), own.end());
      if (reuse && prepared.duration_s < 0) {
        prepared.duration_s = sg4::Engine::get_clock() - start_s;
        for (FlowRecord& f : own) {
          f.start_s -= start_s;
          f.end_s -= start_s;
        }
        prepared.flows = std::move(own);
      }
      return n;
    });
  }

  // Marks the collectives that run alone on their shared links (network_overlap.hpp): each
  // distinct one is then simulated once and the others take its time. A program whose look-ups
  // would pass kMostLegsLooked (all-to-alls over thousands of GPUs) is simulated flow by flow.
  static constexpr size_t kMostLegsLooked = size_t{1} << 23;
  void find_collectives_alone() {
    SharedLinks shared(*platform_.fabric);
    std::vector<std::vector<int>> send_links;  // of each send, in program order
    for (const Task& task : prog_.tasks) {
      if (const auto* s = std::get_if<SendTask>(&task.body)) {
        send_links.push_back(shared.of(flows_of(*s)));
        if (shared.legs() > kMostLegsLooked) return;
      }
    }
    std::vector<const std::vector<int>*> links(prog_.tasks.size(), nullptr);
    std::deque<std::vector<int>> mirrored_links;  // of each collective with mirror groups: every group's
    size_t sends = 0;
    for (size_t t = 0; t < prog_.tasks.size(); ++t) {
      if (const auto* c = std::get_if<CollectiveTask>(&prog_.tasks[t].body)) {
        std::vector<int>* all = c->mirror_groups.empty() ? nullptr : &mirrored_links.emplace_back();
        for (size_t k = 0; k < c->parts(); ++k) {
          PreparedCollective& p = all == nullptr ? prepared(*c) : prepared(c->part(k));
          if (!p.links) {
            p.links = shared.of(p.schedules);
            if (shared.legs() > kMostLegsLooked) return;
          }
          if (all == nullptr) {
            links[t] = &*p.links;
          } else {
            all->insert(all->end(), p.links->begin(), p.links->end());
          }
        }
        if (all != nullptr) {
          std::sort(all->begin(), all->end());
          all->erase(std::unique(all->begin(), all->end()), all->end());
          links[t] = all;
        }
      } else if (std::holds_alternative<SendTask>(prog_.tasks[t].body)) {
        links[t] = &send_links[sends++];
      }
    }
    alone_ = alone_on_links(prog_, platform_.fabric->links().size(), links);
  }

  void start(int t, const SendTask& s) {
    if (s.size_bytes <= 0) {
      complete(t);
      return;
    }
    if (s.copies == 1) {
      communicate(t, [this, &s] { return net_.concurrent(flows_of(s)); });
      return;
    }
    // One communication per pipeline's copy, started together, as its own task would be.
    parts_[t] = {s.copies};
    for (size_t k = 0; k < static_cast<size_t>(s.copies); ++k) {
      communicate(t, [this, &s, k] {
        std::vector<Flow> flows;
        for (const auto& [src, dst] : s.copy_transfers(k)) flows.push_back({src, dst, s.size_bytes});
        return net_.concurrent(flows);
      });
    }
  }

  // Runs `move` (which returns the activities it started) in a worker actor; the loop completes
  // task `t` when it returns. Workers are kept for the next communication once done (a pipeline
  // runs hundreds of thousands: creating an actor, and its stack, for each was a third of the run).
  void communicate(int t, std::function<uint64_t()> move) {
    ++in_flight_;
    Worker* w = nullptr;
    if (idle_.empty()) {
      workers_.push_back(std::make_unique<Worker>());
      w = workers_.back().get();
      w->wake = sg4::ConditionVariable::create();
      sg4::Actor::create("comm", platform_.gpus.front(), [this, w] { work(*w); })->daemonize();
    } else {
      w = idle_.back();
      idle_.pop_back();
    }
    w->task = t;
    w->job = std::move(move);
    w->wake->notify_one();
  }

  struct Worker {
    sg4::ConditionVariablePtr wake;
    std::function<uint64_t()> job;  // empty: idle
    int task = -1;
  };

  // A worker's life: wait for a job, run it, hand its task back to the loop, wait again. Daemon
  // actors: SimGrid ends them when the loop, the last other actor, returns.
  void work(Worker& w) {
    std::unique_lock lock(*mutex_);
    while (true) {
      while (!w.job) w.wake->wait(lock);
      const std::function<uint64_t()> job = std::move(w.job);
      w.job = nullptr;
      lock.unlock();
      const uint64_t started = job();
      lock.lock();
      activities_ += started;
      finished_.push_back(w.task);
      idle_.push_back(&w);
      wake_->notify_one();
    }
  }

  // A distinct collective: its schedules, and (reuse_collectives_) the time it took once simulated.
  struct PreparedCollective {
    std::vector<PreparedSchedule> schedules;
    double duration_s = -1;  // < 0: not simulated yet (with latency_s)
    double latency_s = 0;    // call_latency: waited before its data moves
    std::vector<FlowRecord> flows;  // a traced run's: its flows as first simulated, from its start
    std::optional<std::vector<int>> links;  // the shared links its flows cross (find_collectives_alone)
  };

  // Computed once per distinct collective (pipelines repeat the same TP and gradient collectives
  // many times; choosing an algorithm costs estimates of each).
  PreparedCollective& prepared(const CollectiveTask& c) {
    auto key = std::make_tuple(static_cast<int>(c.op), static_cast<int>(c.algorithm), c.root, c.size_bytes, c.group, c.shard_bytes);
    auto it = collective_cache_.find(key);
    if (it == collective_cache_.end()) {
      const Algorithm a = choose_algorithm(c, cluster_, *platform_.fabric).algorithm;
      PreparedCollective p;
      p.latency_s = call_latency(c, cluster_);
      for (const Schedule& s : collective_schedules(c, a, cluster_, platform_.fabric.get())) p.schedules.push_back(net_.prepare(s, opts_.fidelity));
      it = collective_cache_.emplace(std::move(key), std::move(p)).first;
    }
    return it->second;
  }

  using CollectiveKey = std::tuple<int, int, int, double, std::vector<int>, std::vector<double>>;
  std::map<CollectiveKey, PreparedCollective> collective_cache_;
  struct Parts {
    int left = 0;          // parts not done
    double first_end = -1;  // when the first one ended (< 0: none yet)
  };
  std::unordered_map<int, Parts> parts_;  // tasks of several parts running
  bool mirrors_diverged_ = false;
  const Program& prog_;
  const Cluster& cluster_;
  const Platform& platform_;
  std::vector<FlowRecord> flows_;
  Network net_;
  SimOptions opts_;
  Streams streams_;
  std::vector<size_t> cursor_;  // per stream: index of its current task
  std::vector<TaskTiming> timing_;
  std::vector<char> done_;
  std::vector<int> comm_live_;  // per GPU: collectives running on it now
  struct Running {
    double slowdown = 1;  // its pace now: seconds per second of its duration
    uint32_t version = 0;
    double end_s = 0;
  };
  std::unordered_map<int, Running> running_;  // compute tasks running now (with a duration)
  std::vector<int> running_on_;               // per GPU: the compute task running on it, or -1
  std::vector<int> pending_;    // per task: dependencies not done + streams not yet at it
  std::vector<std::vector<int>> dependents_;
  std::vector<int> ready_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  uint64_t timer_order_ = 0;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> idle_;
  std::vector<int> finished_;   // communications done since the loop last woke
  int in_flight_ = 0;           // communications running in actors
  std::vector<double> mem_now_, mem_peak_;
  uint64_t activities_ = 0;
  size_t completed_ = 0, next_check_ = 0;
  Progress progress_{prog_.tasks.size(), "tasks simulated", kProgressAfterS};
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr wake_;
  bool reuse_collectives_;
  std::vector<char> alone_;  // per task: a collective alone on its links (empty: not looked for)
  const double precision_s_ = simgrid::config::get_value<double>("surf/precision");
};

}  // namespace

// One run of `prog` on `platform`, in the process that holds it: timings, peaks and flows as CBOR.
std::string run_program(const Program& prog, const Cluster& cluster, const Platform& platform, const SimOptions& opts) {
  const size_t n = prog.devices.size();
  Run run(prog, cluster, platform, opts);
  if (!prog.tasks.empty()) sg4::Actor::create("loop", platform.gpus.front(), [&run] { run.loop(); });
  sg4::Engine::get_instance()->run();
  if (const size_t left = run.unfinished(); left > 0 && !run.mirrors_diverged()) {
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
  out["mirrors_diverged"] = run.mirrors_diverged();
  std::vector<double> flows;
  for (const FlowRecord& f : run.flows()) {
    flows.insert(flows.end(), {f.start_s, f.end_s, f.bytes, static_cast<double>(f.src_endpoint), static_cast<double>(f.dst_endpoint)});
  }
  out["flows"] = flows;
  const std::vector<uint8_t> v = nlohmann::json::to_cbor(out);
  return std::string(v.begin(), v.end());
}

}  // namespace hetsim
