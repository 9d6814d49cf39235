// File: cli/commands/validate_command.cpp
#include "cli/commands/validate_command.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/text.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "cli/commands/validate_runs.hpp"
#include "cli/output/kernel_validation.hpp"

namespace hetsim::cli {
namespace {

std::vector<std::filesystem::path> layer_files(const ValidateArgs& a) {
  if (!a.layers.empty()) return {a.layers};
  return files_with_extension(data_root() / "kernels_profile/measured/layers", ".csv");
}

// --layer-kernels FILE, else `measured`/layer-kernels/*.csv, read before anything is printed.
std::vector<LayerKernelFile> layer_kernel_files(const ValidateArgs& a, const std::filesystem::path& measured) {
  std::vector<LayerKernelFile> out;
  const std::vector<std::filesystem::path> files = !a.layer_kernels.empty() ? std::vector<std::filesystem::path>{a.layer_kernels}
                                                                            : files_with_extension(measured / "layer-kernels", ".csv");
  for (const auto& f : files) out.push_back({f, load_layer_kernels(f)});
  return out;
}

}  // namespace

void add_validate_options(CLI::App* cmd, ValidateArgs& a) {
  cmd->add_option("--kernels", a.kernels, "directory of measured kernel tables (default kernels_profile/measured)");
  cmd->add_option("--layers", a.layers, "hetsim-layer-bench CSV (default kernels_profile/measured/layers/*.csv)");
  cmd->add_option("--layer-kernels", a.layer_kernels,
                  "layers kernel by kernel (kernels_profile/torch/layer_kernels.py's CSV; default kernels_profile/measured/layer-kernels/*.csv)");
  cmd->add_option("--report", a.report, "write the error table as JSON here")->check(output_file());
  cmd->add_option("--runs", a.runs, "validation run files (docs/formats/validation-runs.md): compare these published runs instead");
  cmd->add_option("--only", a.only, "with --runs: only the runs whose name contains this text");
  cmd->add_option("--markdown", a.markdown, "with --runs: write the table (with sources) as Markdown here")->check(output_file());
  cmd->add_option("--trace-dir", a.trace_dir,
                  "with --runs: write each training run's simulated iteration as a Chrome trace (open in Perfetto) into this directory");
  add_calibration_option(cmd, a.calibration);
}

int run_validate(const ValidateArgs& a) {
  if (!a.runs.empty()) {
    std::vector<std::pair<std::string, std::string>> inputs = calibration_input(a.calibration);
    for (const std::string& f : a.runs) inputs.emplace_back("a run file", f);
    check_paths_apart({{"--report", a.report}, {"--markdown", a.markdown}}, inputs);
    use_calibration(a.calibration);
    return run_validation_runs(a.runs, a.only, a.report, a.markdown, a.trace_dir);
  }
  if (!a.only.empty() || !a.markdown.empty() || !a.trace_dir.empty()) {
    throw InputError("--only/--markdown/--trace-dir", "", "apply to --runs; give --runs FILE");
  }
  const std::filesystem::path dir = a.kernels.empty() ? data_root() / "kernels_profile/measured" : std::filesystem::path(a.kernels);
  if (std::error_code ec; !std::filesystem::is_directory(dir, ec)) {
    throw InputError("--kernels", "", in_quotes(dir.string()) + (std::filesystem::exists(dir, ec) ? " is not a directory" : " does not exist") +
                                          "; give the directory of measured kernel tables (e.g. kernels_profile/measured)");
  }
  auto tables = std::make_shared<KernelTables>(KernelTables::load_dir(dir));
  const CostModel cost(tables, nullptr);
  nlohmann::json report{{"kernels", nlohmann::json::array()}, {"layers", nlohmann::json::array()}};

  // Every input read before anything is printed: a rejected one prints its message alone.
  std::vector<LayerFile> layer_inputs;
  for (const auto& f : layer_files(a)) {
    LayerFile lf{f, {}};
    for (const LayerMeasurement& m : load_layer_measurements(f)) {
      lf.rows.emplace_back(m, load_shipped_device(m.device, Diagnostic{f.string(), 0, 0, "device", ""}));
    }
    layer_inputs.push_back(std::move(lf));
  }
  const std::vector<LayerKernelFile> kernel_inputs = layer_kernel_files(a, dir);
  std::cout << "hetsim validate: kernel tables in " << printable(dir.string()) << "\n\n";
  print_kernel_tables(*tables, report);
  print_layers(layer_inputs, cost, report);
  print_layer_kernels(kernel_inputs, cost, report);
  print_framework_costs(dir, report);
  if (!a.report.empty()) write_file(a.report, report.dump(2) + "\n", "--report");
  return 0;
}

}  // namespace hetsim::cli
