// File: kernels_profile/kernel_table.hpp
// Measured kernel times (kernels_profile/measured/*.csv) and predictions from them:
//   exact shape in the table          -> measured
//   inside the measured range         -> interpolated (GEMMs: inverse-distance weighting of
//                                        throughput in log(batch, M, N, K) space; memory-bound
//                                        kernels: piecewise linear in log(bytes)-log(time))
//   outside it                        -> fitted (least squares, relative error, non-negative:
//                                        GEMM t = c0 + c1 FLOPs + c2 bytes; others t = c0 + c1 bytes)
// Column format in kernels_profile/README.md.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "workloads/op_graph.hpp"

namespace hetsim {

// kScaled: another GPU's measured, interpolated or fitted time scaled to this one (a device file's
// kernels_from); weaker than this GPU's own fits, stronger than the roofline. kCalibrated: host time
// the GPU waits for beyond its kernels, from a calibration profile (calibration_profile.hpp).
enum class CostSource { kMeasured, kInterpolated, kFitted, kRoofline, kLayerProfile, kScaled, kCalibrated };
inline constexpr int kCostSources = 7;
[[nodiscard]] std::string_view cost_source_name(CostSource s);

// GEMMs and attention kernels (unfused and flash) are keyed by shape (batch, m, n, k); the
// others by bytes moved.
[[nodiscard]] inline bool is_shaped_kernel(std::string_view kernel) {
  return kernel.find("gemm") != std::string_view::npos || kernel.find("attention") != std::string_view::npos;
}
// A grouped GEMM (grouped_gemm_*: batch = groups, rows of all groups in m or k) does 2·m·n·k FLOPs;
// every other shaped kernel 2·batch·m·n·k.
[[nodiscard]] inline bool is_grouped_kernel(std::string_view kernel) { return kernel.starts_with("grouped_gemm"); }
[[nodiscard]] double shaped_flops(std::string_view kernel, const GemmShape& g);
// Elements a shaped kernel holds in memory: its operands (a GEMM's output too; fused attention
// never holds its m x n scores).
[[nodiscard]] double shaped_elements(std::string_view kernel, const GemmShape& g);

struct KernelSample {
  GemmShape shape;  // GEMM kernels
  double bytes = 0;  // memory-bound kernels: bytes moved
  double seconds = 0;
  // Measured as a training framework runs the kernel (a row with the `library` column, e.g.
  // PyTorch's): where a series has such samples, they alone are used (prepare()).
  bool framework = false;
  // The SM clock NVML read while it was timed (column sm_clock_mhz), 0 where the row does not say.
  // A 700 W H200 ran GEMMs anywhere from about 1200 to 1980 MHz, by what ran before them;
  // the clock is provenance (hetsim validate shows it), not a correction: taking times to one clock
  // by 1 / clock over-corrected (docs/validation.md, "H200 again").
  double mhz = 0;
};

struct KernelEstimate {
  double seconds = 0;
  CostSource source = CostSource::kMeasured;
};

// All samples of one (device, kernel, dtype) and what is derived from them.
class KernelSeries {
 public:
  KernelSeries(std::string kernel, DType dtype) : kernel_(std::move(kernel)), dtype_(dtype) {}
  void add(const KernelSample& s) {
    samples_.push_back(s);
    forget();
  }
  void set_seconds(size_t sample, double seconds, double mhz = 0) {
    samples_[sample].seconds = seconds;
    samples_[sample].mhz = mhz;
    forget();
  }
  void prepare();  // drops other samples where framework ones exist, sorts and fits; call after the last add()

  [[nodiscard]] bool is_gemm() const { return is_shaped_kernel(kernel_); }
  [[nodiscard]] const std::vector<KernelSample>& samples() const { return samples_; }
  // nullopt when there are too few samples to predict this shape.
  [[nodiscard]] std::optional<KernelEstimate> gemm(const GemmShape& g) const;
  [[nodiscard]] std::optional<KernelEstimate> by_bytes(double bytes) const;
  // Prediction from the fitted curve alone (for validation).
  [[nodiscard]] std::optional<double> fitted(const KernelSample& s) const;
  // The same series without sample `i` (leave-one-out validation).
  [[nodiscard]] KernelSeries without(size_t i) const;

 private:
  [[nodiscard]] double gemm_flops(const GemmShape& g) const;
  [[nodiscard]] double gemm_bytes(const GemmShape& g) const;
  [[nodiscard]] std::optional<KernelEstimate> interpolate(const GemmShape& g) const;
  void forget() {
    coords_.clear();
    log_rates_.clear();
    memo_.clear();
  }

  std::string kernel_;
  DType dtype_;
  std::vector<KernelSample> samples_;
  std::vector<double> fit_;  // coefficients; empty when not enough samples
  // What gemm() derives once (a planner asks the same shapes again and again): each sample's log
  // coordinates and log throughput, and its answer for each shape asked (at most kMemo of them).
  // Forgotten whenever the samples change.
  static constexpr size_t kMemo = 1 << 16;
  mutable std::vector<std::array<double, 4>> coords_;
  mutable std::vector<double> log_rates_;
  mutable std::map<std::array<long, 4>, std::optional<KernelEstimate>> memo_;
};

class KernelTables {
 public:
  // Reads every *.csv in `dir` (sorted by name). Throws InputError naming file, line, column.
  // Rows of one shape from several runs (`date`) are repeats: prepare() uses their median.
  [[nodiscard]] static KernelTables load_dir(const std::filesystem::path& dir);
  void load_file(const std::filesystem::path& file);
  void prepare();

  [[nodiscard]] const KernelSeries* find(const std::string& device, const std::string& kernel, DType dtype) const;
  [[nodiscard]] bool has_device(const std::string& device) const;
  [[nodiscard]] const std::map<std::tuple<std::string, std::string, DType>, KernelSeries>& series() const { return series_; }

 private:
  std::map<std::tuple<std::string, std::string, DType>, KernelSeries> series_;
  // Every shape read so far: its sample, and each run's (date, "file:line"), time and clock;
  // prepare() gives the sample the median of the times and of the clocks stated.
  struct Repeats {
    KernelSeries* series;
    size_t sample;
    std::vector<std::pair<std::string, std::string>> runs;
    std::vector<double> seconds, mhz;
  };
  std::map<std::string, Repeats> measured_;
};

// The median of `v` (0 when empty): of repeated measurements, of errors.
[[nodiscard]] double median(std::vector<double> v);

// The kernel names a table may hold.
[[nodiscard]] const std::vector<std::string>& kernel_names();

// The fastest a measured product in `t` can run on `d`, FLOP/s: its peak, or for 32-bit formats its
// fastest 16-bit peak (matrix units run them faster than the fp32 figure), with a 10 % margin for
// clocks above the datasheet's. A measured kernel or published matmul faster is a wrong row.
struct Device;
[[nodiscard]] double measured_flop_ceiling(const Device& d, DType t);

}  // namespace hetsim
