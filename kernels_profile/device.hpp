// File: kernels_profile/device.hpp
// One GPU type as described by its datasheet (kernels_profile/devices/<name>.yaml), plus the
// efficiency factors the roofline cost model assumes for it until measured.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/csv_reader.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/gemm_efficiency.hpp"
#include "workloads/dtype.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {

enum class Vendor { kNvidia, kAmd };

// The share of pcie_bandwidth a device's copies to and from host memory reach where its file has no
// `host_link` block: a copy's device-to-host rate over PCIe Gen5 x16 on H100 (52.77 of 64 GB/s,
// nvbandwidth device_to_host_memcpy_sm, NVIDIA/nvbandwidth issue #24, 2024-09-11), assumed each way.
inline constexpr double kDefaultHostCopyShare = 0.82;

// Fractions of datasheet peaks that kernels reach, and a fixed per-kernel cost. These are
// assumptions (stated with their source in the device file) until kernel tables are measured.
struct Efficiency {
  double matmul = 0.7;   // of the tensor/matrix peak of the dtype
  // Of the fp32 peak, for fp32 GEMMs: they run on the SIMT cores, not the tensor cores, and reach
  // another share (0: as `matmul`).
  double matmul_fp32 = 0;
  // Of the tensor peak, for GEMMs in a format whose kernels reach another share than `matmul` (a
  // published measurement of that format; e.g. Blackwell Ultra's NVFP4 GEMMs); absent: `matmul`.
  std::map<DType, double> matmul_per_dtype;
  double vector = 0.5;   // of the fp32 vector peak, for non-matmul arithmetic
  double memory = 0.8;   // of the HBM bandwidth
  double kernel_launch_s = 5e-6;
  std::string source;
  [[nodiscard]] double matmul_of(DType t) const {
    if (const auto it = matmul_per_dtype.find(t); it != matmul_per_dtype.end()) return it->second;
    return t == DType::kFp32 && matmul_fp32 > 0 ? matmul_fp32 : matmul;
  }
  friend bool operator==(const Efficiency&, const Efficiency&) = default;
};

struct Device {
  std::string name;
  Vendor vendor = Vendor::kNvidia;
  double memory_bytes = 0;
  double memory_bandwidth_Bps = 0;
  double pcie_bandwidth_Bps = 0;       // host link, per direction
  // What copies between this GPU's memory and its host CPU's memory reach, each way (activation
  // offloading, planner/hybrid/activation_offload.hpp): a device file's `host_link` block (a Grace
  // CPU's NVLink-C2C, a measured PCIe rate), else kDefaultHostCopyShare of pcie_bandwidth.
  struct HostLink {
    double to_host_Bps = 0;
    double from_host_Bps = 0;
    // Host memory one GPU may fill with offloaded activations (its share of the CPU's); 0: not limited,
    // where the device file gives none (the server decides it, not the GPU).
    double memory_bytes = 0;
    std::string source;
    friend bool operator==(const HostLink&, const HostLink&) = default;
  } host_link;
  std::map<DType, double> peak_flops;  // dense; a dtype missing here is unsupported
  std::string collective_library;     // nccl | rccl
  std::string source;                 // datasheet(s) the figures came from
  Efficiency efficiency;
  GemmModel gemm;                     // `matmul` block: shape-dependent GEMM efficiency (none: constant)
  std::string gemm_source;
  bool flash_attention = false;       // a fused (flash) attention kernel exists for this GPU
  std::string flash_attention_source;
  // FP8 GEMMs with per-tensor scales take their operands in any layout, not only TN (NVIDIA
  // compute capability 10.x and 13+): Transformer Engine then writes and keeps no transposed FP8
  // copies for the backward (Op::cast_fwd_transpose_bytes, weight_copy_bytes).
  bool fp8_any_layout = false;
  std::string fp8_any_layout_source;
  // `kernels_from`: a GPU with measured kernel tables whose per-shape times stand in for this
  // one's where it has none, scaled by the two GPUs' achievable rates (an assumption the device
  // file states: kernels reach the same fraction of the achievable rate at a shape). Empty: none.
  std::string kernels_from, kernels_from_source;
  std::map<DType, double> donor_matmul_rate;  // the donor's peak x efficiency.matmul, per dtype it has
  double donor_memory_rate = 0;               // the donor's memory bandwidth x efficiency.memory
  // The donor's efficiency.kernel_launch: the part of each of its measured kernel times that is a
  // kernel's fixed cost, not scaled by the rates (this GPU's own kernel_launch stands in its place).
  double donor_kernel_launch_s = 0;
  std::string file;
  // Compute-time multiplier set by a cluster's degraded node type (topologies: `degraded`); never
  // read from a device file. 1: the GPU as its figures and tables say.
  double slowdown = 1;
  // Compute-time multiplier while a collective runs on the same GPU (its kernels take SMs and
  // memory bandwidth from the GEMMs): measured (kernels_profile/measured/interference) at NCCL's
  // channel count, kNcclChannels; 1 where no measurement exists, which the source says.
  double collective_interference = 1;
  std::string collective_interference_source;
  // The calibration profile in force's fitted costs (calibration_profile.hpp): host time the GPU
  // waits for and the GEMMs' time excess; zero without one. `calibration` names that profile
  // (empty: the raw model).
  FittedCosts fitted;
  std::string calibration;

  [[nodiscard]] KernelSupport kernel_support() const { return KernelSupport{flash_attention}; }

  [[nodiscard]] bool supports(DType t) const { return peak_flops.contains(t); }
  // Peak of `t`; throws std::out_of_range if unsupported (callers check supports() first).
  [[nodiscard]] double peak(DType t) const { return peak_flops.at(t); }
  // The factor that turns the donor's (kernels_from) measured time of a kernel in `t` into this
  // GPU's, and the dtype of the donor's rows to read: t itself, or fp8 for a block-scaled format the
  // donor lacks (mxfp8, nvfp4, mxfp6, mxfp4: Blackwell applies the block scales inside the MMA, which
  // runs the same tiles at its own rate). nullopt: no donor, or it lacks the format.
  struct Borrowed {
    DType dtype;
    double scale;
  };
  [[nodiscard]] std::optional<Borrowed> borrowed(DType t, bool matmul) const;
  friend bool operator==(const Device&, const Device&) = default;
};

[[nodiscard]] std::string_view vendor_name(Vendor v);

// Reads and checks one device file. Throws InputError.
[[nodiscard]] Device load_device(const std::filesystem::path& path);
// Loads the shipped device called `name` (kernels_profile/devices/<name>.yaml). Throws InputError
// naming `referrer` (the file and field that asked for it) when there is none.
[[nodiscard]] Device load_shipped_device(const std::string& name, const struct Diagnostic& referrer);
// The message for a device name no shipped file has: 'unknown device "X" (no
// kernels_profile/devices/X.yaml)' and the nearest of `known`, for tables that name devices.
[[nodiscard]] std::string unknown_device_message(const std::string& name, const std::vector<std::string>& known);
// Names of all shipped devices, sorted.
[[nodiscard]] std::vector<std::string> shipped_device_names();
// A CSV cell naming a device: reports an unknown name (with the nearest shipped one) on the row.
void check_shipped_device(const CsvRow& row, size_t column, const std::string& device);

}  // namespace hetsim
