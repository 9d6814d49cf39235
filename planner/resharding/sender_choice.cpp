// File: planner/resharding/sender_choice.cpp
#include "planner/resharding/sender_choice.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "base/progress.hpp"

namespace hetsim {
namespace {

// One way to run a work: its sender, the NICs it occupies (the sender's first, then one per
// receiving host other than the sender's) and how long it holds them.
struct Option {
  int sender = 0;
  std::vector<int> workers;
  double duration_s = 0;
};

// The NIC-level model of a set of works.
struct NicModel {
  std::vector<std::pair<int, int>> nics;     // worker index -> (node, NIC)
  std::vector<std::vector<Option>> options;  // per work, one per candidate sender, in replica order

  int worker(const std::pair<int, int>& nic) {
    for (size_t i = 0; i < nics.size(); ++i) {
      if (nics[i] == nic) return static_cast<int>(i);
    }
    nics.push_back(nic);
    return static_cast<int>(nics.size()) - 1;
  }
};

NicModel build_model(const ReshardWorks& w, const Cluster& cluster) {
  NicModel m;
  m.options.resize(w.works.size());
  for (size_t i = 0; i < w.works.size(); ++i) {
    const ReshardWork& work = w.works[i];
    for (int s : work.senders) {
      Option o;
      o.sender = s;
      const int node = cluster.gpus[s].domain;  // receivers in its NVLink domain need no NIC
      double bw = cluster.node_type_of_gpu(s).nic.bandwidth_Bps;
      std::vector<int> hosts;
      for (int r : work.receivers) {
        const int rn = cluster.gpus[r].domain;
        if (rn == node || std::find(hosts.begin(), hosts.end(), rn) != hosts.end()) continue;
        hosts.push_back(rn);
        o.workers.push_back(m.worker(nic_of(cluster, r)));
        bw = std::min(bw, cluster.node_type_of_gpu(r).nic.bandwidth_Bps);
      }
      if (o.workers.empty()) {
        o.duration_s = work.bytes / cluster.node_type_of_gpu(s).intra.bandwidth_Bps;  // NVLink only: no NIC held
      } else {
        o.workers.insert(o.workers.begin(), m.worker(nic_of(cluster, s)));
        o.duration_s = work.bytes / bw;
      }
      m.options[i].push_back(std::move(o));
    }
  }
  return m;
}

// List scheduling: each work starts when all its NICs are free and holds them until it ends.
double makespan(const NicModel& m, const std::vector<int>& order, const std::vector<int>& choice) {
  std::vector<double> free(m.nics.size(), 0);
  double end = 0;
  for (int i : order) {
    const Option& o = m.options[i][choice[i]];
    double start = 0;
    for (int k : o.workers) start = std::max(start, free[k]);
    for (int k : o.workers) free[k] = start + o.duration_s;
    end = std::max(end, start + o.duration_s);
  }
  return end;
}

int option_of(const ReshardWork& work, int sender) {
  return static_cast<int>(std::find(work.senders.begin(), work.senders.end(), sender) - work.senders.begin());
}

// A uniform double in [0, 1) from the engine's raw output (the standard distributions are not
// the same on every library; this is).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

struct Packing {
  std::vector<std::pair<int, int>> set;  // (work, option) admitted together
  std::vector<double> loads;             // per worker after them
  double spread = 0;                     // standard deviation of `loads`
};

// Alpa's greedy: rounds of random packings of concurrent works (no NIC in two works), senders
// drawn with weight (max load - load + 1); the round admitting most works wins, ties to the
// most even loads.
std::pair<std::vector<int>, std::vector<int>> greedy_order(const ReshardWorks& w, const NicModel& m,
                                                           std::vector<double> loads, const OrderOptions& opt) {
  std::mt19937_64 rng(opt.seed);
  std::vector<int> order, choice(w.works.size(), 0);
  std::vector<int> remaining(w.works.size());
  for (size_t i = 0; i < remaining.size(); ++i) remaining[i] = static_cast<int>(i);
  std::vector<char> placed(w.works.size(), 0);  // a work once placed stays placed
  Progress bar(remaining.size(), "works ordered by the greedy", kProgressAfterS);  // tens of thousands take seconds
  while (!remaining.empty()) {
    Packing best;
    bool have = false;
    for (int round = 0; round < opt.greedy_rounds; ++round) {
      std::vector<int> perm = remaining;
      for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng() % i]);
      Packing p;
      p.loads = loads;
      // The largest load, kept as loads only grow (a scan per work made 65 536 works on 4096 GPUs a minute).
      double top = p.loads.empty() ? 0 : *std::max_element(p.loads.begin(), p.loads.end());
      std::vector<char> busy(m.nics.size(), 0);
      for (int i : perm) {
        std::vector<int> free_options;
        for (size_t o = 0; o < m.options[i].size(); ++o) {
          const std::vector<int>& ws = m.options[i][o].workers;
          if (std::none_of(ws.begin(), ws.end(), [&](int k) { return busy[k] != 0; })) {
            free_options.push_back(static_cast<int>(o));
          }
        }
        if (free_options.empty()) continue;
        auto load_of = [&](int o) {
          const std::vector<int>& ws = m.options[i][o].workers;
          return ws.empty() ? 0.0 : p.loads[ws.front()];
        };
        double total = 0;
        for (int o : free_options) total += top - load_of(o) + 1;
        double draw = unit(rng) * total;
        int pick = free_options.back();
        for (int o : free_options) {
          draw -= top - load_of(o) + 1;
          if (draw < 0) {
            pick = o;
            break;
          }
        }
        const Option& o = m.options[i][pick];
        for (int k : o.workers) busy[k] = 1;
        if (!o.workers.empty()) top = std::max(top, p.loads[o.workers.front()] += w.works[i].bytes);
        p.set.emplace_back(i, pick);
      }
      double mean = 0;
      for (double l : p.loads) mean += l;
      mean /= std::max<size_t>(1, p.loads.size());
      for (double l : p.loads) p.spread += (l - mean) * (l - mean);
      p.spread = std::sqrt(p.spread / std::max<size_t>(1, p.loads.size()));
      if (!have || p.set.size() > best.set.size() || (p.set.size() == best.set.size() && p.spread < best.spread)) {
        best = std::move(p);
        have = true;
      }
    }
    for (const auto& [i, o] : best.set) {
      order.push_back(i);
      choice[i] = o;
      placed[static_cast<size_t>(i)] = 1;
    }
    std::erase_if(remaining, [&](int i) { return placed[static_cast<size_t>(i)] != 0; });
    bar.update(order.size());
    loads = std::move(best.loads);
  }
  bar.finish();
  return {order, choice};
}

// Depth-first search over (next work, option) with an admissible lower bound, started from an
// incumbent schedule.
class OrderSearch {
 public:
  OrderSearch(const NicModel& m, const OrderOptions& opt) : m_(m), opt_(opt), free_(m.nics.size(), 0) {
    placed_.assign(m.options.size(), 0);
    choice_.assign(m.options.size(), 0);
  }

  void run(std::vector<int>& order, std::vector<int>& choice, double& best) {
    best_ = best;
    best_order_ = order;
    best_choice_ = choice;
    start_ = std::chrono::steady_clock::now();
    dfs(0, 0);
    order = best_order_;
    choice = best_choice_;
    best = best_;
  }

  long expansions = 0;
  bool stopped_by_budget = false;
  bool stopped_by_time = false;

 private:
  // A bound no completion can beat: each remaining work finishes no earlier than its best option
  // on the NICs as they are now, and a NIC every option of a work needs must run all such works.
  double lower_bound(double so_far) const {
    double lb = so_far;
    std::vector<double> must(m_.nics.size(), 0);
    for (size_t i = 0; i < m_.options.size(); ++i) {
      if (placed_[i]) continue;
      double earliest = 1e300, shortest = 1e300;
      for (const Option& o : m_.options[i]) {
        double start = 0;
        for (int k : o.workers) start = std::max(start, free_[k]);
        earliest = std::min(earliest, start + o.duration_s);
        shortest = std::min(shortest, o.duration_s);
      }
      lb = std::max(lb, earliest);
      for (int k : m_.options[i].front().workers) {
        const bool in_all = std::all_of(m_.options[i].begin(), m_.options[i].end(), [&](const Option& o) {
          return std::find(o.workers.begin(), o.workers.end(), k) != o.workers.end();
        });
        if (in_all) must[k] += shortest;
      }
    }
    for (size_t k = 0; k < must.size(); ++k) {
      if (must[k] > 0) lb = std::max(lb, free_[k] + must[k]);
    }
    return lb;
  }

  bool out_of_budget() {
    if (expansions >= opt_.max_expansions) {
      stopped_by_budget = true;
      return true;
    }
    // The clock every 1024 nodes of a few works; every node where a node is a sort of thousands (65 536
    // works: 1024 nodes took 4 s past a 1 s budget).
    const long every = std::max<long>(1, 1024 / std::max<long>(1, static_cast<long>(m_.options.size())));
    if (expansions % every == 0) {
      const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      if (spent > opt_.budget_s) stopped_by_time = true;
    }
    return stopped_by_time;
  }

  void dfs(size_t depth, double so_far) {
    if (out_of_budget()) return;
    ++expansions;
    if (depth == m_.options.size()) {
      if (so_far < best_ * (1 - 1e-12)) {
        best_ = so_far;
        best_order_ = order_;
        best_choice_ = choice_;
      }
      return;
    }
    if (lower_bound(so_far) >= best_ * (1 - 1e-12)) return;
    struct Child {
      double end;
      int work, option;
      double start;
    };
    std::vector<Child> children;
    for (size_t i = 0; i < m_.options.size(); ++i) {
      if (placed_[i]) continue;
      for (size_t o = 0; o < m_.options[i].size(); ++o) {
        double start = 0;
        for (int k : m_.options[i][o].workers) start = std::max(start, free_[k]);
        children.push_back({start + m_.options[i][o].duration_s, static_cast<int>(i), static_cast<int>(o), start});
      }
    }
    std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) {
      return a.end != b.end ? a.end < b.end : a.work != b.work ? a.work < b.work : a.option < b.option;
    });
    for (const Child& c : children) {
      if (stopped_by_budget || stopped_by_time) return;
      const Option& o = m_.options[c.work][c.option];
      std::vector<double> saved;
      for (int k : o.workers) {
        saved.push_back(free_[k]);
        free_[k] = c.end;
      }
      placed_[c.work] = 1;
      choice_[c.work] = c.option;
      order_.push_back(c.work);
      dfs(depth + 1, std::max(so_far, c.end));
      order_.pop_back();
      placed_[c.work] = 0;
      for (size_t k = 0; k < o.workers.size(); ++k) free_[o.workers[k]] = saved[k];
    }
  }

  const NicModel& m_;
  const OrderOptions& opt_;
  std::vector<double> free_;
  std::vector<char> placed_;
  std::vector<int> choice_, order_;
  double best_ = 0;
  std::vector<int> best_order_, best_choice_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::string_view load_balance_name(LoadBalance b) {
  switch (b) {
    case LoadBalance::kNone: return "none";
    case LoadBalance::kGpu: return "gpu";
    case LoadBalance::kNic: return "nic";
    case LoadBalance::kOrder: return "order";
  }
  return "?";
}

std::optional<LoadBalance> load_balance_from_name(std::string_view name) {
  for (LoadBalance b : {LoadBalance::kNone, LoadBalance::kGpu, LoadBalance::kNic, LoadBalance::kOrder}) {
    if (load_balance_name(b) == name) return b;
  }
  return std::nullopt;
}

std::pair<int, int> nic_of(const Cluster& cluster, int gpu) {
  const NodeType& nt = cluster.node_type_of_gpu(gpu);
  return {cluster.gpus[gpu].node, cluster.gpus[gpu].local % std::max(1, nt.nic.count)};
}

ReshardSchedule schedule_works(const ReshardWorks& w, const Cluster& cluster, LoadBalance balance, SenderLoads& loads,
                               const OrderOptions& options) {
  ReshardSchedule out;
  const size_t n = w.works.size();
  NicModel model = build_model(w, cluster);
  std::vector<int> choice(n, 0);
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);

  if (balance == LoadBalance::kOrder) {
    std::vector<double> start(model.nics.size(), 0);
    for (size_t k = 0; k < model.nics.size(); ++k) {
      if (auto it = loads.nic_bytes.find(model.nics[k]); it != loads.nic_bytes.end()) start[k] = it->second;
    }
    if (options.greedy_rounds > 0) std::tie(order, choice) = greedy_order(w, model, start, options);
    double best = makespan(model, order, choice);
    out.greedy_makespan_s = best;
    OrderSearch search(model, options);
    search.run(order, choice, best);
    out.solver = best < out.greedy_makespan_s ? "search" : "greedy";
    out.expansions = search.expansions;
    out.search_exhausted = !search.stopped_by_budget && !search.stopped_by_time;
    out.stopped_by_time = search.stopped_by_time;
  } else {
    for (size_t i = 0; i < n; ++i) {
      const ReshardWork& work = w.works[i];
      int best = work.senders.front();
      auto load = [&](int g) { return balance == LoadBalance::kGpu ? loads.gpu_bytes[g] : loads.nic_bytes[nic_of(cluster, g)]; };
      if (balance != LoadBalance::kNone) {
        for (int g : work.senders) {
          if (load(g) < load(best)) best = g;
        }
      }
      choice[i] = option_of(work, best);
      loads.gpu_bytes[best] += work.bytes;
      loads.nic_bytes[nic_of(cluster, best)] += work.bytes;
    }
  }
  out.order = order;
  out.sender.resize(n);
  for (size_t i = 0; i < n; ++i) {
    out.sender[i] = w.works[i].senders[choice[i]];
    if (balance == LoadBalance::kOrder) {
      loads.gpu_bytes[out.sender[i]] += w.works[i].bytes;
      loads.nic_bytes[nic_of(cluster, out.sender[i])] += w.works[i].bytes;
    }
  }
  out.model_makespan_s = makespan(model, order, choice);
  return out;
}

}  // namespace hetsim
