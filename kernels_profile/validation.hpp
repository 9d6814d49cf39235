// File: kernels_profile/validation.hpp
// How well the compute cost model matches real GPUs:
//   kernels: the fitted curves on the measured shapes, and interpolation on shapes left out of
//            the table one at a time (leave-one-out);
//   layers:  hetsim's prediction for one transformer layer, forward and backward, against the
//            time `hetsim-layer-bench` measured for the whole kernel sequence.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"

namespace hetsim {

struct KernelValidation {
  std::string device, kernel;
  DType dtype = DType::kFp16;
  int samples = 0;
  std::vector<double> fit_errors;     // |fitted - measured| / measured, per sample
  std::vector<double> interp_errors;  // leave-one-out, for samples inside the others' range
};
[[nodiscard]] std::vector<KernelValidation> validate_kernels(const KernelTables& tables);

struct LayerMeasurement {
  std::string device;
  long hidden = 0, heads = 0, ffn_hidden = 0, seq_len = 0, micro_batch = 0;
  DType dtype = DType::kFp16;
  double fwd_s = 0, bwd_s = 0;
  std::string gpu, date;
  bool flash = false;  // fused (flash) attention: optional last column `attention` = flash | unfused
  // Measured by PyTorch (kernels_profile/torch: files with the column `attention`), whose autograd
  // runs kernels of its own around the layer's operators: predicted with training.kernels eager.
  // Else hetsim-layer-bench's CUDA program, which runs the operators hetsim's graph has (fused).
  bool pytorch = false;
  // dtype fp8: the layer in bf16 with its four GEMMs in FP8, per-tensor current scaling (recipe
  // fp8-current); `attention` then says how the casts ran: flash+shape-compiled-casts (torch.compile
  // for each shape, fused as Transformer Engine's), flash+compiled-casts (compiled once for any shape,
  // rows until 2026-12-04) or flash+eager-casts (unfused PyTorch: more traffic than hetsim models).
  std::string casts;
  // The median SM clocks NVML read while the forward alone and the forward with backward ran
  // (optional columns fwd_sm_clock_mhz, step_sm_clock_mhz; 0: not stated): provenance.
  double fwd_mhz = 0, step_mhz = 0;
  // Seconds of the layer's forward + backward replays before it was timed (optional column
  // sustained_s; 0: a burst from a cool GPU).
  double sustained_s = 0;
};
// Reads a layer CSV (hetsim-layer-bench, or kernels_profile/torch/layer_bench.py with the extra
// column `attention`). Throws InputError naming file, line and column.
[[nodiscard]] std::vector<LayerMeasurement> load_layer_measurements(const std::filesystem::path& file);

// The columns naming a layer and its run in a layer file (layers/*.csv, layer-kernels/*.csv), by
// their index in that file's header.
struct LayerColumns {
  size_t device, hidden, heads, ffn, seq, micro_batch, dtype, gpu, date;
  std::optional<size_t> attention;
};
class CsvRow;
// Reads those columns of one row, checked as a layer that could have run: its device file, the
// dtype's peak, the fused kernel (errors go through the row; nullopt then).
class LayerRowReader {
 public:
  explicit LayerRowReader(const std::filesystem::path& file);
  [[nodiscard]] std::optional<LayerMeasurement> read(const CsvRow& row, const LayerColumns& columns);

 private:
  std::string file_;
  std::vector<std::string> names_;
  std::map<std::string, Device> loaded_;
};
// One layer shape and run: device, sizes, dtype, attention path, casts and date.
[[nodiscard]] std::string layer_key(const LayerMeasurement& m);

// What a layer's kernels do, as hetsim costs them and as a profiler names them
// (kernels_profile/layer_kernels.hpp classifies both).
enum class KernelClass { kGemm, kAttention, kNorm, kActivation, kResidual, kCast, kCopy, kBiasGrad, kFill, kOther };
inline constexpr int kKernelClasses = 10;
using ClassSeconds = std::array<double, kKernelClasses>;

struct LayerPrediction {
  double fwd_s = 0, bwd_s = 0;
  SourceSeconds sources{};
  std::array<ClassSeconds, 2> by_class{};  // [forward, backward]
};
// hetsim's time for the layer's operators (a GPT layer with these sizes) on `device`.
[[nodiscard]] LayerPrediction predict_layer(const LayerMeasurement& m, const Device& device, const CostModel& cost);

}  // namespace hetsim
