// File: kernels_profile/framework_costs.hpp
// What a training framework costs beyond its kernels, measured on a real GPU by
// scripts/measure-gpu --only framework:
//   pass overhead (measured/steps/*.csv, torch/pass_overhead.py): a tiny model's training step at
//     1-16 micro-batches and 1-8 layers, eager and from CUDA graphs; fitted as
//     forwards = f0 + micro_batches x (f1 + layers x f2) and
//     step     = s0 + micro_batches x (s1 + layers x s2),
//     so a forward pass costs f1 + layers x f2 and a backward (s1 - f1) + layers x (s2 - f2) of host
//     and launch time where its kernels are too short to hide it;
//   interference (measured/interference/*.csv, cuda/interference.cu): a GEMM's slowdown while a
//     reduction kernel shaped like NCCL's occupies k SMs, and the reduction's own slowdown.
// Formats in kernels_profile/README.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace hetsim {

struct Device;

struct PassOverheadFit {
  std::string device, mode;  // mode: eager | cuda_graph
  int rows = 0;
  double step_fixed_s = 0;                      // s0: zero_grad + optimizer step
  double fwd_fixed_s = 0, fwd_per_layer_s = 0;  // f1, f2
  double bwd_fixed_s = 0, bwd_per_layer_s = 0;  // s1 - f1, s2 - f2
  double median_error = 0;                      // |fit - measured| / measured over steps and forwards
  std::string gpu, date, library;
};
// Reads one steps CSV and fits each (device, mode). Throws InputError naming file, line, column.
[[nodiscard]] std::vector<PassOverheadFit> fit_pass_overheads(const std::filesystem::path& file);

struct InterferencePoint {
  int channels = 0;
  double gemm_slowdown = 1;    // median over the GEMM shapes measured
  double reduce_slowdown = 1;  // likewise, of the reduction kernel
  int shapes = 0;
};
struct InterferenceCurve {
  std::string device, gpu, date;
  std::vector<InterferencePoint> points;  // by channels, increasing
  // GEMM slowdown beside a collective on `channels` SMs: piecewise linear in the channels measured,
  // 1 at 0, the last point's beyond it.
  [[nodiscard]] double gemm_slowdown(double channels) const;
};
// Reads one interference CSV: one curve per device. Throws InputError naming file, line, column.
[[nodiscard]] std::vector<InterferenceCurve> load_interference(const std::filesystem::path& file);

// The SMs a collective's kernel occupies: NCCL's channels (one thread block each). NCCL logged
// "16 coll channels" for 8 Hopper GPUs over NVLink (H800, NVIDIA/nccl issue #892, 2023); its
// maintainers tie Hopper's channel count to the GPU's 18 NVLink links (NVIDIA/nccl issue #1429).
inline constexpr int kNcclChannels = 16;

// Sets device.collective_interference (and its source) from the shipped measurements
// (kernels_profile/measured/interference/*.csv, read once per process): the GEMM slowdown at
// kNcclChannels where the device was measured, else 1, "not measured".
void apply_measured_interference(Device& device);

}  // namespace hetsim
