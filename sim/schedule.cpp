// File: sim/schedule.cpp
#include "sim/schedule.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <stdexcept>
#include <tuple>

#include "base/parallel_for.hpp"
#include "sim/rail_exchange.hpp"

namespace hetsim {

namespace {

bool has_chains(const RingChains& c) {
  return c.ring.size() >= 2 && std::any_of(c.chunks.begin(), c.chunks.end(), [](int k) { return k > 0; });
}

bool has_shifts(const RingShifts& s) { return s.ring.size() >= 2; }

bool has_rails(const RailExchange& x) { return !x.nodes.empty(); }

void check_one_form(const Schedule& s) {
  if (static_cast<int>(!s.edges.empty()) + static_cast<int>(has_chains(s.chains)) + static_cast<int>(has_shifts(s.shifts)) +
          static_cast<int>(has_rails(s.rails)) > 1) {
    throw std::logic_error("Schedule: holds more than one of edges, ring chains, ring shifts and a rail exchange");
  }
}

// The legs `fl` takes, each with its route (`r`, reused): itself, or staged through host memory in
// three (its GPU to its host, host to host, host to its peer) where the fabric stages the pair.
template <class Visit>
void for_each_leg(const Fabric& fabric, const Flow& fl, Route& r, Visit&& visit) {
  const auto leg = [&](int a, int b) {
    fabric.route(a, b, r);
    visit(r);
  };
  if (fabric.staged(fl.src, fl.dst)) {
    const int hs = fabric.staging(fl.src), hd = fabric.staging(fl.dst);
    leg(fl.src, hs);
    leg(hs, hd);
    leg(hd, fl.dst);
  } else {
    leg(fl.src, fl.dst);
  }
}

// Ring positions in GPU order: flows by source GPU, or by destination GPU.
std::vector<int> by_gpu(const std::vector<int>& ring) {
  std::vector<int> order(ring.size());
  for (size_t j = 0; j < ring.size(); ++j) order[j] = static_cast<int>(j);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return ring[static_cast<size_t>(a)] < ring[static_cast<size_t>(b)]; });
  return order;
}

// Every ordered pair of the ring once, by source then destination GPU (each pair once, so its
// bytes are the chunk, as a fresh sum would be).
std::vector<Flow> every_pair(const RingShifts& s) {
  const std::vector<int>& ring = s.ring;
  const std::vector<int> order = by_gpu(ring);
  std::vector<Flow> out;
  out.reserve(ring.size() * (ring.size() - 1));
  for (int a : order) {
    for (int b : order) {
      if (a != b) out.push_back({ring[static_cast<size_t>(a)], ring[static_cast<size_t>(b)], 0.0 + s.chunk_bytes});
    }
  }
  return out;
}

// Round r of the shifts: every member's one send, by source GPU, one round long; at once: every
// pair in one round.
void shift_round_groups(const RingShifts& s, const std::function<void(const RoundGroup&)>& visit) {
  const int n = static_cast<int>(s.ring.size());
  const std::vector<int> order = by_gpu(s.ring);
  RoundGroup g;
  g.count = 1;
  if (s.at_once) {
    g.flows = every_pair(s);
    visit(g);
    return;
  }
  for (int r = 0; r + 1 < n; ++r) {
    g.first = r;
    g.flows.clear();
    for (int j : order) {
      g.flows.push_back({s.ring[static_cast<size_t>(j)], s.ring[static_cast<size_t>((j + r + 1) % n)], 0.0 + s.chunk_bytes});
    }
    visit(g);
  }
}

// Ring pair q of chains `c`: ring[q] -> ring[q+1] (towards the root: ring[q+1] -> ring[q]).
struct RingPairs {
  const RingChains& c;
  int n;
  [[nodiscard]] int src(int q) const { return c.towards_root ? c.ring[static_cast<size_t>((q + 1) % n)] : c.ring[static_cast<size_t>(q)]; }
  [[nodiscard]] int dst(int q) const { return c.towards_root ? c.ring[static_cast<size_t>(q)] : c.ring[static_cast<size_t>((q + 1) % n)]; }
  // The pair chain i crosses at `offset` (0 <= offset <= n - 2): its step p from the chain's start.
  [[nodiscard]] int at(int i, int offset) const {
    const int p = c.towards_root ? n - 2 - offset : offset;
    return (i + p) % n;
  }
  // Pairs in (src, dst) order, the order in which a map of the expanded edges would hold them.
  [[nodiscard]] std::vector<int> sorted() const {
    std::vector<int> order(static_cast<size_t>(n));
    for (int q = 0; q < n; ++q) order[static_cast<size_t>(q)] = q;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return std::make_pair(src(a), dst(a)) < std::make_pair(src(b), dst(b)); });
    return order;
  }
};

// The round groups of ring chains, as the sweep over their expanded edges would give them, bit for
// bit: at every round where an edge stops or starts, the interval before it, then the stops, then
// the starts, each in chain order (the expanded edges' order), a pair's bytes restarting from 0
// when its last edge stops.
void chain_round_groups(const RingChains& c, const std::function<void(const RoundGroup&)>& visit) {
  const int n = static_cast<int>(c.ring.size());
  const RingPairs pairs{c, n};
  const std::vector<int> order = pairs.sorted();
  int kmax = 0;
  for (int k : c.chunks) kmax = std::max(kmax, k);
  const int rounds = n - 2 + kmax;
  // Chains with an edge stopping at each round: chain i stops one edge per round in [k_i, n-2+k_i].
  std::vector<int> stopping(static_cast<size_t>(rounds) + 2, 0);
  for (int k : c.chunks) {
    if (k <= 0) continue;
    ++stopping[static_cast<size_t>(k)];
    --stopping[static_cast<size_t>(n - 1 + k)];
  }
  std::vector<int> edges(static_cast<size_t>(n), 0);
  std::vector<double> bytes(static_cast<size_t>(n), 0.0);
  int active = 0;  // pairs with an edge
  RoundGroup g;
  int open = -1;
  int stops = 0;
  for (int r = 0; r <= rounds; ++r) {
    stops += stopping[static_cast<size_t>(r)];
    const bool starts = r <= n - 2;
    if (!starts && stops == 0) continue;
    if (open >= 0 && active > 0) {
      g.first = open;
      g.count = r - open;
      g.flows.clear();
      for (int q : order) {
        if (edges[static_cast<size_t>(q)] > 0) g.flows.push_back({pairs.src(q), pairs.dst(q), bytes[static_cast<size_t>(q)]});
      }
      visit(g);
    }
    for (int i = 0; stops > 0 && i < n; ++i) {
      const int k = c.chunks[static_cast<size_t>(i)];
      if (k <= 0 || r - k < 0 || r - k > n - 2) continue;
      const auto q = static_cast<size_t>(pairs.at(i, r - k));
      if (--edges[q] == 0) {
        bytes[q] = 0;
        --active;
      } else {
        bytes[q] -= c.chunk_bytes[static_cast<size_t>(i)];
      }
    }
    for (int i = 0; starts && i < n; ++i) {
      if (c.chunks[static_cast<size_t>(i)] <= 0) continue;
      const auto q = static_cast<size_t>(pairs.at(i, r));
      if (edges[q]++ == 0) ++active;
      bytes[q] += c.chunk_bytes[static_cast<size_t>(i)];
    }
    open = r;
  }
}

// Ring chains that all carry the same chunks (an even all-gather or reduce-scatter): in every round
// each ring pair gains one edge and loses one exactly as every other pair does, so every round
// group holds all n pairs with the same bytes. Visits (first round, rounds, bytes) of each group
// as chain_round_groups gives them, from one pair's edges: O(rounds), not O(n x rounds). False
// (nothing visited) when the chains are not all alike.
bool uniform_chain_groups(const RingChains& c, const std::function<void(int, int, double)>& visit) {
  const int n = static_cast<int>(c.ring.size());
  const int k = c.chunks.front();
  const double chunk = c.chunk_bytes.front();
  for (int i = 0; i < n; ++i) {
    if (c.chunks[static_cast<size_t>(i)] != k || c.chunk_bytes[static_cast<size_t>(i)] != chunk) return false;
  }
  if (k <= 0) return false;
  const int rounds = n - 2 + k;
  int edges = 0;
  double bytes = 0;
  int open = -1;
  for (int r = 0; r <= rounds; ++r) {
    const bool starts = r <= n - 2;
    const bool stops = r - k >= 0 && r - k <= n - 2;  // every chain stops one edge: one on each pair
    if (!starts && !stops) continue;
    if (open >= 0 && edges > 0) visit(open, r - open, bytes);
    if (stops) {
      if (--edges == 0) {
        bytes = 0;
      } else {
        bytes -= chunk;
      }
    }
    if (starts) {
      ++edges;
      bytes += chunk;
    }
    open = r;
  }
  return true;
}

// Ring shifts over this many members or more are priced on all cores (an all-to-all over 16 384
// GPUs holds 16 383 rounds of 16 384 transfers each).
constexpr size_t kParallelShiftsFrom = 256;

// step_estimate of ring shifts: every round carries other pairs than the round before, so each is
// priced on its own (as the sweep over round groups would); the rounds are priced on the
// machine's cores at once and added in round order, the same sum bit for bit.
double parallel_shift_estimate(const RingShifts& x, const Fabric& fabric, double setup_s) {
  const int n = static_cast<int>(x.ring.size());
  const std::vector<int> order = by_gpu(x.ring);
  std::vector<double> round_s(static_cast<size_t>(n - 1), 0.0);
  std::vector<std::vector<Flow>> flows(static_cast<size_t>(parallel_workers()));
  parallel_for(n - 1, [&](long r, int worker) {
    std::vector<Flow>& f = flows[static_cast<size_t>(worker)];
    f.clear();
    for (int j : order) {
      f.push_back({x.ring[static_cast<size_t>(j)], x.ring[static_cast<size_t>((j + r + 1) % n)], 0.0 + x.chunk_bytes});
    }
    round_s[static_cast<size_t>(r)] = concurrent_time(f, fabric);
  });
  double t = setup_s;
  for (double r : round_s) t += 1 * r;
  return t;
}

// step_estimate of a direct exchange over many members: what concurrent_time of its n(n-1) flows
// gives, without holding them. Every flow carries the same bytes, so a shared link's load is the
// number of legs that cross it times those bytes (counted: exact in any order, so the same on any
// number of cores); each flow is then priced against those loads, source by source on all cores.
double parallel_direct_estimate(const RingShifts& x, const Fabric& fabric, double setup_s) {
  const int n = static_cast<int>(x.ring.size());
  const std::vector<FabricLink>& links = fabric.links();
  const auto flow = [&](long a, long b) { return Flow{x.ring[static_cast<size_t>(a)], x.ring[static_cast<size_t>(b)], x.chunk_bytes}; };
  std::vector<std::vector<uint64_t>> counts(static_cast<size_t>(parallel_workers()));
  parallel_for(n, [&](long a, int worker) {
    std::vector<uint64_t>& c = counts[static_cast<size_t>(worker)];
    if (c.empty()) c.assign(links.size(), 0);
    Route r;
    for (long b = 0; b < n; ++b) {
      if (b == a) continue;
      for_each_leg(fabric, flow(a, b), r, [&](const Route& leg) {
        for (int l : leg.links) c[static_cast<size_t>(l)] += links[static_cast<size_t>(l)].shared ? 1 : 0;
      });
    }
  });
  std::vector<uint64_t> total(links.size(), 0);
  for (const std::vector<uint64_t>& c : counts) {
    for (size_t l = 0; l < c.size(); ++l) total[l] += c[l];
  }
  std::vector<double> worst(static_cast<size_t>(n), 0.0);
  parallel_for(n, [&](long a, int /*worker*/) {
    Route r;
    double most = 0;
    for (long b = 0; b < n; ++b) {
      if (b == a) continue;
      double t = 0;
      for_each_leg(fabric, flow(a, b), r, [&](const Route& leg) {
        double slowest = 0;
        for (int l : leg.links) {
          const FabricLink& fl = links[static_cast<size_t>(l)];
          const double carried = fl.shared ? static_cast<double>(total[static_cast<size_t>(l)]) * x.chunk_bytes : x.chunk_bytes;
          slowest = std::max(slowest, carried / fl.bandwidth_Bps);
        }
        t += leg.latency_s + slowest;
      });
      most = std::max(most, t);
    }
    worst[static_cast<size_t>(a)] = most;
  });
  return setup_s + *std::max_element(worst.begin(), worst.end());
}

}  // namespace

int Schedule::rounds() const {
  int r = 0;
  for (const PipeEdge& e : edges) r = std::max(r, e.offset + e.chunks);
  if (has_chains(chains)) {
    for (int k : chains.chunks) r = std::max(r, static_cast<int>(chains.ring.size()) - 2 + k);
  }
  if (has_shifts(shifts)) r = std::max(r, shifts.at_once ? 1 : static_cast<int>(shifts.ring.size()) - 1);
  if (has_rails(rails)) {  // the intra phase in rounds [0, pieces), the inter phase one round later
    r = std::max(r, rails.nodes.size() >= 2 && rails.nodes.front().size() >= 2 ? std::max(1, rails.pieces) + 1 : expanded(rails).rounds());
  }
  return r;
}

void for_each_round_group(const Schedule& s, const std::function<void(const RoundGroup&)>& visit) {
  check_one_form(s);
  if (has_chains(s.chains)) {
    chain_round_groups(s.chains, visit);
    return;
  }
  if (has_shifts(s.shifts)) {
    shift_round_groups(s.shifts, visit);
    return;
  }
  if (has_rails(s.rails)) {  // a simulation of it holds its edges (an estimate does not: step_estimate)
    for_each_round_group(expanded(s.rails), visit);
    return;
  }
  // The active edge set only changes where an edge starts or stops: a sweep over those rounds,
  // keeping the bytes per round of every GPU pair with edges active (each edge added and removed
  // once, not tested in every interval: an interval holds at most the schedule's distinct pairs).
  const int rounds = s.rounds();
  std::vector<std::vector<size_t>> starts(static_cast<size_t>(rounds) + 1), stops(static_cast<size_t>(rounds) + 1);
  for (size_t i = 0; i < s.edges.size(); ++i) {
    const PipeEdge& e = s.edges[i];
    if (e.chunks <= 0) continue;
    starts[static_cast<size_t>(e.offset)].push_back(i);
    stops[static_cast<size_t>(e.offset + e.chunks)].push_back(i);
  }
  // The active pairs as a vector sorted by pair (a map's order, walked without its pointer
  // chasing: 13 % of a 32 768-GPU data-parallel run went to iterating a std::map). Bytes change by
  // the same additions and subtractions, in the same order, as a map's entries would.
  struct Active {
    int src = 0, dst = 0;
    double bytes = 0;
    int edges = 0;
  };
  const auto before = [](const Active& a, std::pair<int, int> key) { return std::pair(a.src, a.dst) < key; };
  const auto find = [&](std::vector<Active>& v, const PipeEdge& e) {
    const auto it = std::lower_bound(v.begin(), v.end(), std::pair(e.src, e.dst), before);
    return it != v.end() && it->src == e.src && it->dst == e.dst ? it : v.end();
  };
  std::vector<Active> active, fresh, merged;
  RoundGroup g;
  int open = -1;  // the round the current active set began
  for (int r = 0; r <= rounds; ++r) {
    const size_t at = static_cast<size_t>(r);
    if (starts[at].empty() && stops[at].empty()) continue;
    if (open >= 0 && !active.empty()) {
      g.first = open;
      g.count = r - open;
      g.flows.clear();
      for (const Active& a : active) g.flows.push_back({a.src, a.dst, a.bytes});
      visit(g);
    }
    bool emptied = false;
    for (size_t i : stops[at]) {
      const PipeEdge& e = s.edges[i];
      const auto it = find(active, e);
      if (--it->edges == 0) {
        emptied = true;
      } else {
        it->bytes -= e.chunk_bytes;
      }
    }
    if (emptied) std::erase_if(active, [](const Active& a) { return a.edges == 0; });
    // Pairs already active take their new edges in place; new pairs are gathered, in list order
    // within a pair, and merged in.
    fresh.clear();
    for (size_t i : starts[at]) {
      const PipeEdge& e = s.edges[i];
      if (const auto it = find(active, e); it != active.end()) {
        it->bytes += e.chunk_bytes;
        ++it->edges;
      } else {
        fresh.push_back({e.src, e.dst, 0.0, static_cast<int>(i)});  // edges: the list position, for now
      }
    }
    if (!fresh.empty()) {
      std::sort(fresh.begin(), fresh.end(),
                [](const Active& a, const Active& b) { return std::tie(a.src, a.dst, a.edges) < std::tie(b.src, b.dst, b.edges); });
      size_t w = 0;
      for (size_t k = 0; k < fresh.size(); ++w) {
        Active a{fresh[k].src, fresh[k].dst, 0.0, 0};
        for (; k < fresh.size() && fresh[k].src == a.src && fresh[k].dst == a.dst; ++k) {
          a.bytes += s.edges[static_cast<size_t>(fresh[k].edges)].chunk_bytes;
          ++a.edges;
        }
        fresh[w] = a;
      }
      fresh.resize(w);
      merged.clear();
      std::merge(active.begin(), active.end(), fresh.begin(), fresh.end(), std::back_inserter(merged),
                 [](const Active& a, const Active& b) { return std::tie(a.src, a.dst) < std::tie(b.src, b.dst); });
      active.swap(merged);
    }
    open = r;
  }
}

std::vector<RoundGroup> round_groups(const Schedule& s) {
  std::vector<RoundGroup> groups;
  for_each_round_group(s, [&](const RoundGroup& g) { groups.push_back(g); });
  return groups;
}

std::vector<Flow> merged_flows(const Schedule& s) {
  check_one_form(s);
  if (has_rails(s.rails)) return merged_flows(expanded(s.rails));
  if (has_chains(s.chains)) {
    // Every chain but one crosses each ring pair; summed in chain order, as the edges would be.
    const RingChains& c = s.chains;
    const int n = static_cast<int>(c.ring.size());
    const RingPairs pairs{c, n};
    std::vector<Flow> out;
    for (int q : pairs.sorted()) {
      bool any = false;
      double bytes = 0;
      for (int i = 0; i < n; ++i) {
        const int k = c.chunks[static_cast<size_t>(i)];
        if (k <= 0 || (q - i + n) % n > n - 2) continue;  // chain i stops one pair short of it
        bytes += c.chunk_bytes[static_cast<size_t>(i)] * k;
        any = true;
      }
      if (any) out.push_back({pairs.src(q), pairs.dst(q), bytes});
    }
    return out;
  }
  if (has_shifts(s.shifts)) return every_pair(s.shifts);
  // Edges by GPU pair, in schedule order within a pair (the sums as a map would add them).
  struct Key {
    int src, dst;
    size_t edge;
  };
  std::vector<Key> order;
  order.reserve(s.edges.size());
  for (size_t i = 0; i < s.edges.size(); ++i) order.push_back({s.edges[i].src, s.edges[i].dst, i});
  std::sort(order.begin(), order.end(),
            [](const Key& a, const Key& b) { return std::tie(a.src, a.dst, a.edge) < std::tie(b.src, b.dst, b.edge); });
  std::vector<Flow> out;
  for (const Key& k : order) {
    const PipeEdge& e = s.edges[k.edge];
    if (out.empty() || out.back().src != e.src || out.back().dst != e.dst) out.push_back({e.src, e.dst, 0});
    out.back().bytes += e.chunk_bytes * e.chunks;
  }
  return out;
}

double concurrent_time(const std::vector<Flow>& flows, const Fabric& fabric) {
  // Legs of every flow (their links in one array), then the load each shared link carries. The
  // loads live in a scratch array as long as the fabric's links, zero between calls: a call costs
  // the links its flows cross, not the fabric's size (the planner asks about one flow at a time).
  std::vector<int> links;                    // every leg's links, leg after leg
  std::vector<size_t> end;                   // leg i: links [end[i-1], end[i])
  std::vector<double> latency, bytes;        // per leg
  std::vector<size_t> owner;                 // per leg: its flow
  Route r;
  for (size_t f = 0; f < flows.size(); ++f) {
    for_each_leg(fabric, flows[f], r, [&](const Route& leg) {
      links.insert(links.end(), leg.links.begin(), leg.links.end());
      end.push_back(links.size());
      latency.push_back(leg.latency_s);
      bytes.push_back(flows[f].bytes);
      owner.push_back(f);
    });
  }
  const std::vector<FabricLink>& fabric_links = fabric.links();
  thread_local std::vector<double> load;  // zero everywhere between calls
  if (load.size() < fabric_links.size()) load.resize(fabric_links.size(), 0.0);
  std::vector<int> touched;
  for (size_t leg = 0, at = 0; leg < end.size(); at = end[leg++]) {
    for (size_t k = at; k < end[leg]; ++k) {
      const int link = links[k];
      if (!fabric_links[static_cast<size_t>(link)].shared) continue;
      if (load[static_cast<size_t>(link)] == 0.0) touched.push_back(link);
      load[static_cast<size_t>(link)] += bytes[leg];
    }
  }
  std::vector<double> per_flow(flows.size(), 0);
  for (size_t leg = 0, at = 0; leg < end.size(); at = end[leg++]) {
    double worst = 0;
    for (size_t k = at; k < end[leg]; ++k) {
      const FabricLink& fl = fabric_links[static_cast<size_t>(links[k])];
      const double carried = fl.shared ? load[static_cast<size_t>(links[k])] : bytes[leg];
      worst = std::max(worst, carried / fl.bandwidth_Bps);
    }
    per_flow[owner[leg]] += latency[leg] + worst;
  }
  for (int link : touched) load[static_cast<size_t>(link)] = 0.0;
  double t = 0;
  for (double x : per_flow) t = std::max(t, x);
  return t;
}

double step_estimate(const Schedule& s, const Fabric& fabric) {
  if (has_rails(s.rails)) {  // without its edges where that is exact (sim/rail_exchange.hpp)
    check_one_form(s);
    if (s.setup_s == 0) {
      if (const std::optional<double> t = rail_exchange_step_estimate(s.rails, fabric)) return *t;
    }
    Schedule e = expanded(s.rails);
    e.setup_s = std::max(e.setup_s, s.setup_s);
    return step_estimate(e, fabric);
  }
  if (has_shifts(s.shifts) && s.shifts.ring.size() >= kParallelShiftsFrom) {
    check_one_form(s);
    return s.shifts.at_once ? parallel_direct_estimate(s.shifts, fabric, s.setup_s) : parallel_shift_estimate(s.shifts, fabric, s.setup_s);
  }
  // Rounds in turn, each priced once however many rounds in a row carry the same flows (ring
  // chains in their steady state: every pair carries the same chunks).
  double t = s.setup_s;
  std::vector<Flow> last;
  double last_s = 0;
  bool priced = false;
  if (has_chains(s.chains)) {  // alike chains: the same sums from one pair's bytes per round
    check_one_form(s);
    const RingPairs pairs{s.chains, static_cast<int>(s.chains.ring.size())};
    const bool alike = uniform_chain_groups(s.chains, [&](int /*first*/, int count, double bytes) {
      if (!priced || bytes != last.front().bytes) {
        if (!priced) {
          for (int q : pairs.sorted()) last.push_back({pairs.src(q), pairs.dst(q), 0.0});
        }
        for (Flow& f : last) f.bytes = bytes;
        last_s = concurrent_time(last, fabric);
        priced = true;
      }
      t += count * last_s;
    });
    if (alike) return t;
  }
  for_each_round_group(s, [&](const RoundGroup& g) {
    const bool same = priced && g.flows.size() == last.size() &&
                      std::equal(g.flows.begin(), g.flows.end(), last.begin(), [](const Flow& a, const Flow& b) {
                        return a.src == b.src && a.dst == b.dst && a.bytes == b.bytes;
                      });
    if (!same) {
      last_s = concurrent_time(g.flows, fabric);
      last = g.flows;
      priced = true;
    }
    t += g.count * last_s;
  });
  return t;
}

ScheduleEstimate estimate(const Schedule& s, const Fabric& fabric) {
  ScheduleEstimate e;
  e.step_s = step_estimate(s, fabric);
  e.phase_s = concurrent_time(merged_flows(s), fabric);
  return e;
}

}  // namespace hetsim
