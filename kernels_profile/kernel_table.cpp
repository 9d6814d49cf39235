// File: kernels_profile/kernel_table.cpp
#include "kernels_profile/kernel_table.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/csv_reader.hpp"
#include "base/data_dir.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "kernels_profile/device.hpp"

namespace hetsim {

std::string_view cost_source_name(CostSource s) {
  switch (s) {
    case CostSource::kMeasured: return "measured";
    case CostSource::kInterpolated: return "interpolated";
    case CostSource::kFitted: return "fitted";
    case CostSource::kRoofline: return "roofline";
    case CostSource::kLayerProfile: return "layer_profile";
    case CostSource::kScaled: return "scaled";
    case CostSource::kCalibrated: return "calibrated";
  }
  return "?";
}

const std::vector<std::string>& kernel_names() {
  static const std::vector<std::string> kNames{
      "gemm",          "attention_fwd",       "attention_bwd",       "flash_attention_fwd", "flash_attention_bwd",
      "flash_attention_causal_fwd", "flash_attention_causal_bwd", "layernorm_fwd", "layernorm_bwd", "softmax_fwd",
      "softmax_bwd",   "gelu_fwd",            "gelu_bwd",            "embedding_fwd",       "embedding_bwd",
      "copy",          "gemm_fwd",            "gemm_dgrad",          "gemm_wgrad",          "grouped_gemm_fwd",
      "grouped_gemm_dgrad", "grouped_gemm_wgrad", "fp8_cast"};
  return kNames;
}

double shaped_flops(std::string_view kernel, const GemmShape& g) {
  const double mnk = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  return is_grouped_kernel(kernel) ? mnk : static_cast<double>(g.batch) * mnk;
}

double shaped_elements(std::string_view kernel, const GemmShape& g) {
  const double b = static_cast<double>(g.batch), m = static_cast<double>(g.m), n = static_cast<double>(g.n),
               k = static_cast<double>(g.k);
  if (is_grouped_kernel(kernel)) {  // forward / data gradient: rows in, rows out, every group's weights;
    // weight gradient (m, n per group, k rows): both row operands in, every group's output
    return kernel.ends_with("wgrad") ? k * m + k * n + b * m * n : m * k + b * k * n + m * n;
  }
  const bool gemm = kernel.find("gemm") != std::string_view::npos;
  return b * (m * k + k * n + (gemm ? m * n : 0.0));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {

constexpr double kRelTolerance = 1e-9;

// Non-negative least squares for a handful of columns: the best unconstrained solution over every
// subset of columns whose coefficients all come out non-negative.
std::vector<double> fit_nonnegative(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const int cols = static_cast<int>(a.cols());
  std::vector<double> best;
  double best_residual = 1e300;
  for (int mask = 1; mask < (1 << cols); ++mask) {
    std::vector<int> keep;
    for (int c = 0; c < cols; ++c) {
      if (mask & (1 << c)) keep.push_back(c);
    }
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(keep.size()));
    for (size_t i = 0; i < keep.size(); ++i) sub.col(static_cast<Eigen::Index>(i)) = a.col(keep[i]);
    const Eigen::VectorXd x = sub.colPivHouseholderQr().solve(b);
    if ((x.array() < 0).any()) continue;
    const double r = (sub * x - b).squaredNorm();
    if (r < best_residual) {
      best_residual = r;
      best.assign(cols, 0.0);
      for (size_t i = 0; i < keep.size(); ++i) best[keep[i]] = x(static_cast<Eigen::Index>(i));
    }
  }
  return best;
}

std::array<double, 4> log_coords(const GemmShape& g) {
  return {std::log(static_cast<double>(g.batch)), std::log(static_cast<double>(g.m)), std::log(static_cast<double>(g.n)),
          std::log(static_cast<double>(g.k))};
}

}  // namespace

double KernelSeries::gemm_flops(const GemmShape& g) const { return shaped_flops(kernel_, g); }

double KernelSeries::gemm_bytes(const GemmShape& g) const {
  // Attention rows too are fitted with their output counted (the fit's bytes column, not memory held).
  const double b = static_cast<double>(g.batch), m = static_cast<double>(g.m), n = static_cast<double>(g.n),
               k = static_cast<double>(g.k);
  const double elements = is_grouped_kernel(kernel_) ? shaped_elements(kernel_, g) : b * (m * k + k * n + m * n);
  return elements * dtype_bytes(dtype_);
}

void KernelSeries::prepare() {
  forget();
  if (std::any_of(samples_.begin(), samples_.end(), [](const KernelSample& s) { return s.framework; })) {
    std::erase_if(samples_, [](const KernelSample& s) { return !s.framework; });
  }
  if (!is_gemm()) {
    std::sort(samples_.begin(), samples_.end(), [](const KernelSample& a, const KernelSample& b) { return a.bytes < b.bytes; });
  }
  const int cols = is_gemm() ? 3 : 2;
  fit_.clear();
  if (static_cast<int>(samples_.size()) < cols) return;
  // Rows weighted by 1 / measured time: least squares on relative error.
  Eigen::MatrixXd a(static_cast<Eigen::Index>(samples_.size()), cols);
  Eigen::VectorXd b(static_cast<Eigen::Index>(samples_.size()));
  for (size_t i = 0; i < samples_.size(); ++i) {
    const KernelSample& s = samples_[i];
    const double w = 1.0 / s.seconds;
    const auto r = static_cast<Eigen::Index>(i);
    a(r, 0) = w;
    if (is_gemm()) {
      a(r, 1) = gemm_flops(s.shape) * w;
      a(r, 2) = gemm_bytes(s.shape) * w;
    } else {
      a(r, 1) = s.bytes * w;
    }
    b(r) = 1.0;
  }
  fit_ = fit_nonnegative(a, b);
}

std::optional<double> KernelSeries::fitted(const KernelSample& s) const {
  if (fit_.empty()) return std::nullopt;
  if (is_gemm()) return fit_[0] + fit_[1] * gemm_flops(s.shape) + fit_[2] * gemm_bytes(s.shape);
  return fit_[0] + fit_[1] * s.bytes;
}

std::optional<KernelEstimate> KernelSeries::gemm(const GemmShape& g) const {
  const std::array<long, 4> key{g.batch, g.m, g.n, g.k};
  if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
  if (memo_.size() >= kMemo) memo_.clear();
  return memo_[key] = interpolate(g);
}

std::optional<KernelEstimate> KernelSeries::interpolate(const GemmShape& g) const {
  if (samples_.empty()) return std::nullopt;
  if (coords_.size() != samples_.size()) {
    coords_.clear();
    log_rates_.clear();
    for (const KernelSample& s : samples_) {
      coords_.push_back(log_coords(s.shape));
      log_rates_.push_back(std::log(gemm_flops(s.shape) / s.seconds));
    }
  }
  const std::array<double, 4> q = log_coords(g);
  std::array<double, 4> lo, hi;
  lo.fill(1e300);
  hi.fill(-1e300);
  struct Near {
    double d2;
    double log_rate;
  };
  std::vector<Near> near;
  near.reserve(samples_.size());
  for (size_t j = 0; j < samples_.size(); ++j) {
    const std::array<double, 4>& p = coords_[j];
    double d2 = 0;
    for (int i = 0; i < 4; ++i) {
      lo[i] = std::min(lo[i], p[i]);
      hi[i] = std::max(hi[i], p[i]);
      d2 += (p[i] - q[i]) * (p[i] - q[i]);
    }
    if (d2 < kRelTolerance) return KernelEstimate{samples_[j].seconds, CostSource::kMeasured};
    near.push_back({d2, log_rates_[j]});
  }
  bool inside = near.size() >= 2;
  for (int i = 0; i < 4; ++i) inside = inside && q[i] >= lo[i] - kRelTolerance && q[i] <= hi[i] + kRelTolerance;
  if (inside) {
    // Inverse-distance weighting of log throughput over the nearest samples.
    const size_t k = std::min<size_t>(8, near.size());
    std::partial_sort(near.begin(), near.begin() + static_cast<long>(k), near.end(),
                      [](const Near& a, const Near& b) { return a.d2 < b.d2; });
    double wsum = 0, acc = 0;
    for (size_t i = 0; i < k; ++i) {
      const double w = 1.0 / near[i].d2;
      wsum += w;
      acc += w * near[i].log_rate;
    }
    return KernelEstimate{gemm_flops(g) / std::exp(acc / wsum), CostSource::kInterpolated};
  }
  KernelSample s;
  s.shape = g;
  if (const std::optional<double> f = fitted(s); f && *f > 0) return KernelEstimate{*f, CostSource::kFitted};
  return std::nullopt;
}

std::optional<KernelEstimate> KernelSeries::by_bytes(double bytes) const {
  if (samples_.empty() || bytes <= 0) return std::nullopt;
  for (const KernelSample& s : samples_) {
    if (std::fabs(s.bytes - bytes) <= kRelTolerance * bytes) return KernelEstimate{s.seconds, CostSource::kMeasured};
  }
  if (samples_.size() >= 2 && bytes > samples_.front().bytes && bytes < samples_.back().bytes) {
    const auto hi = std::upper_bound(samples_.begin(), samples_.end(), bytes,
                                     [](double b, const KernelSample& s) { return b < s.bytes; });
    const KernelSample& b = *hi;
    const KernelSample& a = *(hi - 1);
    const double t = (std::log(bytes) - std::log(a.bytes)) / (std::log(b.bytes) - std::log(a.bytes));
    return KernelEstimate{std::exp(std::log(a.seconds) + t * (std::log(b.seconds) - std::log(a.seconds))),
                          CostSource::kInterpolated};
  }
  KernelSample s;
  s.bytes = bytes;
  if (const std::optional<double> f = fitted(s); f && *f > 0) return KernelEstimate{*f, CostSource::kFitted};
  return std::nullopt;
}

KernelSeries KernelSeries::without(size_t i) const {
  KernelSeries out(kernel_, dtype_);
  for (size_t j = 0; j < samples_.size(); ++j) {
    if (j != i) out.add(samples_[j]);
  }
  out.prepare();
  return out;
}

namespace {

// Physical bounds on one measured row (kernels_profile/README.md): a GPU cannot run a kernel
// faster than its datasheet allows, nor on operands larger than its memory.
constexpr double kPeakMargin = 1.1;       // shaped kernels: 2·batch·m·n·k / seconds ≤ this × ceiling()
constexpr double kBandwidthMargin = 8;    // memory-bound kernels: bytes / seconds ≤ this × HBM bandwidth (caches)
// Memory-bound kernels: bytes ≤ this × memory. Their traffic is counted as up to 3 × the tensor
// (backward: dy, the saved tensor, dx) plus parameters or a mask, every operand resident.
constexpr double kTrafficPerResidentByte = 4;

// 32-bit products may run on matrix units faster than the device file's fp32 figure (CDNA's fp32
// matrix cores: 2x its vector peak; NVIDIA's TF32), never faster than its 16-bit ones.
bool wide(DType t) { return t == DType::kFp32 || t == DType::kTf32; }
double ceiling(const Device& d, DType t) {
  if (!wide(t)) return d.peak(t);
  double most = 0;
  for (const auto& [u, flops] : d.peak_flops) {
    if (dtype_bytes(u) >= 2) most = std::max(most, flops);  // not the 8- and 4-bit formats
  }
  return most;
}

}  // namespace

double measured_flop_ceiling(const Device& d, DType t) { return kPeakMargin * ceiling(d, t); }

namespace {

std::string row_key_text(const std::string& device, const std::string& kernel, DType dtype, const KernelSample& s, bool shaped) {
  std::string k = device + " " + kernel + " " + std::string(dtype_name(dtype)) + " ";
  if (shaped) {
    k += "batch " + std::to_string(s.shape.batch) + ", " + std::to_string(s.shape.m) + "x" + std::to_string(s.shape.n) + "x" +
         std::to_string(s.shape.k);
  } else {
    k += format_double("%.17g", s.bytes) + " bytes";
  }
  if (s.framework) k += " (framework)";
  return k;
}

}  // namespace

void KernelTables::load_file(const std::filesystem::path& file) {
  static const std::vector<std::string> kColumns{"device", "kernel", "dtype",  "batch", "m",      "n",   "k",
                                                 "bytes",  "seconds", "gpu", "driver", "clock_mhz", "date"};
  // library: e.g. "torch 2.11.0+cu130 CUDA 13.0 cuBLAS 13.1.0"; sm_clock_mhz: the SM clock while timed
  static const std::vector<std::string> kOptional{"library", "sm_clock_mhz"};
  enum Col { kDevice, kKernel, kDtype, kBatch, kM, kN, kK, kBytes, kSeconds, kGpu, kDriver, kClock, kDate, kLibrary, kSmClock };
  const std::vector<std::string> devices = shipped_device_names();
  std::map<std::string, Device> loaded;  // the datasheet figures rows are checked against
  read_csv(file, kColumns, [&](const CsvRow& row) {
    bool ok = true;
    auto fail = [&](int col, std::string msg) {
      row.error(col, std::move(msg));
      ok = false;
    };
    const std::string& device = row.text(kDevice);
    if (std::find(devices.begin(), devices.end(), device) == devices.end()) {
      fail(kDevice, unknown_device_message(device, devices));
    }
    const std::string& kernel = row.text(kKernel);
    if (std::find(kernel_names().begin(), kernel_names().end(), kernel) == kernel_names().end()) {
      fail(kKernel, in_quotes(kernel) + " is not one of: " + join(kernel_names()) + did_you_mean(kernel, kernel_names()));
      return;  // which shape columns it needs depends on the kernel
    }
    const std::optional<DType> dtype = dtype_from_name(row.text(kDtype));
    if (!dtype) fail(kDtype, in_quotes(row.text(kDtype)) + " is not one of: fp32, tf32, fp16, bf16, fp8");
    const bool shaped = is_shaped_kernel(kernel);
    constexpr long kMaxDim = 1L << 40;  // a GEMM dimension or batch beyond any GPU's memory
    const std::optional<long> batch = row.integer(kBatch, 1, kMaxDim, false);
    const std::optional<long> m = row.integer(kM, 1, kMaxDim, shaped), n = row.integer(kN, 1, kMaxDim, shaped),
                              k = row.integer(kK, 1, kMaxDim, shaped);
    const std::optional<double> bytes = row.number(kBytes, 1, !shaped, 1e15);
    const std::optional<double> seconds = row.seconds(kSeconds);
    ok = ok && seconds && (shaped ? (m && n && k) : bytes.has_value());
    (void)row.required(kGpu, "the GPU the time was measured on");
    const std::optional<std::string> date = row.date(kDate, "when the time was measured");
    ok = ok && !row.text(kGpu).empty() && date.has_value();
    if (!shaped) {  // keyed by bytes: a shape would be silently ignored
      for (int c : {kBatch, kM, kN, kK}) {
        if (!row.text(c).empty()) fail(c, kernel + " is keyed by bytes; leave batch, m, n and k empty");
      }
    }
    (void)row.number(kClock, 0, false);
    const std::optional<double> clock = row.sm_clock(kSmClock, kClock);
    ok = ok && clock.has_value();
    if (!ok) return;
    KernelSample s;
    s.shape = {batch.value_or(1), m.value_or(0), n.value_or(0), k.value_or(0)};
    s.bytes = bytes.value_or(0);
    s.seconds = *seconds;
    s.framework = row.has(kLibrary) && !row.text(kLibrary).empty();
    s.mhz = *clock;

    auto it = loaded.find(device);
    if (it == loaded.end()) it = loaded.emplace(device, load_shipped_device(device, Diagnostic{file.string(), row.line(), 0, "device", ""})).first;
    const Device& d = it->second;
    if (shaped) {
      // Operands resident in memory: the product's inputs (and a GEMM's output; fused attention
      // never holds its m x n scores).
      const double elements = shaped_elements(kernel, s.shape);
      if (elements * dtype_bytes(*dtype) > d.memory_bytes) {
        fail(kM, "operands of " + format_bytes(elements * dtype_bytes(*dtype)) + " do not fit in " + device + "'s " +
                     format_bytes(d.memory_bytes));
      } else if (kernel.starts_with("flash_attention") && !d.flash_attention) {
        fail(kKernel, device + " has no fused (flash) attention kernel (kernels_profile/devices/" + device + ".yaml: flash_attention)");
      } else if (!d.supports(*dtype)) {
        fail(kDtype, device + " has no " + std::string(dtype_name(*dtype)) + " peak (kernels_profile/devices/" + device + ".yaml): a time for it cannot be checked");
      } else if (const double rate = shaped_flops(kernel, s.shape) / s.seconds; rate > measured_flop_ceiling(d, *dtype)) {
        fail(kSeconds, format_double("%g", s.seconds) + " s is " + format_flop_rate(rate) + ", more than " + device +
                           " can do in " + std::string(dtype_name(*dtype)) + " (" + format_flop_rate(ceiling(d, *dtype)) +
                           (wide(*dtype) ? ", its fastest 16-bit peak: no GPU multiplies 32-bit numbers faster" : ", its peak") + ")");
      }
    } else if (s.bytes > kTrafficPerResidentByte * d.memory_bytes) {
      fail(kBytes, format_bytes(s.bytes) + " is more than " + format_double("%g", kTrafficPerResidentByte) + " x " + device +
                       "'s " + format_bytes(d.memory_bytes) + " (the traffic of operands that fit in its memory)");
    } else if (const double rate = s.bytes / s.seconds; rate > kBandwidthMargin * d.memory_bandwidth_Bps) {
      fail(kSeconds, format_double("%g", s.seconds) + " s moves " + format_rate(rate) + ", more than " +
                         format_double("%g", kBandwidthMargin) + " x " + device + "'s memory bandwidth of " +
                         format_rate(d.memory_bandwidth_Bps));
    }
    if (!ok) return;
    // One row per shape and run; rows of one shape from other runs (another `date`) are repeats,
    // and the median of their times is used. (A second row used to be ignored: the first won.)
    const std::string key = row_key_text(device, kernel, *dtype, s, shaped);
    KernelSeries& series = series_.try_emplace({device, kernel, *dtype}, kernel, *dtype).first->second;
    const std::string here = file.string() + ":" + std::to_string(row.line());
    const auto [at, fresh] = measured_.try_emplace(key, Repeats{&series, series.samples().size(), {}, {}, {}});
    for (const auto& [run, where] : at->second.runs) {
      if (run == *date) {
        fail(kDate, "a second row for " + key + " in the run of " + run + " (the first is at " + where + ")");
        return;
      }
    }
    at->second.runs.emplace_back(*date, here);
    at->second.seconds.push_back(s.seconds);
    at->second.mhz.push_back(s.mhz);
    if (fresh) series.add(s);
  }, kOptional);
}

void KernelTables::prepare() {
  for (auto& [key, r] : measured_) {
    std::erase(r.mhz, 0.0);  // the clocks the repeats state
    if (r.seconds.size() > 1) r.series->set_seconds(r.sample, median(r.seconds), median(r.mhz));
  }
  measured_.clear();  // sample indices change when the series sort
  for (auto& [key, s] : series_) s.prepare();
}

KernelTables KernelTables::load_dir(const std::filesystem::path& dir) {
  KernelTables t;
  for (const auto& f : files_with_extension(dir, ".csv")) t.load_file(f);
  t.prepare();
  return t;
}

const KernelSeries* KernelTables::find(const std::string& device, const std::string& kernel, DType dtype) const {
  const auto it = series_.find({device, kernel, dtype});
  return it == series_.end() ? nullptr : &it->second;
}

bool KernelTables::has_device(const std::string& device) const {
  for (const auto& [key, s] : series_) {
    if (std::get<0>(key) == device) return true;
  }
  return false;
}

}  // namespace hetsim
