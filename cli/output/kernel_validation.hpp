// File: cli/output/kernel_validation.hpp
// hetsim validate's tables (without --runs): the measured kernel tables' fit and interpolation
// errors, whole layers measured against predicted, layers kernel by kernel, and the framework's own
// costs (fixed cost per pass, SM interference). Each prints its table and adds its rows to the
// --report JSON.
#pragma once

#include <filesystem>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels_profile/cost_model.hpp"
#include "kernels_profile/device.hpp"
#include "kernels_profile/layer_kernels.hpp"
#include "kernels_profile/validation.hpp"

namespace hetsim::cli {

// One file of measured layers, each row with its device.
struct LayerFile {
  std::filesystem::path path;
  std::vector<std::pair<LayerMeasurement, Device>> rows;
};

// Layers kernel by kernel (`measured`/layer-kernels, torch/layer_kernels.py) beside hetsim's
// operator costs grouped the same way: which kernels make a layer's error.
struct LayerKernelFile {
  std::filesystem::path path;
  std::vector<LayerKernels> layers;
};

void print_kernel_tables(const KernelTables& tables, nlohmann::json& report);
void print_layers(const std::vector<LayerFile>& files, const CostModel& cost, nlohmann::json& report);
void print_layer_kernels(const std::vector<LayerKernelFile>& files, const CostModel& cost, nlohmann::json& report);
// From `measured`/steps and `measured`/interference beside the kernel tables.
void print_framework_costs(const std::filesystem::path& measured, nlohmann::json& report);

}  // namespace hetsim::cli
