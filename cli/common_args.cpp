// File: cli/common_args.cpp
#include "cli/common_args.hpp"

#include "kernels_profile/calibration_profile.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/text.hpp"

#include "cli/input_files.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "planner/block_costs.hpp"

namespace hetsim::cli {

void add_common(CLI::App* cmd, CommonArgs& a) {
  a.cluster = kDefaultCluster;
  a.model = kDefaultModel;
  cmd->add_option("--cluster,-c", a.cluster, "cluster: a YAML path or a shipped name (hetsim list clusters)")
      ->capture_default_str();
  cmd->add_option("--model,-m", a.model, "model: a YAML path or a shipped name (hetsim list models)")
      ->capture_default_str();
  cmd->add_option("--report", a.report, "write the report JSON here")->check(output_file());
  cmd->add_option("--trace", a.trace, "write a Chrome trace (open in Perfetto) here")->check(output_file());
  cmd->add_option("--fidelity", a.fidelity, "collective fidelity")
      ->check(CLI::IsMember({"phase", "step"}))
      ->capture_default_str();
  cmd->add_option("--global-batch", a.global_batch, "override the model's global batch (samples per iteration)")
      ->check(at_least(1, kMaxGlobalBatch));
  cmd->add_option("--micro-batch", a.micro_batch, "override the model's micro-batch (samples per device per pass; plan: the hybrid search's micro-batches too, N where it tries 1, 2 and 4)")
      ->check(at_least(1, kMaxGlobalBatch));
  cmd->add_option("--precision", a.precision,
                  "GEMM recipe of the transformer layers, overriding the model's training.gemm_precision (an "
                  "ablation): dtype, fp8-delayed, fp8-current, mxfp8 or nvfp4")
      ->check(CLI::IsMember({"dtype", "fp8-delayed", "fp8-current", "mxfp8", "nvfp4"}));
  cmd->add_option("--set", a.sets,
                  "edit a field of the cluster or model before it is read (repeatable): "
                  "cluster.node_types[*].nic.bandwidth=400Gbps, model.training.global_batch=1024")
      ->expected(1)
      ->take_all();
  cmd->add_flag("--every-step", a.every_step,
                "simulate identical gradient-accumulation steps one by one (by default data-parallel and SPMD programs hold "
                "them once or twice, pipeline programs two periods of their steady state, and the simulator adds the rest: "
                "the same times, a program that does not grow with the steps or micro-batches)");
  cmd->add_flag("--every-collective", a.every_collective,
                "simulate every collective flow by flow (by default a collective identical to one already simulated "
                "takes its time where nothing else can cross its links meanwhile: in pure data parallelism, or TP "
                "collectives inside a node; the same times)");
  cmd->add_flag("--no-interference", a.no_interference,
                "let collectives overlap compute for free (an ablation): by default a compute task that starts while a "
                "collective runs on its GPU is slowed as measured (kernels_profile/measured/interference; 1 where a GPU "
                "was not measured) times 1 + the calibration profile's overlap_slowdown, where it sets one");
  cmd->add_flag("--reliability", a.reliability,
                "also give the goodput with failures and checkpoints: Llama 3's 0.173 failures per GPU-year, 122 MB/s of "
                "checkpoint writes per GPU, an assumed 10-minute restart, the checkpoint interval that maximises it");
  cmd->add_flag("--every-replica", a.every_replica,
                "write every data-parallel replica's compute and every data-parallel pipeline (by default GPUs of the "
                "same type, node health and share of the batch, which run in lockstep, and pipelines alike stage by stage "
                "are written once and mirrored: the same times)");
  add_calibration_option(cmd, a.calibration);
  cmd->add_option("--layer-profile", a.layer_profile,
                  "per-layer profile CSV (kernels_profile/README.md) used instead of kernel costs where it applies");
}

void add_calibration_option(CLI::App* cmd, std::string& into) {
  cmd->add_option("--calibration", into,
                  "calibration profile in force (docs/formats/calibration-profile.md): shipped (for each GPU type the "
                  "profile in kernels_profile/calibrations of the most recent software era, fitted on it or transferred to it "
                  "from a sibling), none (the raw model), or a profile file that "
                  "hetsim calibrate wrote")
      ->capture_default_str();
}

namespace {

// A layer profile fits the run it is given to: rows for its model and GPUs, layers it has, tensor-
// parallel degrees it could use, and no row faster than its GPU's peak at the row's micro-batch.
void check_layer_profile(const LayerProfiles& profiles, const std::string& file, const Inputs& in) {
  std::vector<std::string> devices;
  int widest_node = 1;
  for (const NodeType& t : in.cluster.node_types) {
    devices.push_back(t.gpu.name);
    widest_node = std::max(widest_node, t.gpus_per_node);
  }
  profiles.check_applies_to(in.model.name, in.model.layers, devices);
  Diagnostics diags;
  for (const LayerProfileRow& r : profiles.rows()) {  // a degree no plan of this run could have: kept and used by nothing
    if (r.model != in.model.name || r.tp == 1) continue;
    if (in.model.heads % r.tp != 0 || r.tp > widest_node) {
      diags.add({file, r.line, 0, "tp",
                 std::to_string(r.tp) + " is no tensor-parallel degree of " + in.model.name + " on this cluster (a degree divides the " +
                     std::to_string(in.model.heads) + " heads and spans at most one node, " + std::to_string(widest_node) + " GPUs)"});
    }
  }
  diags.throw_if_any();
  // Every row this run may use is checked against its GPU's peak at the row's own micro-batch,
  // not only at the micro-batches the run happens to price (a row 260x too fast was used).
  const DType dtype = resolve_dtype(in.model, in.cluster);
  std::set<std::pair<std::string, long>> checked;
  for (const LayerProfileRow& r : profiles.rows()) {
    if (r.model != in.model.name || r.tp != 1 || !checked.emplace(r.device, r.micro_batch).second) continue;
    for (const NodeType& t : in.cluster.node_types) {
      if (t.gpu.name != r.device) continue;
      (void)block_costs(build_op_graph(in.model, r.micro_batch, dtype, t.gpu.kernel_support()), t.gpu, in.cost);
      break;
    }
  }
}

}  // namespace

Inputs load_inputs(const CommonArgs& a) {
  std::vector<FieldOverride> sets = parse_overrides(a.sets);
  for (const FieldOverride& o : sets) {
    // One edit per field: --global-batch would silently win over a --set of the same field.
    if (o.input == "model" && ((o.path == "training.global_batch" && a.global_batch > 0) || (o.path == "training.micro_batch" && a.micro_batch > 0))) {
      throw InputError("--set", "", o.text() + " and --" + (o.path == "training.global_batch" ? "global" : "micro") +
                                        "-batch set one field; give one of them");
    }
  }
  if (!a.precision.empty()) {
    for (const FieldOverride& o : sets) {
      if (o.input == "model" && o.path == "training.gemm_precision") {
        throw InputError("--set", "", o.text() + " and --precision set one field; give one of them");
      }
    }
    sets.push_back(parse_override("model.training.gemm_precision=" + a.precision));
  }
  use_calibration(a.calibration);  // before the cluster's devices are loaded
  Inputs in{load_model_arg(a.model, sets), load_cluster_arg(a.cluster, sets), CostModel::shipped(a.layer_profile), sim_options(a)};
  // --precision is carried as an edit of the model: an error about the recipe names the option given.
  if (!a.precision.empty()) in.model.gemm_precision_location = Diagnostic{"--precision " + a.precision, 0, 0, "", ""};
  TrainingSpec& t = in.model.training;
  if (a.global_batch > 0) t.global_batch = a.global_batch;
  if (a.micro_batch > 0) t.micro_batch = a.micro_batch;
  if (t.micro_batch > t.global_batch && a.micro_batch > 0) {
    throw InputError("--micro-batch", "", std::to_string(t.micro_batch) + " is larger than the global batch (" +
                                              std::to_string(t.global_batch) + " samples per iteration)");
  }
  clamp_micro_batch(in.model);
  resolve_experts(in.model, in.cluster.gpu_count());
  if (const LayerProfiles* profiles = in.cost.layer_profiles()) check_layer_profile(*profiles, a.layer_profile, in);
  return in;
}

std::vector<std::pair<std::string, std::string>> calibration_input(const std::string& arg) {
  if (arg.empty() || arg == "none" || arg == "shipped") return {};
  return {{"the calibration profile", arg}};
}

void check_outputs_apart(const CommonArgs& a, const std::vector<std::pair<std::string, std::string>>& outputs,
                         const std::vector<std::pair<std::string, std::string>>& more_inputs) {
  std::vector<std::pair<std::string, std::string>> inputs = calibration_input(a.calibration);  // (what, path)
  inputs.emplace_back("the cluster", resolve_input(a.cluster, "topologies", "cluster").string());
  inputs.emplace_back("the model", resolve_input(a.model, "workloads", "model").string());
  if (!a.layer_profile.empty()) inputs.emplace_back("the layer profile", a.layer_profile);
  inputs.insert(inputs.end(), more_inputs.begin(), more_inputs.end());
  check_paths_apart(outputs, inputs);
}

void check_paths_apart(const std::vector<std::pair<std::string, std::string>>& outputs,
                       const std::vector<std::pair<std::string, std::string>>& inputs) {
  namespace fs = std::filesystem;
  auto same = [](const std::string& x, const std::string& y) {
    std::error_code ec;
    if (fs::exists(x, ec) && fs::exists(y, ec)) return fs::equivalent(x, y, ec);
    return fs::weakly_canonical(fs::absolute(x, ec), ec) == fs::weakly_canonical(fs::absolute(y, ec), ec);
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (path.empty() || path.starts_with("/dev/")) continue;
    for (const auto& [what, input] : inputs) {
      if (!input.empty() && same(path, input)) throw InputError(option, "", path + " is " + what + " this run reads; it would be overwritten");
    }
    for (size_t j = 0; j < i; ++j) {
      if (!outputs[j].second.empty() && same(path, outputs[j].second)) {
        throw InputError(option, "", path + " is also given to " + outputs[j].first + "; one would overwrite the other");
      }
    }
  }
}

SimOptions sim_options(const CommonArgs& a) {
  SimOptions o;
  o.fidelity = a.fidelity == "step" ? Fidelity::kStep : Fidelity::kPhase;
  o.record_flows = !a.trace.empty();  // link-utilisation tracks
  o.every_step = a.every_step;
  o.every_collective = a.every_collective;
  o.every_replica = a.every_replica;
  o.collective_interference = !a.no_interference;
  return o;
}

void write_json(const std::string& path, const nlohmann::json& j, const std::string& option) {
  if (!path.empty()) write_file(path, j.dump(2) + "\n", option);
}

CLI::Validator at_least(long min, long max) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        long v = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range) return s + " is more than " + std::to_string(max);
        if (ec != std::errc() || p != s.data() + s.size()) return "\"" + s + "\" is not a whole number";
        if (v < min) return s + " is less than " + std::to_string(min);
        if (v > max) return s + " is more than " + std::to_string(max);
        return {};
      },
      "INT>=" + std::to_string(min));
}

CLI::Validator finite_range(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        double v = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return "\"" + s + "\" is not a finite number";
        if (v < min || v > max) return s + " is outside " + format_double("%g", min) + " to " + format_double("%g", max);
        return {};
      },
      "NUMBER in [" + format_double("%g", min) + ", " + format_double("%g", max) + "]");
}

CLI::Validator output_file() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        namespace fs = std::filesystem;
        if (s.empty()) return "an empty path";
        std::error_code ec;
        const fs::file_status st = fs::status(s, ec);
        if (fs::exists(st)) {
          if (fs::is_directory(st)) return s + " is a folder; give a file name";
          // /dev/stdout, /dev/null and the like are the caller's own streams; a named FIFO with no
          // reader would hang the run when it writes its results.
          const bool stream = s.rfind("/dev/", 0) == 0 || s.rfind("/proc/self/fd/", 0) == 0;
          if (!fs::is_regular_file(st) && !stream) return s + " is not a regular file (a pipe or a device); give a file name";
          return {};
        }
        const fs::path parent = fs::path(s).parent_path();
        if (!parent.empty() && !fs::is_directory(parent, ec)) return "folder " + parent.string() + " does not exist";
        return {};
      },
      "FILE");
}

}  // namespace hetsim::cli
