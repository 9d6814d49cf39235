// File: sim/executor.cpp
// Where a Program runs (a fork of the cluster's platform server, or of this process: the event
// loop of sim/event_loop.hpp) and the result put together: folded repeated steps
// (sim/repeated_step.hpp), and mirrored copies that did not keep one pace simulated as they are
// written out (sim/mirror_copies.hpp).
#include "sim/executor.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "base/log.hpp"
#include "sim/device_timing.hpp"
#include "sim/mirror_copies.hpp"
#include "sim/platform_server.hpp"
#include "sim/program_codec.hpp"
#include "sim/repeated_step.hpp"
#include "sim/event_loop.hpp"

namespace hetsim {

namespace {

// run_program in a fork of the cluster's platform server: the request holds the log level, the
// options and the program (program_codec.hpp).
static_assert(std::is_trivially_copyable_v<SimOptions>, "sent to the simulation process as bytes");
std::string simulation_job(const Cluster& cluster, const Platform& platform, std::string_view request) {
  LogLevel level;
  SimOptions opts;
  if (request.size() < sizeof level + sizeof opts) throw std::runtime_error("simulation request cut short");
  std::memcpy(&level, request.data(), sizeof level);
  std::memcpy(&opts, request.data() + sizeof level, sizeof opts);
  request.remove_prefix(sizeof level + sizeof opts);
  set_log_level(level);
  return run_program(decode_program(request), cluster, platform, opts);
}

// Programs of up to this many tasks run on their cluster's platform server. A larger one runs in a
// fork of the caller that builds its own platform: its simulation outweighs building the platform
// many times, and sending it would hold two more copies of it (its bytes, 78 per task, and the
// decoded program, ~170 per task; gpt3-1.3b data parallel on 16 384 GPUs, 1.7M tasks: memory of
// all processes at its peak 1.1 GB fresh, 1.8 GB served; 2-core machine, 2026-11-26).
constexpr size_t kServedTasks = size_t{1} << 18;

// One run of `program` as it is.
SimResult simulate_program(const Program& program, const Cluster& cluster, const SimOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string bytes;
  if (program.tasks.size() <= (options.served_tasks > 0 ? options.served_tasks : kServedTasks)) {
    std::string request;
    const LogLevel level = log_level();
    request.append(reinterpret_cast<const char*>(&level), sizeof level);
    request.append(reinterpret_cast<const char*>(&options), sizeof options);
    encode_program(program, request);
    bytes = run_on_platform(cluster, simulation_job, request);
  } else {
    bytes = run_on_fresh_platform(cluster, [&](const Platform& platform) { return run_program(program, cluster, platform, options); });
  }
  const nlohmann::json in = nlohmann::json::from_cbor(bytes);

  SimResult r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.activities = in["activities"].get<uint64_t>();
  r.mirrors_diverged = in["mirrors_diverged"].get<bool>();
  if (r.mirrors_diverged) return r;  // stopped there: no times (simulate() writes the copies out)
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
  r.devices = device_timings(stream_intervals(program, r.tasks, 0, program.tasks.size()));
  for (size_t d = 0; d < r.devices.size(); ++d) r.devices[d].peak_memory_bytes = program.devices[d].static_memory_bytes + peaks[d];
  return r;
}

// `program` simulated as written (its repeated step folded where it repeats); empty where copies
// written once for alike pipelines did not keep one pace (the run stopped there).
struct Diverged {};
std::optional<SimResult> simulate_as_written(const Program& program, const Cluster& cluster, const SimOptions& options) {
  const auto run = [&](const Program& p) {
    SimResult r = simulate_program(p, cluster, options);
    if (r.mirrors_diverged) throw Diverged{};
    return r;
  };
  try {
    if (program.repeated_step && program.repeated_step->more > 0) {
      if (!options.every_step) return simulate_folded(program, run);
      const Program all = unrolled(program);
      return folded_result(program, all, run(all));
    }
    return run(program);
  } catch (const Diverged&) {
    return std::nullopt;
  }
}

}  // namespace

void prepare_simulations(const Cluster& cluster, size_t concurrent) { prepare_platform_servers(cluster, simulation_job, concurrent); }

SimResult simulate(const Program& program, const Cluster& cluster, const SimOptions& options) {
  if (std::string err = validate(program); !err.empty()) throw std::logic_error("malformed program: " + err);
  if (static_cast<int>(program.devices.size()) != cluster.gpu_count()) {
    throw std::logic_error("program has " + std::to_string(program.devices.size()) + " devices, cluster " +
                           std::to_string(cluster.gpu_count()));
  }
  if (std::optional<SimResult> r = simulate_as_written(program, cluster, options)) return *r;
  // Copies of tasks written once for alike pipelines did not keep one pace (links shared unevenly):
  // the program with every copy written out instead, its times read back onto this one.
  const WrittenOut all = written_out(program);
  if (std::string err = validate(all.program); !err.empty()) throw std::logic_error("program written out malformed: " + err);
  std::optional<SimResult> r = simulate_as_written(all.program, cluster, options);
  if (!r) throw std::logic_error("a program written out still has copies");
  SimResult back = onto_copies(program, all, std::move(*r));
  back.mirrors_diverged = true;
  return back;
}

}  // namespace hetsim
