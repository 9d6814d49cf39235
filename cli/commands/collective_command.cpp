// File: cli/commands/collective_command.cpp
#include "cli/commands/collective_command.hpp"

#include <CLI/CLI.hpp>

#include <cctype>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/input_error.hpp"
#include "base/log.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "base/data_dir.hpp"
#include "base/device_list.hpp"
#include "base/field_override.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "cli/output/link_fractions.hpp"
#include "sim/collective.hpp"
#include "sim/executor.hpp"
#include "sim/trace.hpp"

namespace hetsim::cli {
namespace {

std::vector<double> parse_sizes(const std::string& spec) {
  const size_t colon = spec.find(':');
  auto one = [&](const std::string& s) {
    // A plain number is bytes, as nccl-tests' -b and -e take a count (1e9 too: it is read, and
    // then held to the limits below, rather than told it lacks a unit).
    const bool plain = !s.empty() && s.size() <= 32 && std::isdigit(static_cast<unsigned char>(s.front())) &&
                       std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; });
    double value = 0;
    if (plain) {
      char* end = nullptr;
      value = std::strtod(s.c_str(), &end);
      if (end != s.c_str() + s.size() || !std::isfinite(value)) {
        throw InputError("--size", "", "\"" + s + "\" is neither a byte count nor a size with its unit (e.g. 1GiB)");
      }
    } else {
      const ParsedQuantity q = parse_quantity(s, Unit::kBytes);
      if (!q.ok()) throw InputError("--size", "", q.error);
      value = q.value;
    }
    if (const std::string problem = collective_size_problem(value); !problem.empty()) {
      throw InputError("--size", "", "\"" + s + "\" " + problem);
    }
    return value;
  };
  if (colon == std::string::npos) return {one(spec)};
  const double first = one(spec.substr(0, colon)), last = one(spec.substr(colon + 1));
  if (last < first) throw InputError("--size", "", "\"" + spec + "\": the last size is smaller than the first");
  std::vector<double> out;
  for (double s = first; s <= last * (1 + 1e-12); s *= 2) out.push_back(s);
  return out;
}

std::vector<int> parse_group(const std::string& spec, int gpus) {
  std::vector<int> out = parse_device_list(spec, gpus, "--group");
  if (out.size() < 2) throw InputError("--group", "", "a collective needs at least 2 GPUs");
  return out;
}

}  // namespace

void add_collective_options(CLI::App* cmd, CollectiveArgs& a) {
  cmd->add_option("--cluster,-c", a.cluster, "cluster: a YAML path or a shipped name")->capture_default_str();
  cmd->add_option("--op", a.op, "collective")->check(CLI::IsMember(collective_names()))->capture_default_str();
  cmd->add_option("--size", a.size, "bytes per the nccl-tests convention; FIRST:LAST sweeps, doubling")->capture_default_str();
  cmd->add_option("--algorithm", a.algorithm, "how the bytes move (docs/microbenchmarks.md); auto: the fastest estimate, PXN where NCCL takes it")->check(CLI::IsMember(algorithm_names()))->capture_default_str();
  cmd->add_option("--group", a.group, "GPUs taking part: all, or indices and ranges like 0-7,16")->capture_default_str();
  cmd->add_option("--root", a.root, "broadcast/reduce root (default: the group's first GPU)")->check(at_least(0));
  cmd->add_option("--fidelity", a.fidelity, "collective fidelity")->check(CLI::IsMember({"phase", "step"}))->capture_default_str();
  cmd->add_option("--report", a.report, "write the results JSON here")->check(output_file());
  cmd->add_option("--trace", a.trace, "write a Chrome trace of the largest size here (with link utilisation)")->check(output_file());
  add_calibration_option(cmd, a.calibration);  // a profile's nic_time_excess, intra_time_excess and collective_latency
  cmd->add_option("--set", a.sets, "edit a field of the cluster before it is read (repeatable): cluster.node_types[*].nic.bandwidth=800Gbps")
      ->expected(1)
      ->take_all();
}

int run_collective(const CollectiveArgs& a) {
  std::vector<std::pair<std::string, std::string>> inputs = calibration_input(a.calibration);
  inputs.emplace_back("the cluster", resolve_input(a.cluster, "topologies", "cluster").string());
  check_paths_apart({{"--report", a.report}, {"--trace", a.trace}}, inputs);
  use_calibration(a.calibration);  // before the cluster's devices are loaded
  const Cluster cluster = load_cluster_arg(a.cluster, parse_overrides(a.sets, {"cluster"}));  // (a collective has no model)
  const std::vector<double> sizes = parse_sizes(a.size);
  const std::vector<int> group = parse_group(a.group, cluster.gpu_count());
  CollectiveTask task = collective(*collective_from_name(a.op), group, 0);
  task.algorithm = *algorithm_from_name(a.algorithm);  // CLI11 checked the names
  if (a.root >= 0 && task.op != CollectiveOp::kBroadcast && task.op != CollectiveOp::kReduce) {
    throw InputError("--root", "", "only a broadcast or a reduce has a root, not " + std::string(collective_name(task.op)));
  }
  task.root = a.root >= 0 ? a.root : group.front();
  if (std::find(group.begin(), group.end(), task.root) == group.end()) {
    throw InputError("--root", "", "GPU " + std::to_string(task.root) + " is not in the group");
  }
  if (const std::string why = unsupported_reason(task, task.algorithm, cluster); !why.empty()) {
    throw InputError("--algorithm", "", a.algorithm + " cannot run " + a.op + " here: " + why);
  }
  SimOptions opts;
  opts.fidelity = a.fidelity == "step" ? Fidelity::kStep : Fidelity::kPhase;
  const Fabric fabric(cluster);
  const int n = static_cast<int>(group.size());

  std::cout << "hetsim collective: " << a.op << " over " << n << " GPUs of " << cluster.name << " (" << a.algorithm
            << " algorithm, " << a.fidelity << " fidelity)\n\n";
  // nccl-tests' columns (one set: a simulated run has no in-place difference and no wrong values;
  // the count is of 4-byte floats), then the algorithm hetsim ran.
  const bool sums = task.op == CollectiveOp::kAllReduce || task.op == CollectiveOp::kReduce || task.op == CollectiveOp::kReduceScatter;
  const bool rooted = task.op == CollectiveOp::kBroadcast || task.op == CollectiveOp::kReduce;
  std::printf("#%13s %13s %6s %6s %6s %10s %8s %8s  %s\n", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "algorithm");
  std::printf("#%13s %13s %6s %6s %6s %10s %8s %8s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)");
  nlohmann::json results = nlohmann::json::array();
  for (size_t i = 0; i < sizes.size(); ++i) {
    task.size_bytes = sizes[i];
    const std::string algorithm(algorithm_name(choose_algorithm(task, cluster, fabric).algorithm));
    Program p;
    p.devices.resize(cluster.gpu_count());
    p.add({a.op, task, {}});
    const bool last = i + 1 == sizes.size();
    opts.record_flows = last && !a.trace.empty();
    if (sizes.size() > 1) log_info("simulating " + format_bytes(sizes[i]) + " ...");
    const SimResult r = simulate(p, cluster, opts);
    const double t = r.iteration_time_s;
    const double algbw = sizes[i] / t;
    const double busbw = algbw * busbw_factor(task.op, n);
    std::printf("%14.0f %13.0f %6s %6s %6d %10.1f %8.2f %8.2f  %s\n", sizes[i], std::floor(sizes[i] / 4), "float",
                sums ? "sum" : "none", rooted ? task.root : -1, t * 1e6, algbw / 1e9, busbw / 1e9, algorithm.c_str());
    results.push_back({{"size_bytes", sizes[i]}, {"time_s", t}, {"algbw_Bps", algbw}, {"busbw_Bps", busbw}, {"algorithm", algorithm}});
    if (opts.record_flows) write_file_with(a.trace, "--trace", [&](std::ostream& out) { write_chrome_trace(out, p, cluster, r); });
  }
  std::cout << "\n(algbw = size / time; busbw = algbw x " << format_double("%.4g", busbw_factor(task.op, n))
            << ", the nccl-tests bus bandwidth factor for " << a.op << " over " << n << " ranks)\n";
  const nlohmann::json fractions = link_fractions(cluster, group);
  print_link_fractions(fractions);
  const double latency = call_latency(task, cluster);
  if (latency > 0) {
    const auto slowest = std::find_if(group.begin(), group.end(), [&](int g) {
      return cluster.device_of(g).fitted.collective_latency_s == latency;
    });
    const Device& d = cluster.device_of(*slowest);
    std::cout << "Each call waits " << format_time(latency) << " before its data moves: collective_latency of the calibration profile in force on "
              << d.name << ", " << d.calibration << "\n";
  }
  if (!a.report.empty()) {
    const nlohmann::json j{{"op", a.op},
                           {"cluster", cluster.name},
                           {"group_size", n},
                           {"fidelity", a.fidelity},
                           {"algorithm_requested", a.algorithm},
                           {"link_fractions", fractions},
                           {"call_latency_s", latency},
                           {"results", results}};
    write_file(a.report, j.dump(2) + "\n", "--report");
  }
  return 0;
}

}  // namespace hetsim::cli
