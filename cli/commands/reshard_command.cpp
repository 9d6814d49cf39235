// File: cli/commands/reshard_command.cpp
#include "cli/commands/reshard_command.hpp"

#include <CLI/CLI.hpp>

#include <charconv>

#include "base/input_error.hpp"
#include "base/text.hpp"
#include "base/device_list.hpp"
#include "base/data_dir.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "cli/output/reshard_summary.hpp"
#include "planner/resharding/reshard_case.hpp"
#include "sim/executor.hpp"
#include "sim/trace.hpp"

namespace hetsim::cli {
namespace {

// Element sizes of the formats a tensor may be given in (int32: the paper's microbenchmarks).
const std::vector<std::pair<std::string, double>> kElementBytes{
    {"fp64", 8}, {"fp32", 4}, {"int32", 4}, {"tf32", 4}, {"fp16", 2}, {"bf16", 2}, {"fp8", 1}, {"int8", 1}};

std::vector<std::string> dtype_names() {
  std::vector<std::string> out;
  for (const auto& [n, b] : kElementBytes) out.push_back(n);
  return out;
}

long parse_positive(std::string_view s, const std::string& option, const std::string& whole) {
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 1) {
    throw InputError(option, "", "\"" + whole + "\": \"" + std::string(s) + "\" is not a positive whole number");
  }
  return v;
}

// "1024x1024x512" -> {1024, 1024, 512}.
std::vector<long> parse_dims(const std::string& text, const std::string& option) {
  std::vector<long> out;
  std::string_view rest = text;
  if (rest.empty()) throw InputError(option, "", "missing; write sizes joined by x, e.g. 1024x1024x512");
  while (true) {
    const size_t x = rest.find('x');
    out.push_back(parse_positive(rest.substr(0, x), option, text));
    if (x == std::string_view::npos) break;
    rest = rest.substr(x + 1);
  }
  return out;
}

Mesh parse_mesh(const std::string& devices, const std::string& shape, const std::string& which, int gpus) {
  Mesh m;
  m.devices = parse_device_list(devices, gpus, "--" + which);
  const std::vector<long> hg = parse_dims(shape, "--" + which + "-shape");
  if (hg.size() != 2) throw InputError("--" + which + "-shape", "", "\"" + shape + "\" is not HOSTSxGPUS, e.g. 2x4");
  if (hg[0] > gpus || hg[1] > gpus) {
    throw InputError("--" + which + "-shape", "", "\"" + shape + "\" is larger than the cluster's " + std::to_string(gpus) + " GPUs");
  }
  m.hosts = static_cast<int>(hg[0]);
  m.gpus_per_host = static_cast<int>(hg[1]);
  return m;
}

ShardingSpec parse_spec(const std::string& text, const std::string& option) {
  ShardingSpec spec;
  if (std::string why = parse_sharding_spec(text, spec); !why.empty()) throw InputError(option, "", why);
  return spec;
}


}  // namespace

void add_reshard_options(CLI::App* cmd, ReshardArgs& a) {
  cmd->add_option("--cluster,-c", a.cluster, "cluster: a YAML path or a shipped name")->capture_default_str();
  cmd->add_option("--src", a.src, "source mesh GPUs, host by host: indices and ranges like 0-3,4-7")->required();
  cmd->add_option("--src-shape", a.src_shape, "source mesh HOSTSxGPUS, e.g. 2x4")->required();
  cmd->add_option("--src-spec", a.src_spec, "source layout, one entry per dimension: R, S0, S1, S01 (e.g. S0,R,R)")->required();
  cmd->add_option("--dst", a.dst, "destination mesh GPUs, disjoint from the source")->required();
  cmd->add_option("--dst-shape", a.dst_shape, "destination mesh HOSTSxGPUS")->required();
  cmd->add_option("--dst-spec", a.dst_spec, "destination layout")->required();
  cmd->add_option("--tensor", a.tensor, "tensor shape, e.g. 1024x1024x512")->required();
  cmd->add_option("--dtype", a.dtype, "element type")->check(CLI::IsMember(dtype_names()))->capture_default_str();
  cmd->add_option("--method", a.method, "send-recv | local-all-gather | broadcast | signal")
      ->check(CLI::IsMember({"send-recv", "local-all-gather", "broadcast", "signal"}))
      ->capture_default_str();
  cmd->add_option("--load-balance", a.load_balance, "sender choice: none | gpu | nic | order (sender and order)")
      ->check(CLI::IsMember({"none", "gpu", "nic", "order"}))
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "seed of the order search's randomised greedy")->check(at_least(0))->capture_default_str();
  cmd->add_option("--budget", a.budget_s, "wall-clock cap of the order search, seconds")->check(finite_range(0.0, 3600.0))->capture_default_str();
  cmd->add_option("--max-expansions", a.max_expansions, "node budget of the order search (deterministic)")
      ->check(CLI::Range(0L, 1000000000L))
      ->capture_default_str();
  cmd->add_option("--report", a.report, "write the result JSON here")->check(output_file());
  cmd->add_option("--trace", a.trace, "write a Chrome trace (with link utilisation) here")->check(output_file());
}

int run_reshard(const ReshardArgs& a) {
  check_paths_apart({{"--report", a.report}, {"--trace", a.trace}}, {{"the cluster", resolve_input(a.cluster, "topologies", "cluster").string()}});
  const Cluster cluster = load_cluster_arg(a.cluster);
  const int gpus = cluster.gpu_count();
  ReshardCase c;
  c.src = parse_mesh(a.src, a.src_shape, "src", gpus);
  c.dst = parse_mesh(a.dst, a.dst_shape, "dst", gpus);
  c.src_spec = parse_spec(a.src_spec, "--src-spec");
  c.dst_spec = parse_spec(a.dst_spec, "--dst-spec");
  c.tensor = parse_dims(a.tensor, "--tensor");
  for (const auto& [n, b] : kElementBytes) {
    if (n == a.dtype) c.element_bytes = b;
  }
  c.method = *method_from_name(a.method);
  c.balance = *load_balance_from_name(a.load_balance);
  c.order.seed = a.seed;
  c.order.budget_s = a.budget_s;
  c.order.max_expansions = a.max_expansions;
  if (const std::vector<ReshardProblem> problems = check_reshard_case(c, cluster); !problems.empty()) {
    std::vector<Diagnostic> d;
    for (const ReshardProblem& p : problems) d.push_back({"--" + p.field, 0, 0, "", p.message});
    throw InputError(std::move(d));
  }
  double elements = 1;
  for (long s : c.tensor) elements *= static_cast<double>(s);
  if (elements * c.element_bytes > 1e15) throw InputError("--tensor", "", "\"" + a.tensor + "\" is over a petabyte");

  const ReshardOutcome r = build_reshard(c, cluster);
  SimOptions opts;
  opts.record_flows = !a.trace.empty();
  const SimResult sim = simulate(r.program, cluster, opts);
  const double t = sim.iteration_time_s;
  const ReshardLabels labels{a.dtype, a.tensor, a.src, a.src_shape, a.dst, a.dst_shape, a.method, a.load_balance, a.seed};
  print_reshard(labels, c, r, cluster, t);
  if (!a.report.empty()) write_file(a.report, reshard_json(labels, c, r, cluster, t).dump(2) + "\n", "--report");
  if (!a.trace.empty()) write_file_with(a.trace, "--trace", [&](std::ostream& out) { write_chrome_trace(out, r.program, cluster, sim); });
  return 0;
}

}  // namespace hetsim::cli
