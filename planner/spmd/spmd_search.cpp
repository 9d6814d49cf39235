// File: planner/spmd/spmd_search.cpp
#include "planner/spmd/spmd_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <tuple>

#include "base/progress.hpp"

namespace hetsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Per-device cost model of one operator under one rule, for fixed shares.
class StepModel {
 public:
  StepModel(const SpmdProblem& p, const std::vector<double>& r, const SearchOptions& o) : p_(p), r_(r), o_(o) {
    // Devices with the same type, share and capacity hold the same memory: track one per class.
    std::map<std::tuple<int, double, double>, int> class_of;
    for (int d = 0; d < p.devices; ++d) {
      const double cap = p.memory_capacity.empty() ? 0 : p.memory_capacity[d];
      const auto [it, fresh] = class_of.try_emplace({p.type_of[d], r[d], cap}, static_cast<int>(class_rep_.size()));
      if (fresh) class_rep_.push_back(d);
    }
    max_r_ = *std::max_element(r.begin(), r.end());
    min_r_ = *std::min_element(r.begin(), r.end());
    last_use_.assign(p.ops.size(), -1);
    for (size_t i = 0; i < p.ops.size(); ++i) {
      for (int in : p.ops[i].inputs) last_use_[in] = std::max(last_use_[in], static_cast<int>(i));
    }
    live_at_.resize(p.ops.size() + 1);
    for (size_t pos = 0; pos <= p.ops.size(); ++pos) {
      for (size_t o = 0; o < pos; ++o) {
        if (last_use_[o] >= static_cast<int>(pos)) live_at_[pos].push_back(static_cast<int>(o));
      }
    }
    // Admissible heuristic: every remaining operator at its cheapest rule, as if its inputs
    // already had the layouts that rule needs (conversions only add cost).
    h_.assign(p.ops.size() + 1, 0.0);
    for (size_t i = p.ops.size(); i-- > 0;) {
      double best = kInf;
      for (int ri = 0; ri < static_cast<int>(p.ops[i].rules.size()); ++ri) {
        best = std::min(best, step(static_cast<int>(i), ri, p.ops[i].rules[ri].inputs).cost);
      }
      h_[i] = h_[i + 1] + best;
    }
    compute_memory_bounds();
  }

  // Communication of one collective of `bytes` (full tensor) on these shares.
  double comm(Comm c, double bytes) const {
    const double n = static_cast<double>(p_.devices);
    if (bytes <= 0 || p_.devices < 2) return 0;
    switch (c) {
      case Comm::kNone: return 0;
      case Comm::kAllReduce: return p_.all_reduce.time(bytes);
      case Comm::kAllToAll: return p_.all_to_all.time(bytes / n);  // sized per member (nccl-tests convention)
      case Comm::kAllGather:
      case Comm::kReduceScatter: {
        const CollectiveCost& cc = p_.cost_of(c);
        const double padded = cc.padded(bytes, n, max_r_);
        return o_.grouped_collectives ? std::min(padded, cc.grouped(bytes, n, min_r_)) : padded;
      }
    }
    return 0;
  }

  // The slowest device's compute: one device per class stands for the others (the same type and
  // share, so the same time).
  double max_compute(const SpmdOp& op, const Rule& rule, bool sfb) const {
    double worst = 0;
    for (int d : class_rep_) {
      const double full = op.time_s[p_.type_of[d]];
      double t = rule.sharded ? full * r_[d] : full;
      if (sfb) t += (1 - r_[d]) * full / 3;  // the whole weight gradient, formed locally
      worst = std::max(worst, t);
    }
    return worst;
  }

  double max_bwd(const SpmdOp& op, const Rule& rule) const {
    double worst = 0;
    for (int d : class_rep_) worst = std::max(worst, op.bwd_s[p_.type_of[d]] * (rule.sharded ? r_[d] : 1));
    return worst;
  }

  struct Step {
    double cost = kInf;
    bool sfb = false;
  };

  // Cost of running op `i` with rule `ri` when its inputs arrive in `in_layouts`.
  Step step(int i, int ri, const std::vector<Layout>& in_layouts) const {
    const SpmdOp& op = p_.ops[i];
    const Rule& rule = op.rules[ri];
    double blocking = 0;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const Conversion cv = convert(in_layouts[k], rule.inputs[k]);
      if (!cv.possible) return {};
      const double bytes = p_.ops[op.inputs[k]].output_bytes;
      blocking += comm(cv.forward, bytes) + comm(cv.backward, bytes);
      if (rule.backward_comm != Comm::kNone) blocking += comm(rule.backward_comm, bytes);
    }
    double sync_gathered = 0;
    if (rule.params == ParamPlacement::kGathered) {  // ZeRO-3: gather before forward and backward
      blocking += 2 * comm(Comm::kAllGather, op.param_bytes);
      sync_gathered = comm(Comm::kReduceScatter, op.param_bytes);
    }
    const double a = p_.accumulation;  // compute and activation traffic repeat; gradient sync does not
    auto total = [&](double compute, double sync) {
      if (o_.cost == CostMode::kBarrier) return a * (compute + blocking) + sync;
      return a * (compute + blocking) + std::max(0.0, sync - max_bwd(op, rule));  // sync hides behind backward
    };
    Step best{total(max_compute(op, rule, false),
                    rule.gradient_sync ? comm(Comm::kAllReduce, op.param_bytes) : sync_gathered), false};
    if (rule.gradient_sync && o_.sfb && op.kind == OpKind::kLinear && op.inputs.size() == 1) {
      // Sufficient factors: gather the layer's input and output gradient instead of reducing dW.
      const double factors = comm(Comm::kAllGather, p_.ops[op.inputs[0]].output_bytes) + comm(Comm::kAllGather, op.output_bytes);
      const double alt = total(max_compute(op, rule, true), factors);
      if (alt < best.cost) best = {alt, true};
    }
    return best;
  }

  // Memory the op's choice adds on device d.
  double memory(int i, int ri, int d) const {
    const SpmdOp& op = p_.ops[i];
    const Rule& rule = op.rules[ri];
    const double share = rule.sharded ? r_[d] : 1.0;
    const double state = op.param_state_bytes[p_.type_of[d]];
    const double params = stored_sharded(rule.params) ? state * r_[d] : state;
    return params + op.saved_bytes[p_.type_of[d]] * share;
  }

  // Memory classes: index k stands for device class_rep(k).
  int classes() const { return static_cast<int>(class_rep_.size()); }
  int class_rep(int k) const { return class_rep_[k]; }
  // Lower bound on the memory the operators from `pos` on will add on class k.
  double memory_to_come(size_t pos, int k) const { return mem_lb_[pos * class_rep_.size() + k]; }
  void compute_memory_bounds() {
    const size_t n = class_rep_.size();
    mem_lb_.assign((p_.ops.size() + 1) * n, 0.0);
    for (size_t i = p_.ops.size(); i-- > 0;) {
      for (size_t k = 0; k < n; ++k) {
        double least = kInf;
        for (int ri = 0; ri < static_cast<int>(p_.ops[i].rules.size()); ++ri) {
          least = std::min(least, memory(static_cast<int>(i), ri, class_rep_[k]));
        }
        mem_lb_[i * n + k] = mem_lb_[(i + 1) * n + k] + least;
      }
    }
  }

  const std::vector<int>& live_at(size_t pos) const { return live_at_[pos]; }
  double h(size_t pos) const { return o_.heuristic == Heuristic::kAdmissible ? h_[pos] : 0.0; }

 private:
  const SpmdProblem& p_;
  const std::vector<double>& r_;
  const SearchOptions& o_;
  double max_r_ = 0, min_r_ = 0;
  std::vector<int> last_use_;
  std::vector<std::vector<int>> live_at_;
  std::vector<double> h_;
  std::vector<double> mem_lb_;
  std::vector<int> class_rep_;
};

struct Node {
  int pos = 0;
  std::vector<Layout> live;  // layouts of live_at(pos), in that order
  double g = 0;
  std::vector<double> mem;   // per memory class (see StepModel::classes)
  int parent = -1;
  OpChoice choice;
};

Layout layout_of(const StepModel& m, const Node& n, int tensor) {
  const std::vector<int>& ids = m.live_at(static_cast<size_t>(n.pos));
  const auto it = std::find(ids.begin(), ids.end(), tensor);
  return n.live[static_cast<size_t>(it - ids.begin())];
}

// Expands `n` by every rule of op n.pos; calls emit(child) for each feasible one.
template <class Emit>
void expand(const SpmdProblem& p, const StepModel& m, const SearchOptions& o, const Node& n, int self, Emit&& emit) {
  const int i = n.pos;
  const SpmdOp& op = p.ops[i];
  std::vector<Layout> in(op.inputs.size());
  for (size_t k = 0; k < op.inputs.size(); ++k) in[k] = layout_of(m, n, op.inputs[k]);
  for (int ri = 0; ri < static_cast<int>(op.rules.size()); ++ri) {
    const StepModel::Step s = m.step(i, ri, in);
    if (!std::isfinite(s.cost)) continue;
    Node c;
    c.pos = i + 1;
    c.g = n.g + s.cost;
    c.parent = self;
    c.choice = {ri, s.sfb};
    c.mem = n.mem;
    bool fits = true;
    for (int k = 0; k < m.classes(); ++k) {
      const int d = m.class_rep(k);
      c.mem[k] += m.memory(i, ri, d);
      // Prune as soon as even the leanest choices for the rest cannot fit.
      if (o.memory_limit && !p.memory_capacity.empty() &&
          c.mem[k] + m.memory_to_come(static_cast<size_t>(c.pos), k) > p.memory_capacity[d]) {
        fits = false;
      }
    }
    if (!fits) continue;
    for (int t : m.live_at(static_cast<size_t>(c.pos))) c.live.push_back(t == i ? op.rules[ri].output : layout_of(m, n, t));
    emit(std::move(c));
  }
}

std::vector<OpChoice> trace_back(const std::vector<Node>& nodes, int goal) {
  std::vector<OpChoice> out;
  for (int k = goal; nodes[k].parent >= 0; k = nodes[k].parent) out.push_back(nodes[k].choice);
  std::reverse(out.begin(), out.end());
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

SearchResult search_program(const SpmdProblem& p, const std::vector<double>& ratios, const SearchOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const StepModel m(p, ratios, options);
  SearchResult out;
  std::vector<Node> nodes;
  nodes.push_back(Node{0, {}, 0, std::vector<double>(m.classes(), 0.0), -1, {}});
  using Entry = std::tuple<double, double, int>;  // f, g, node (ties: smaller g, then older node)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> open;
  open.push({m.h(0), 0, 0});
  // Dominance: per (position, live layouts), the (g, memory) pairs already reached, each a row of
  // 1 + classes numbers in one flat array (no allocation per row).
  const size_t stride = 1 + static_cast<size_t>(m.classes());
  std::unordered_map<std::string, std::vector<double>> seen;
  seen.max_load_factor(0.25f);  // short bucket chains: a look-up walks one or two nodes
  std::string key;
  auto state_key = [&key](const Node& c) -> const std::string& {  // position and live layouts, packed
    key.assign(reinterpret_cast<const char*>(&c.pos), sizeof c.pos);
    for (const Layout& l : c.live) key.push_back(static_cast<char>(static_cast<int>(l.kind) * 16 + l.dim + 1));
    return key;
  };
  // With memory limits, states trade time for memory and their Pareto fronts grow exponentially
  // with the number of layers; memory within 1/kMemoryGrain of a device's capacity counts as equal.
  constexpr double kMemoryGrain = 512;
  const bool limited = options.memory_limit && !p.memory_capacity.empty();
  std::vector<double> slack_per_class;  // a device's capacity / kMemoryGrain, per memory class
  for (int k = 0; k < m.classes() && limited; ++k) slack_per_class.push_back(p.memory_capacity[m.class_rep(k)] / kMemoryGrain);
  // Whether the state (g, mem) covers the state (gb, memb): no slower, and (with memory limits)
  // no more memory than slack x the grain over it in any class.
  auto covers = [&](double g, const double* mem, double gb, const double* memb, double slack) {
    if (g > gb) return false;
    if (!limited) return true;
    for (int k = 0; k < m.classes(); ++k) {
      if (mem[k] > memb[k] + slack * slack_per_class[static_cast<size_t>(k)]) return false;
    }
    return true;
  };
  auto dominated = [&](const Node& c) {
    std::vector<double>& front = seen[state_key(c)];
    const double* cm = c.mem.data();
    for (size_t r = 0; r < front.size(); r += stride) {
      if (covers(front[r], &front[r + 1], c.g, cm, 1.0)) return true;
    }
    // Keep the front minimal: drop what the new state dominates (in order), then add it.
    size_t kept = 0;
    for (size_t r = 0; r < front.size(); r += stride) {
      if (covers(c.g, cm, front[r], &front[r + 1], 0.0)) continue;
      if (kept != r) std::copy(front.begin() + static_cast<std::ptrdiff_t>(r), front.begin() + static_cast<std::ptrdiff_t>(r + stride),
                               front.begin() + static_cast<std::ptrdiff_t>(kept));
      kept += stride;
    }
    front.resize(kept);
    front.push_back(c.g);
    front.insert(front.end(), c.mem.begin(), c.mem.end());
    return false;
  };
  double best = kInf;
  int goal = -1;
  // A long search shows how deep its states reach: operators placed of all, and states expanded.
  Progress bar(p.ops.size(), "operators placed by the SPMD search's deepest state", kProgressAfterS);
  int deepest = 0;
  std::vector<Node> children;
  while (!open.empty()) {
    const auto [f, g, k] = open.top();
    open.pop();
    if (f >= best) break;  // nothing left can beat the incumbent
    if (nodes[k].pos == static_cast<int>(p.ops.size())) {
      best = g;
      goal = k;
      break;  // the first goal popped is optimal: h is admissible
    }
    ++out.stats.expanded;
    deepest = std::max(deepest, nodes[k].pos);
    if (out.stats.expanded % 1024 == 0) bar.update(static_cast<size_t>(deepest), std::to_string(out.stats.expanded) + " states expanded");
    // The children first, then into `nodes` (which may move when it grows): the parent is not copied.
    children.clear();
    expand(p, m, options, nodes[k], k, [&](Node c) {
      ++out.stats.generated;
      if (c.g + m.h(c.pos) >= best || dominated(c)) return;
      children.push_back(std::move(c));
    });
    for (Node& c : children) {
      nodes.push_back(std::move(c));
      const Node& added = nodes.back();
      open.push({added.g + m.h(added.pos), added.g, static_cast<int>(nodes.size()) - 1});
    }
  }
  bar.update(goal >= 0 ? p.ops.size() : static_cast<size_t>(deepest), std::to_string(out.stats.expanded) + " states expanded");
  bar.finish();
  out.stats.seconds = seconds_since(t0);
  if (goal < 0) return out;
  out.found = true;
  out.program = {trace_back(nodes, goal), best + pass_host_cost(p)};
  return out;
}

double pass_host_cost(const SpmdProblem& p) {
  if (p.pass_host_s.empty()) return 0;
  double slowest = 0;
  for (int type : p.type_of) slowest = std::max(slowest, p.pass_host_s[static_cast<size_t>(type)]);
  return 2 * p.accumulation * slowest;
}

double program_cost(const SpmdProblem& p, const std::vector<double>& ratios, const SearchOptions& options,
                    const std::vector<OpChoice>& choices) {
  const StepModel m(p, ratios, options);
  std::vector<Layout> out_layout(p.ops.size());
  std::vector<double> mem(p.devices, 0.0);
  double total = 0;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const SpmdOp& op = p.ops[i];
    std::vector<Layout> in;
    for (int x : op.inputs) in.push_back(out_layout[x]);
    const StepModel::Step s = m.step(static_cast<int>(i), choices[i].rule, in);
    if (!std::isfinite(s.cost)) return kInf;
    total += s.cost;
    out_layout[i] = op.rules[choices[i].rule].output;
    for (int d = 0; d < p.devices; ++d) {
      mem[d] += m.memory(static_cast<int>(i), choices[i].rule, d);
      if (options.memory_limit && !p.memory_capacity.empty() && mem[d] > p.memory_capacity[d]) return kInf;
    }
  }
  return total + pass_host_cost(p);
}

SearchResult enumerate_programs(const SpmdProblem& p, const std::vector<double>& ratios, const SearchOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const StepModel m(p, ratios, options);
  SearchResult out;
  std::vector<Node> path{Node{0, {}, 0, std::vector<double>(m.classes(), 0.0), -1, {}}};
  double best = kInf;
  std::vector<OpChoice> best_choices;
  // Depth-first over every rule of every operator; no pruning besides impossibility.
  std::function<void()> dfs = [&] {
    const Node& n = path.back();
    if (n.pos == static_cast<int>(p.ops.size())) {
      if (n.g < best) {
        best = n.g;
        best_choices.clear();
        for (size_t k = 1; k < path.size(); ++k) best_choices.push_back(path[k].choice);
      }
      return;
    }
    ++out.stats.expanded;
    std::vector<Node> children;
    expand(p, m, options, n, -1, [&](Node c) { children.push_back(std::move(c)); });
    out.stats.generated += static_cast<long>(children.size());
    for (Node& c : children) {
      path.push_back(std::move(c));
      dfs();
      path.pop_back();
    }
  };
  dfs();
  out.stats.seconds = seconds_since(t0);
  out.found = std::isfinite(best);
  out.program = {best_choices, best + pass_host_cost(p)};
  return out;
}

}  // namespace hetsim
