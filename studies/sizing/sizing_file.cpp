// File: studies/sizing/sizing_file.cpp
#include "studies/sizing/sizing_file.hpp"

#include <algorithm>
#include <cmath>

#include "base/data_dir.hpp"
#include "base/iso_date.hpp"
#include "base/temp_dir.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "base/yaml_reader.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {
namespace {

constexpr long kMaxNodesPerOffer = 100000;

// A rent: "31.5USD/h", or a bare price read per hour ("2000USD" for rent_per_hour).
std::optional<double> money_per_s(FieldReader& r, std::string_view key, bool bare_is_per_hour) {
  const std::optional<std::string> text = r.opt_text(key);
  if (!text) return std::nullopt;
  ParsedQuantity q = parse_quantity(*text, Unit::kMoneyRate);
  if (!q.ok() && bare_is_per_hour) {
    const ParsedQuantity per_hour = parse_quantity(*text, Unit::kMoney);
    if (per_hour.ok()) q = {per_hour.value / 3600.0, {}};
  }
  if (!q.ok()) {
    r.error(key, q.error);
    return std::nullopt;
  }
  if (!(q.value > 0)) {
    r.error(key, "must be positive");
    return std::nullopt;
  }
  return q.value;
}

Offer read_offer(FieldReader& o) {
  Offer offer;
  offer.where = o.locate("", "");
  offer.name = o.name("name");
  if (std::optional<YAML::Node> node = o.opt_node("node")) {
    if (!node->IsMap()) {
      o.error("node", "expected the node type's fields: {gpu: ..., gpus_per_node: ..., intra_node: {...}, nic: {...}}");
    } else {
      for (const char* own : {"name", "count"}) {
        if ((*node)[own]) o.error("node", std::string(own) + " comes from the offer (its name) and the sizing (how many), not the node");
      }
      offer.node = YAML::Clone(*node);
    }
    offer.where = o.locate("node", "");
  } else {
    o.error("node", "missing: the node type offered ({gpu: ..., gpus_per_node: ..., intra_node: {...}, nic: {...}})");
  }
  const size_t problems = o.diagnostics().size();
  offer.price_usd = o.opt_quantity("price", Unit::kMoney);
  offer.rent_usd_per_s = money_per_s(o, "rent", false);
  // (A price or rent already refused, e.g. 0USD, is not also "neither".)
  if (o.diagnostics().size() == problems && offer.price_usd.has_value() == offer.rent_usd_per_s.has_value()) {
    o.error_here("an offer has a price (to buy, e.g. 300000USD) or a rent (e.g. 31.5USD/h), not both; list two offers for both");
  }
  offer.power_w = o.quantity("power", Unit::kPower);
  {
    // A node draws 50 W to 3 kW per GPU (a P100 board 250 W; a GB200 rack about 1.7 kW per GPU
    // with its CPUs and switches): outside that the figure is a typo or a wrong unit.
    long gpus = 64;  // the most a node type may have, until the node says
    if (offer.node && offer.node["gpus_per_node"] && offer.node["gpus_per_node"].IsScalar()) {
      try {
        gpus = std::clamp(offer.node["gpus_per_node"].as<long>(), 1L, 64L);
      } catch (const YAML::Exception&) {  // the cluster check names it
      }
    }
    const double g = static_cast<double>(gpus);
    if (offer.power_w > 0 && (offer.power_w < 50 * g || offer.power_w > 3000 * g)) {
      o.error("power", format_double("%g", offer.power_w) + " W is outside 50 W to 3 kW per GPU for a node of " + std::to_string(gpus) +
                           " GPUs (" + format_double("%g", 50 * g) + " to " + format_double("%g", 3000 * g) + " W)");
    }
  }
  offer.source = o.text("source");
  if (is_blank(offer.source)) o.error("source", "say where the price and power come from, with a date");
  offer.date = o.opt_text("date").value_or("");
  if (std::string why = offer.date.empty() ? "" : iso_date_problem(offer.date); !why.empty()) o.error("date", in_quotes(offer.date) + why);
  offer.min_count = o.opt_integer("min_count", 0, kMaxNodesPerOffer).value_or(0);
  offer.max_count = o.opt_integer("max_count", 1, kMaxNodesPerOffer).value_or(-1);  // 0: an offer never taken
  offer.count_step = o.opt_integer("count_step", 1, kMaxNodesPerOffer).value_or(1);
  o.finish();
  return offer;
}

std::vector<Offer> read_offers(FieldReader& r, const std::filesystem::path& folder, std::string& offers_file) {
  std::vector<Offer> offers;
  const std::optional<YAML::Node> node = r.opt_node("offers");
  if (node && node->IsScalar()) {  // a separate offers file
    const std::filesystem::path p(node->Scalar());
    const std::filesystem::path file = p.is_absolute() ? p : folder / p;
    std::error_code ec;
    if (p.empty() || !std::filesystem::is_regular_file(file, ec)) {
      r.error("offers", in_quotes(node->Scalar()) + " is not a file (an offers file's path is relative to the sizing file's folder)");
      return offers;
    }
    const YamlFile f = YamlFile::load(file);
    offers_file = f.name();
    Diagnostics diags;
    FieldReader root = f.root(diags);
    (void)root.opt_text("note");
    for (FieldReader& o : root.list("offers")) offers.push_back(read_offer(o));
    root.finish();
    diags.throw_if_any();
  } else {
    for (FieldReader& o : r.list("offers")) offers.push_back(read_offer(o));
  }
  for (size_t i = 0; i < offers.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (offers[i].name == offers[j].name) {
        Diagnostic d = offers[i].where;
        d.field = "offers[" + std::to_string(i) + "].name";
        d.message = in_quotes(offers[i].name) + " is offered twice (also offers[" + std::to_string(j) + "])";
        r.diagnostics().add(d);
      }
    }
  }
  return offers;
}

// Each offer's node checked as a node type of a cluster (one node of every offer); fills the GPU.
void check_nodes(Sizing& s, const Diagnostic& network_at) {
  std::vector<long> ones(s.offers.size(), 1);
  const TempDir scratch("sizing-probe");
  const std::filesystem::path probe = scratch.new_file("probe", ".yaml", mix_cluster_yaml(s, ones, "probe"));
  try {
    const Cluster c = load_cluster(probe);
    for (size_t i = 0; i < s.offers.size(); ++i) {
      s.offers[i].gpu = c.node_types[i].gpu;
      s.offers[i].gpus_per_node = c.node_types[i].gpus_per_node;
    }
  } catch (const InputError& e) {
    std::vector<Diagnostic> out;
    for (Diagnostic d : e.diagnostics()) {
      if (d.file != probe.string()) {  // a device file's own problem
        out.push_back(d);
        continue;
      }
      const std::string prefix = "node_types[";
      if (d.field.rfind(prefix, 0) == 0) {
        const size_t close = d.field.find(']');
        const size_t k = std::stoul(d.field.substr(prefix.size(), close - prefix.size()));
        const Offer& o = s.offers.at(k);
        d.field = "offers[" + std::to_string(k) + "].node" + d.field.substr(close + 1);
        d.file = o.where.file;
        d.line = o.where.line;
        d.column = o.where.column;
      } else {
        d.file = network_at.file;
        d.line = network_at.line;
        d.column = network_at.column;
      }
      out.push_back(d);
    }
    throw InputError(out);
  }
}

// The largest count the budget allows for each offer alone; an offer nothing bounds is an error.
void bound_counts(Sizing& s, Diagnostics& diags) {
  for (size_t i = 0; i < s.offers.size(); ++i) {
    Offer& o = s.offers[i];
    double most = o.max_count >= 0 ? static_cast<double>(o.max_count) : INFINITY;
    std::string bound = "max_count";  // what sets `most`, as the messages below say it
    const auto limit = [&](double n, std::string why) {
      if (n < most) most = n, bound = std::move(why);
    };
    if (o.price_usd && s.budget_capex_usd) {
      limit(std::floor(*s.budget_capex_usd / *o.price_usd * (1 + 1e-12)),
            "budget.capex (" + format_money(*s.budget_capex_usd) + "; a node costs " + format_money(*o.price_usd) + ")");
    }
    if (o.rent_usd_per_s && s.budget_rent_usd_per_s) {
      limit(std::floor(*s.budget_rent_usd_per_s / *o.rent_usd_per_s * (1 + 1e-12)),
            "budget.rent_per_hour (" + format_money(*s.budget_rent_usd_per_s * 3600) + "/h; a node rents at " +
                format_money(*o.rent_usd_per_s * 3600) + "/h)");
    }
    if (s.budget_power_w) {
      limit(std::floor(*s.budget_power_w / o.power_w * (1 + 1e-12)),
            "budget.power (" + format_double("%g", *s.budget_power_w) + " W; a node draws " + format_double("%g", o.power_w) + " W)");
    }
    Diagnostic d = o.where;
    d.field = "offers[" + std::to_string(i) + "]";
    if (!std::isfinite(most)) {
      d.message = "nothing bounds how many " + in_quotes(o.name) + " nodes to take: give max_count, or a budget that prices it (" +
                  (o.price_usd ? "capex" : "rent_per_hour") + " or power)";
      diags.add(d);
      continue;
    }
    o.max_count = static_cast<long>(std::min(most, static_cast<double>(kMaxNodesPerOffer)));
    if (o.min_count > o.max_count) {
      d.message = "min_count " + std::to_string(o.min_count) + " is more than the " + std::to_string(o.max_count) +
                  " nodes that " + bound + " allows";
      diags.add(d);
    } else if (o.max_count < o.count_step) {
      d.message = "count_step " + std::to_string(o.count_step) + " nodes is more than the " + std::to_string(o.max_count) +
                  " that " + bound + " allows: no mix can take this offer";
      diags.add(d);
    }
  }
}

}  // namespace

std::string_view objective_name(Objective o) {
  switch (o) {
    case Objective::kTimeToTrain: return "time_to_train";
    case Objective::kCost: return "cost";
    case Objective::kCostPerToken: return "cost_per_token";
    case Objective::kEnergy: return "energy";
  }
  return "";
}

Sizing load_sizing(const std::filesystem::path& path) {
  const YamlFile file = YamlFile::load(path);
  Diagnostics diags;
  FieldReader r = file.root(diags);
  Sizing s;
  s.file = file.name();
  s.offers_file = file.name();
  s.name = r.opt_node("name") ? r.name("name") : path.stem().string();
  s.model = beside(path, r.text("model"));
  const size_t problems = r.diagnostics().size();
  const std::optional<double> tokens = r.opt_quantity("train_tokens", Unit::kCount);
  const std::optional<double> samples = r.opt_quantity("train_samples", Unit::kCount);
  if (r.diagnostics().size() == problems && tokens.has_value() == samples.has_value()) {
    r.error("train_tokens", "give how much the model trains on: train_tokens (e.g. 1T) or train_samples, one of them");
  }
  s.train_tokens = tokens.value_or(0);
  s.train_samples = samples.value_or(0);
  if (std::optional<YAML::Node> obj = r.opt_node("objective")) {
    const std::vector<std::string> costs{"cost", "cost_per_token", "energy"};
    std::string second;
    if (!obj->IsSequence() || obj->size() != 2 || !(*obj)[0].IsScalar() || !(*obj)[1].IsScalar() ||
        (*obj)[0].Scalar() != "time_to_train") {
      r.error("objective", "expected [time_to_train, X] with X one of: cost, cost_per_token, energy");
    } else if (second = (*obj)[1].Scalar(); second == "cost") {
      s.cost_objective = Objective::kCost;
    } else if (second == "cost_per_token") {
      s.cost_objective = Objective::kCostPerToken;
    } else if (second == "energy") {
      s.cost_objective = Objective::kEnergy;
    } else {
      r.error("objective", in_quotes(second) + " is not one of: cost, cost_per_token, energy" + did_you_mean(second, costs));
    }
  }
  if (std::optional<FieldReader> b = r.opt_child("budget")) {
    s.budget_capex_usd = b->opt_quantity("capex", Unit::kMoney);
    s.budget_rent_usd_per_s = money_per_s(*b, "rent_per_hour", true);
    s.budget_power_w = b->opt_quantity("power", Unit::kPower);
    b->finish();
  }
  s.offers = read_offers(r, path.parent_path(), s.offers_file);
  Diagnostic network_at = r.locate("network", "");
  network_at.file = s.file;
  if (std::optional<YAML::Node> n = r.opt_node("network")) {
    s.network = YAML::Clone(*n);
    s.network_given = true;
    if (n->IsMap() && (*n)["topology"] && (*n)["topology"].IsScalar() && (*n)["topology"].Scalar() == "graph") {
      r.error("network", "a graph network names nodes by index, and a sizing varies how many there are: give a topology "
                         "of rules (fat-tree, clos3, rail-optimized, single-switch)");
    }
  } else {
    s.network = YAML::Load("{topology: fat-tree, oversubscription: 1, switch_latency: 1us}");
  }
  bool buys = false;
  for (const Offer& o : s.offers) buys = buys || o.price_usd.has_value();
  if (std::optional<FieldReader> e = r.opt_child("energy")) {
    s.energy_usd_per_j = e->quantity("price", Unit::kEnergyPrice);
    s.pue = e->number("pue", 1.0, 3.0);
    e->finish();
  } else if (buys) {
    r.error("energy", "offers to buy need energy: {price: 0.12USD/kWh, pue: 1.3} (rented nodes' energy is in their rent)");
  }
  if (std::optional<double> a = r.opt_quantity("amortization", Unit::kTime)) {
    s.amortization_s = *a;
  } else if (buys && !r.opt_node("amortization")) {  // (one that is there but wrong is said at itself)
    r.error("amortization", "offers to buy need the time their price is spread over, e.g. 4y");
  }
  if (std::optional<FieldReader> rel = r.opt_child("reliability")) {
    Reliability x;
    // Up to one failure a day per GPU: past it no run of any size gets anywhere.
    if (auto v = rel->opt_number("gpu_failures_per_year", 0, 365)) x.gpu_failures_per_year = *v;
    if (auto v = rel->opt_number("node_failures_per_year", 0, 365)) x.node_failures_per_year = *v;
    // As cluster links: under 1 MB/s no storage a training job checkpoints to is that slow.
    x.checkpoint_write_Bps = rel->opt_quantity_at_least("checkpoint_write", Unit::kRate, 1e6, "1MBps");
    if (auto v = rel->opt_quantity("restart", Unit::kTime)) {
      if (*v > kMaxRestartS) {
        rel->error("restart", format_time(*v) + " is longer than a restart takes (detect the failure, reschedule, reload); "
                              "expected at most 7d");
      }
      x.restart_s = *v;
      x.restart_given = true;
    }
    rel->finish();
    s.reliability = x;
  }
  if (std::optional<YAML::Node> f = r.opt_node("flags")) {
    const Diagnostic at = r.locate("flags", "");
    s.flags_line = at.line;
    s.flags_column = at.column;
    if (!f->IsSequence()) r.error("flags", "expected a list of planner switches, e.g. [--no-zero1]");
    for (size_t i = 0; f->IsSequence() && i < f->size(); ++i) {
      if (!(*f)[i].IsScalar()) {
        r.error("flags", "every entry is one word of a hetsim plan command line");
        continue;
      }
      const std::string word = (*f)[i].Scalar();
      const std::string name = word.substr(0, word.find('='));
      // What a --set names: after its '=', or the next word.
      const std::string set_path = name != "--set" ? ""
                                   : word.size() > name.size() ? word.substr(name.size() + 1)
                                   : i + 1 < f->size() && (*f)[i + 1].IsScalar() ? (*f)[i + 1].Scalar() : "";
      if (set_path.starts_with("cluster.") || set_path.starts_with("cluster[")) {
        r.error("flags", "entry " + std::to_string(i + 1) + " (--set " + set_path.substr(0, set_path.find('=')) +
                             ") would change every mix's cluster alike, which the sizing builds from its offers and counts; "
                             "edit the offers or the sizing's fields instead");
      } else if (std::any_of(word.begin(), word.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
        r.error("flags", "entry " + std::to_string(i + 1) + " holds a control character (a NUL, tab or line break): one printable word each");
      } else if (name == "--cluster" || name == "--model" || (word.size() >= 2 && word[0] == '-' && (word[1] == 'c' || word[1] == 'm'))) {
        r.error("flags", "the sizing gives every plan its model and each mix's cluster; leave " +
                             (name.starts_with("--") ? name : word.substr(0, 2)) + " out");
      } else {
        s.flags.push_back(word);
      }
    }
  }
  r.finish();
  bound_counts(s, diags);
  diags.throw_if_any();
  check_nodes(s, network_at);
  return s;
}

std::string mix_cluster_yaml(const Sizing& s, const std::vector<long>& counts, const std::string& name) {
  YAML::Node root;
  root["name"] = name;
  YAML::Node types(YAML::NodeType::Sequence);
  for (size_t i = 0; i < s.offers.size(); ++i) {
    if (counts[i] <= 0) continue;
    YAML::Node t;
    t["name"] = s.offers[i].name;
    t["count"] = counts[i];
    for (auto it = s.offers[i].node.begin(); it != s.offers[i].node.end(); ++it) t[it->first.Scalar()] = YAML::Clone(it->second);
    types.push_back(t);
  }
  root["node_types"] = types;
  root["network"] = YAML::Clone(s.network);
  YAML::Emitter e;
  e << root;
  return std::string(e.c_str()) + "\n";
}

}  // namespace hetsim
