// File: cli/summary.cpp
#include "cli/summary.hpp"

#include <cstdio>
#include <map>
#include <ostream>
#include <string>

#include "base/units.hpp"

namespace hetsim::cli {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// Device types in cluster order, each once.
std::vector<std::string> gpu_types(const Cluster& c) {
  std::vector<std::string> out;
  for (const NodeType& nt : c.node_types) {
    if (std::find(out.begin(), out.end(), nt.gpu.name) == out.end()) out.push_back(nt.gpu.name);
  }
  return out;
}

// Mean share of the iteration each GPU type spends computing.
std::map<std::string, double> busy_share(const Report& r) {
  std::map<std::string, std::pair<double, int>> acc;
  for (const DeviceReport& d : r.devices) {
    acc[d.gpu].first += r.iteration_time_s > 0 ? d.compute_s / r.iteration_time_s : 0;
    acc[d.gpu].second += 1;
  }
  std::map<std::string, double> out;
  for (const auto& [gpu, v] : acc) out[gpu] = v.first / v.second;
  return out;
}

}  // namespace

void print_header(std::ostream& out, const ModelSpec& model, const Cluster& cluster, long global_batch) {
  std::map<std::string, int> counts;
  for (int g = 0; g < cluster.gpu_count(); ++g) counts[cluster.device_of(g).name]++;
  std::string mix;
  for (const std::string& t : gpu_types(cluster)) mix += (mix.empty() ? "" : " + ") + std::to_string(counts[t]) + " x " + t;
  out << model.name << " on " << cluster.name << ": " << cluster.gpu_count() << " GPUs (" << mix << "), global batch "
      << global_batch << ", micro-batch " << model.training.micro_batch << ", seq " << model.seq_len << "\n\n";
}

void print_strategy_table(std::ostream& out, const std::vector<Report>& reports, const Cluster& cluster) {
  const std::vector<std::string> types = gpu_types(cluster);
  std::string head = pad("strategy", 17) + pad("iteration", 12) + pad("samples/s", 11) + pad("tokens/s", 11) +
                     pad("MFU", 8) + pad("efficiency", 12);
  for (const std::string& t : types) head += pad("busy " + t, t.size() + 7);
  head = rstrip(head);
  out << head << "\n" << std::string(head.size(), '-') << "\n";
  for (const Report& r : reports) {
    std::string line = pad(r.strategy, 17);
    if (!r.feasible) {
      out << line << "infeasible: " << r.infeasible_reason << "\n";
      continue;
    }
    line += pad(format_time(r.iteration_time_s), 12) + pad(fmt("%.2f", r.samples_per_s), 11) +
            pad(fmt("%.0f", r.tokens_per_s), 11) + pad(fmt("%.1f%%", 100 * r.mfu), 8) +
            pad(r.upper_bound_samples_per_s > 0 ? fmt("%.1f%%", 100 * r.efficiency) : "-", 12);
    const std::map<std::string, double> busy = busy_share(r);
    for (const std::string& t : types) line += pad(fmt("%.1f%%", 100 * busy.at(t)), t.size() + 7);
    out << rstrip(line) << "\n";
  }
  if (!reports.empty() && reports.front().upper_bound_samples_per_s > 0) {
    out << "\nupper bound: " << fmt("%.2f", reports.front().upper_bound_samples_per_s)
        << " samples/s (each GPU type at its best per-GPU throughput on a homogeneous cluster of its own nodes)\n";
  }
}

void print_run_summary(std::ostream& out, const Report& r, const Cluster& cluster) {
  out << "strategy: " << r.strategy << "\n";
  if (!r.feasible) {
    out << "infeasible: " << r.infeasible_reason << "\n";
    return;
  }
  out << "iteration time: " << format_time(r.iteration_time_s) << "\n"
      << "throughput: " << fmt("%.2f", r.samples_per_s) << " samples/s, " << fmt("%.0f", r.tokens_per_s) << " tokens/s\n"
      << "MFU: " << fmt("%.1f%%", 100 * r.mfu);
  if (r.upper_bound_samples_per_s > 0) {
    out << ", efficiency " << fmt("%.1f%%", 100 * r.efficiency) << " of the upper bound ("
        << fmt("%.2f", r.upper_bound_samples_per_s) << " samples/s)";
  }
  out << "\n\n" << pad("GPU type", 18) << pad("count", 7) << pad("compute", 12) << pad("comm", 12) << pad("idle", 12)
      << "peak memory / capacity\n";
  for (const std::string& t : gpu_types(cluster)) {
    double compute = 0, comm = 0, idle = 0, mem = 0, cap = 0;
    int count = 0;
    for (const DeviceReport& d : r.devices) {
      if (d.gpu != t) continue;
      compute += d.compute_s;
      comm += d.comm_s;
      idle += d.idle_s;
      mem = std::max(mem, d.peak_memory_bytes);
      cap = d.memory_capacity_bytes;
      ++count;
    }
    out << pad(t, 18) << pad(std::to_string(count), 7) << pad(format_time(compute / count), 12)
        << pad(format_time(comm / count), 12) << pad(format_time(idle / count), 12) << format_bytes(mem) << " / "
        << format_bytes(cap) << "\n";
  }
  out << "(per-GPU means; compute and comm overlap, idle = neither stream busy)\n";
  std::string sources;
  for (const auto& [name, share] : r.compute_time_sources) {
    if (share > 0) sources += (sources.empty() ? "" : ", ") + fmt("%.1f%% ", 100 * share) + name;
  }
  if (!sources.empty()) out << "compute times from: " << sources << "\n";
}

void print_assumptions(std::ostream& out, const std::vector<std::string>& assumptions) {
  out << "\nassumptions:\n";
  for (const std::string& a : assumptions) out << "  - " << a << "\n";
}

}  // namespace hetsim::cli
