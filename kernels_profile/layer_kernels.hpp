// File: kernels_profile/layer_kernels.hpp
// A layer's time kernel by kernel: the rows kernels_profile/torch/layer_kernels.py writes
// (measured/layer-kernels/*.csv: one row per pass and GPU kernel name, with its calls and seconds
// per layer pass), grouped into what the kernels do (KernelClass), beside the same groups of
// hetsim's operator costs (predict_layer's by_class). `hetsim validate` prints them, so a layer's
// error can be traced to the kernels that make it.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "kernels_profile/validation.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {

[[nodiscard]] std::string_view kernel_class_name(KernelClass c);
// A profiler's kernel name (cuBLAS/cuBLASLt nvjet and sm90 GEMMs, PyTorch's flash, LayerNorm,
// elementwise and reduction kernels, Triton's fused casts) -> what it does.
[[nodiscard]] KernelClass classify_kernel(std::string_view name);
// What hetsim costs an operator as (its fp8 casts are split off by predict_layer).
[[nodiscard]] KernelClass op_kernel_class(OpKind kind);

struct LayerKernels {
  LayerMeasurement layer;      // fwd_s / bwd_s: the kernels' sums
  bool from_graphs = false;    // timing graphs: kernels as CUDA-graph replays ran them (else eager)
  std::array<ClassSeconds, 2> measured{};  // [forward, backward] seconds per layer pass
  int kernels = 0;                         // distinct kernel names
};
// Reads one layer-kernels CSV. Throws InputError naming file, line and column.
[[nodiscard]] std::vector<LayerKernels> load_layer_kernels(const std::filesystem::path& file);

}  // namespace hetsim
