// File: topologies/network_graph.cpp
// A graph file read, checked and built (in that order), hop counts to every attached switch by a
// Boost.Graph breadth-first search, and ECMP walks down those hop counts.
#include "topologies/network_graph.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/property_map/property_map.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "base/device_list.hpp"
#include "base/text.hpp"
#include "base/yaml_reader.hpp"

namespace hetsim {
namespace {

// Switches in one file: more than the largest clusters built need (a three-tier fat tree of
// 64-port switches, 65 536 hosts, has 5 120).
constexpr long kMaxSwitches = 65536;
// Parallel cables in one `links` entry.
constexpr long kMaxCableCount = 1024;
// Hop counts kept for routing (attached switches x switches): 256 MiB. A cluster of 100 000 GPUs on
// 8 rails of 64-port leaves has ~1 600 attached switches of ~4 000: 6.4 million.
constexpr size_t kMaxRoutingEntries = size_t{1} << 26;
// Switch-to-switch hops a route between two NICs' switches may take: the fabrics built route in a
// few (a three-tier fat tree in 4, a dragonfly's minimal routes in 3 between groups); a long chain
// would have every flow cross thousands of links, and the simulation's work grows with them.
constexpr int kMaxRouteHops = 64;
// Names, NICs and switches a message lists before it says how many more there are.
constexpr size_t kListed = 5;
// Where path_count stops counting.
constexpr double kPathCountCap = 1e300;

// The next number of the splitmix64 sequence in `state` (Steele, Lea and Flood 2014): a full-period
// generator whose outputs are well mixed even for consecutive seeds, such as flow keys.
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// "a, b, c" or "a, b, c, d, e and 7 more": the first kListed of `names`.
std::string some_of(const std::vector<std::string>& names) {
  std::vector<std::string> shown(names.begin(), names.begin() + static_cast<long>(std::min(names.size(), kListed)));
  std::string out = join(shown);
  if (names.size() > kListed) out += " and " + std::to_string(names.size() - kListed) + " more";
  return out;
}

// "GPU 3", "GPUs 0-15,24": a noun and an index list.
std::string indices_text(const std::string& noun, const std::vector<int>& indices) {
  return noun + (indices.size() == 1 ? " " : "s ") + format_index_list(indices);
}

// The global indices of the GPUs that use NIC `nic` of `node` (local index g uses NIC g mod nics).
std::vector<int> gpus_of_nic(const GraphNodeInfo& node, int nic) {
  std::vector<int> out;
  for (int g = nic; g < node.gpus; g += node.nics) out.push_back(node.first_gpu + g);
  return out;
}

void check_node_infos(const std::vector<GraphNodeInfo>& nodes) {
  if (nodes.empty()) throw std::invalid_argument("load_network_graph: a cluster without nodes");
  for (size_t n = 0; n < nodes.size(); ++n) {
    const GraphNodeInfo& i = nodes[n];
    if (i.nics < 1 || i.gpus < i.nics || i.first_gpu < 0) {
      throw std::invalid_argument("load_network_graph: node " + std::to_string(n) + " has " + std::to_string(i.nics) + " NICs, " +
                                  std::to_string(i.gpus) + " GPUs from GPU " + std::to_string(i.first_gpu) +
                                  " (expected 1 <= NICs <= GPUs, first GPU >= 0)");
    }
  }
}

// Switch names to indices, and the messages for names that are none.
class SwitchIndex {
 public:
  explicit SwitchIndex(const std::vector<std::string>& names) : names_(names) {
    for (size_t i = 0; i < names.size(); ++i) index_.emplace(names[i], static_cast<int>(i));
  }
  // The switch called `name`, or -1 after an error at `key` of `r`.
  int find(FieldReader& r, std::string_view key, const std::string& name) const {
    if (const auto it = index_.find(name); it != index_.end()) return it->second;
    // Suggestions cost an edit distance per switch: only for messages that will be shown.
    const bool shown = r.diagnostics().size() < 50;
    r.error(key, in_quotes(name) + " is not a switch of this graph (switches: " + some_of(names_) + ")" +
                     (shown ? did_you_mean(name, names_) : ""));
    return -1;
  }

 private:
  const std::vector<std::string>& names_;
  std::map<std::string, int, std::less<>> index_;
};

// `switches`: names, each once; nullopt (the error said) when there are more than hetsim reads.
std::optional<std::vector<std::string>> read_switches(FieldReader& r) {
  std::vector<std::string> names = r.names("switches");
  if (static_cast<long>(names.size()) > kMaxSwitches) {
    r.error("switches", std::to_string(names.size()) + " switches; a graph has at most " + std::to_string(kMaxSwitches));
    return std::nullopt;
  }
  std::map<std::string, size_t, std::less<>> first;
  for (size_t i = 0; i < names.size(); ++i) {
    if (const auto [it, added] = first.emplace(names[i], i); !added) {
      r.error("switches", in_quotes(names[i]) + " is named twice (switches[" + std::to_string(it->second) + "] and switches[" +
                              std::to_string(i) + "])");
    }
  }
  return names;
}

// `links`: each cable becomes two simplex links, a->b then b->a. Absent: a graph of one switch.
std::vector<NetworkGraph::Link> read_links(FieldReader& r, const SwitchIndex& index) {
  std::vector<NetworkGraph::Link> links;
  if (!r.opt_node("links")) return links;
  std::set<std::string, std::less<>> used;
  std::map<std::string, int, std::less<>> next_suffix;  // base name -> the next "#k" to try
  const auto unique = [&](const std::string& base) {
    std::string name = base;
    for (int& k = next_suffix[base]; used.contains(name);) name = base + "#" + std::to_string(++k);
    used.insert(name);
    return name;
  };
  Diagnostics& diags = r.diagnostics();
  for (FieldReader& l : r.list("links")) {
    const size_t before = diags.size();
    const std::vector<std::string> ends = l.names("between");
    const bool ends_read = diags.size() == before;
    const double bandwidth_Bps = l.quantity("bandwidth", Unit::kRate, Bound::kLinkRate);
    const double latency_s = l.quantity("latency", Unit::kTime, Bound::kLatency);
    const long count = l.opt_integer("count", 1, kMaxCableCount).value_or(1);
    l.finish();
    if (!ends_read) continue;
    if (ends.size() != 2) {
      l.error("between", "names " + std::to_string(ends.size()) + (ends.size() == 1 ? " switch" : " switches") +
                             "; a cable joins two, e.g. [leaf0, spine0]");
      continue;
    }
    const int a = index.find(l, "between", ends[0]);
    const int b = index.find(l, "between", ends[1]);
    if (a >= 0 && a == b) l.error("between", "a link from " + ends[0] + " to itself; a cable joins two different switches");
    if (a < 0 || b < 0 || a == b) continue;
    const double rate_Bps = bandwidth_Bps * static_cast<double>(count);
    links.push_back({unique(ends[0] + "->" + ends[1]), a, b, rate_Bps, latency_s});
    links.push_back({unique(ends[1] + "->" + ends[0]), b, a, rate_Bps, latency_s});
  }
  return links;
}

// `attach`: fills `nic_switch` (indexed by nic_begin[node] + nic; -1 = not attached). Returns
// whether every entry was read without a problem.
bool read_attach(FieldReader& r, const SwitchIndex& index, const std::vector<GraphNodeInfo>& nodes,
                 const std::vector<int>& nic_begin, std::vector<int>& nic_switch) {
  Diagnostics& diags = r.diagnostics();
  const size_t before_all = diags.size();
  std::vector<FieldReader> entries = r.list("attach");
  std::vector<int> entry_of(nic_switch.size(), -1);  // which entry attached each NIC
  for (size_t i = 0; i < entries.size(); ++i) {
    FieldReader& e = entries[i];
    const size_t before = diags.size();
    const std::string spec = e.text("nodes");
    const bool spec_read = diags.size() == before;
    const std::optional<long> nic = e.opt_integer("nic", 0, 63);
    const std::string name = e.name("switch");
    e.finish();
    std::vector<int> listed;
    if (spec_read) {
      try {
        listed = parse_index_list(spec, static_cast<int>(nodes.size()), "node", "");
      } catch (const InputError& x) {
        e.error("nodes", x.diagnostics().front().message);
      }
    }
    const int s = name.empty() ? -1 : index.find(e, "switch", name);
    if (listed.empty() || s < 0) continue;
    if (nic) {
      std::vector<int> lacking;
      for (int n : listed) {
        if (nodes[n].nics <= *nic) lacking.push_back(n);
      }
      if (!lacking.empty()) {
        const int n = lacking.front();
        e.error("nic", indices_text("node", lacking) + (lacking.size() == 1 ? " has" : " have") + " no NIC " +
                           std::to_string(*nic) + " (node " + std::to_string(n) + " has " + counted(nodes[n].nics, "NIC") +
                           ", numbered from 0)");
        continue;
      }
    }
    std::vector<std::pair<int, int>> twice;  // (node, nic) attached by an earlier entry
    for (int n : listed) {
      const int lo = nic ? static_cast<int>(*nic) : 0;
      const int hi = nic ? lo + 1 : nodes[n].nics;
      for (int c = lo; c < hi; ++c) {
        const int slot = nic_begin[n] + c;
        if (nic_switch[slot] >= 0) {
          twice.emplace_back(n, c);
        } else {
          nic_switch[slot] = s;
          entry_of[slot] = static_cast<int>(i);
        }
      }
    }
    if (!twice.empty()) {
      const auto [n, c] = twice.front();
      const FieldReader& other = entries[entry_of[nic_begin[n] + c]];
      std::string message = "node " + std::to_string(n) + " NIC " + std::to_string(c) + " is attached twice: also by " +
                            other.path() + " (line " + std::to_string(other.locate("", "").line) + ")";
      if (const size_t more = twice.size() - 1; more > 0) {
        message += "; so " + std::string(more == 1 ? "is " : "are ") + counted(more, "more NIC") + " of this entry";
      }
      e.error("nodes", message);
    }
  }
  return diags.size() == before_all;
}

// Every NIC attached: the first kListed that are not, then how many more.
void check_all_attached(FieldReader& r, const std::vector<GraphNodeInfo>& nodes, const std::vector<int>& nic_begin,
                        const std::vector<int>& nic_switch) {
  size_t loose = 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (int c = 0; c < nodes[n].nics; ++c) {
      if (nic_switch[nic_begin[n] + c] >= 0) continue;
      if (++loose <= kListed) {
        r.error("attach", "node " + std::to_string(n) + " NIC " + std::to_string(c) + " (" +
                              indices_text("GPU", gpus_of_nic(nodes[n], c)) + ") is attached to no switch");
      }
    }
  }
  if (loose > kListed) {
    r.error("attach", "and " + counted(loose - kListed, "more NIC") + (loose - kListed == 1 ? " is" : " are") + " attached to no switch");
  }
}

// Attached switches that cannot reach each other: one error per group of mutually reachable
// attached switches after the first, naming the GPUs on each side.
// `reaches(from, to)`: whether switch `from` reaches attached switch `to`.
template <class Reaches>
void check_connected(FieldReader& r, const NetworkGraph& g, const std::vector<GraphNodeInfo>& nodes, const Reaches& reaches) {
  const int switches = static_cast<int>(g.switches().size());
  std::vector<int> group(switches, -1);  // attached switch -> its group
  int groups = 0;
  std::vector<int> attached_switches;
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (int c = 0; c < nodes[n].nics; ++c) attached_switches.push_back(g.attached(static_cast<int>(n), c));
  }
  std::sort(attached_switches.begin(), attached_switches.end());
  attached_switches.erase(std::unique(attached_switches.begin(), attached_switches.end()), attached_switches.end());
  for (int s : attached_switches) {
    if (group[s] >= 0) continue;
    group[s] = groups;
    for (int t : attached_switches) {
      if (group[t] < 0 && reaches(t, s)) group[t] = groups;
    }
    ++groups;
  }
  if (groups == 1) return;
  std::vector<std::vector<int>> gpus(groups), members(groups);
  std::vector<std::vector<std::string>> names(groups);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (int c = 0; c < nodes[n].nics; ++c) {
      const int k = group[g.attached(static_cast<int>(n), c)];
      const std::vector<int> more = gpus_of_nic(nodes[n], c);
      gpus[k].insert(gpus[k].end(), more.begin(), more.end());
      if (members[k].empty() || members[k].back() != static_cast<int>(n)) members[k].push_back(static_cast<int>(n));
    }
  }
  for (int s : attached_switches) names[group[s]].push_back(g.switches()[s]);
  const auto side = [&](int k) {
    return indices_text("GPU", gpus[k]) + " (" + indices_text("node", members[k]) + ", switch" +
           (names[k].size() == 1 ? " " : "es ") + some_of(names[k]) + ")";
  };
  for (int k = 1; k < groups; ++k) r.error("links", side(0) + " cannot reach " + side(k) + ": no path between the switches");
}

}  // namespace

int NetworkGraph::attached(int node, int nic) const {
  if (node < 0 || node + 1 >= static_cast<int>(nic_begin_.size()) || nic < 0 || nic >= nic_begin_[node + 1] - nic_begin_[node]) {
    throw std::out_of_range("NetworkGraph::attached: no NIC " + std::to_string(nic) + " of node " + std::to_string(node));
  }
  return nic_switch_[nic_begin_[node] + nic];
}

const int* NetworkGraph::hops_to(int to) const {
  if (to < 0 || to >= static_cast<int>(switches_.size()) || destination_[to] < 0) {
    throw std::logic_error("NetworkGraph: switch " + std::to_string(to) + " has no NIC attached: no route leads to it");
  }
  return hops_.data() + static_cast<size_t>(destination_[to]) * switches_.size();
}

NetworkGraph::Path NetworkGraph::path(int from, int to, std::uint64_t flow) const {
  const int* hops = hops_to(to);
  if (from < 0 || from >= static_cast<int>(switches_.size()) || hops[from] < 0) {
    throw std::logic_error("NetworkGraph::path: switch " + std::to_string(from) + " cannot reach switch " + std::to_string(to));
  }
  Path p;
  p.switches.push_back(from);
  std::uint64_t state = flow;
  for (int s = from; s != to;) {
    const auto first = out_links_.begin() + out_begin_[s];
    const auto last = out_links_.begin() + out_begin_[s + 1];
    const auto closer = [&](int l) { return hops[links_[l].to] == hops[s] - 1; };
    const auto candidates = static_cast<std::uint64_t>(std::count_if(first, last, closer));  // >= 1: hops[s] > 0
    std::uint64_t pick = splitmix64(state) % candidates;
    auto it = first;
    for (;; ++it) {
      if (closer(*it) && pick-- == 0) break;
    }
    const int l = *it;
    p.links.push_back(l);
    s = links_[l].to;
    p.switches.push_back(s);
  }
  return p;
}

double NetworkGraph::path_count(int from, int to) const {
  const int* hops = hops_to(to);
  if (from < 0 || from >= static_cast<int>(switches_.size())) {
    throw std::logic_error("NetworkGraph::path_count: no switch " + std::to_string(from));
  }
  if (hops[from] < 0) return 0;
  // Ways to reach `to` from each switch, nearest switches first.
  std::vector<int> order;
  for (int s = 0; s < static_cast<int>(switches_.size()); ++s) {
    if (hops[s] > 0 && hops[s] <= hops[from]) order.push_back(s);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return hops[a] < hops[b]; });
  std::vector<double> ways(switches_.size(), 0.0);
  ways[to] = 1;
  for (int s : order) {
    for (int i = out_begin_[s]; i < out_begin_[s + 1]; ++i) {
      const int next = links_[out_links_[i]].to;
      if (hops[next] == hops[s] - 1) ways[s] = std::min(kPathCountCap, ways[s] + ways[next]);
    }
  }
  return ways[from];
}

void NetworkGraph::index_routes() {
  const int switches = static_cast<int>(switches_.size());
  out_begin_.assign(switches + 1, 0);
  for (const Link& l : links_) ++out_begin_[l.from + 1];
  for (int s = 0; s < switches; ++s) out_begin_[s + 1] += out_begin_[s];
  out_links_.resize(links_.size());
  std::vector<int> cursor(out_begin_.begin(), out_begin_.end() - 1);
  for (int l = 0; l < static_cast<int>(links_.size()); ++l) out_links_[cursor[links_[l].from]++] = l;

  destination_.assign(switches, -1);
  for (int s : nic_switch_) destination_[s] = 0;
  int attached_count = 0;
  for (int& k : destination_) {
    if (k == 0) k = attached_count++;
  }
  // Hops to an attached switch t, found from t: every cable is two links, one each way, so the
  // hop count from t to s is the one from s to t.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph graph(static_cast<Graph::vertices_size_type>(switches));
  for (const Link& l : links_) boost::add_edge(static_cast<Graph::vertex_descriptor>(l.from), static_cast<Graph::vertex_descriptor>(l.to), graph);
  std::vector<boost::default_color_type> colors(switches_.size());
  const auto vertex_index = boost::get(boost::vertex_index, graph);
  const auto color_map = boost::make_iterator_property_map(colors.begin(), vertex_index);
  hops_.assign(static_cast<size_t>(attached_count) * switches_.size(), -1);
  for (int t = 0; t < switches; ++t) {
    if (destination_[t] < 0) continue;
    int* row = hops_.data() + static_cast<size_t>(destination_[t]) * switches_.size();
    row[t] = 0;
    const auto hop_map = boost::make_iterator_property_map(row, vertex_index);
    boost::breadth_first_search(
        graph, boost::vertex(static_cast<Graph::vertices_size_type>(t), graph),
        boost::visitor(boost::make_bfs_visitor(boost::record_distances(hop_map, boost::on_tree_edge()))).color_map(color_map));
  }
}

NetworkGraph load_network_graph(const std::filesystem::path& file, const std::vector<GraphNodeInfo>& nodes) {
  check_node_infos(nodes);
  const YamlFile yaml = YamlFile::load(file);
  Diagnostics diags;
  FieldReader r = yaml.root(diags);
  NetworkGraph g;
  std::optional<std::vector<std::string>> switches = read_switches(r);
  if (!switches) diags.throw_if_any();  // too many to read: said once, not once more by every cable naming one
  g.switches_ = std::move(*switches);
  const SwitchIndex index(g.switches_);
  g.links_ = read_links(r, index);
  g.nic_begin_.assign(nodes.size() + 1, 0);
  for (size_t n = 0; n < nodes.size(); ++n) g.nic_begin_[n + 1] = g.nic_begin_[n] + nodes[n].nics;
  g.nic_switch_.assign(static_cast<size_t>(g.nic_begin_.back()), -1);
  if (read_attach(r, index, nodes, g.nic_begin_, g.nic_switch_)) check_all_attached(r, nodes, g.nic_begin_, g.nic_switch_);
  r.finish();
  diags.throw_if_any();

  std::vector<int> attached_switches = g.nic_switch_;
  std::sort(attached_switches.begin(), attached_switches.end());
  const auto attached = static_cast<size_t>(std::unique(attached_switches.begin(), attached_switches.end()) - attached_switches.begin());
  if (attached * g.switches_.size() > kMaxRoutingEntries) {
    r.error("attach", "NICs are attached to " + std::to_string(attached) + " of the " + std::to_string(g.switches_.size()) +
                          " switches: routing would keep " + std::to_string(attached * g.switches_.size()) +
                          " hop counts (one per attached switch and switch), over the " + std::to_string(kMaxRoutingEntries) +
                          " hetsim keeps (256 MiB)");
    diags.throw_if_any();
  }
  g.index_routes();
  check_connected(r, g, nodes, [&g](int from, int to) { return g.hops_to(to)[from] >= 0; });
  diags.throw_if_any();
  int longest = 0, far_from = -1, far_to = -1;  // the longest route between two attached switches
  for (size_t i = 0; i < attached; ++i) {
    const int* row = g.hops_to(attached_switches[i]);
    for (size_t j = 0; j < attached; ++j) {
      if (row[attached_switches[j]] > longest) {
        longest = row[attached_switches[j]];
        far_from = attached_switches[j];
        far_to = attached_switches[i];
      }
    }
  }
  if (longest > kMaxRouteHops) {
    r.error("links", "the shortest route from switch \"" + g.switches_[far_from] + "\" to \"" + g.switches_[far_to] +
                         "\" (both with NICs attached) takes " + std::to_string(longest) + " hops; hetsim routes at most " +
                         std::to_string(kMaxRouteHops) + " (the fabrics built take a few: a three-tier fat tree 4)");
    diags.throw_if_any();
  }
  return g;
}

}  // namespace hetsim
