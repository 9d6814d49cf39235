// File: kernels_profile/kernel_table.cpp
#include "kernels_profile/kernel_table.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>

#include "base/input_error.hpp"
#include "base/text.hpp"
#include "kernels_profile/device.hpp"

namespace hetsim {

std::string_view cost_source_name(CostSource s) {
  switch (s) {
    case CostSource::kMeasured: return "measured";
    case CostSource::kInterpolated: return "interpolated";
    case CostSource::kFitted: return "fitted";
    case CostSource::kRoofline: return "roofline";
    case CostSource::kLayerProfile: return "layer_profile";
  }
  return "?";
}

const std::vector<std::string>& kernel_names() {
  static const std::vector<std::string> kNames{"gemm",          "attention_fwd", "attention_bwd", "layernorm_fwd",
                                               "layernorm_bwd", "softmax_fwd",   "softmax_bwd",   "gelu_fwd",
                                               "gelu_bwd",      "embedding_fwd", "embedding_bwd", "copy"};
  return kNames;
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

double KernelSeries::gemm_flops(const GemmShape& g) const {
  return 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
}

double KernelSeries::gemm_bytes(const GemmShape& g) const {
  const double b = static_cast<double>(g.batch), m = static_cast<double>(g.m), n = static_cast<double>(g.n),
               k = static_cast<double>(g.k);
  return b * (m * k + k * n + m * n) * dtype_bytes(dtype_);
}

void KernelSeries::prepare() {
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
  if (samples_.empty()) return std::nullopt;
  const std::array<double, 4> q = log_coords(g);
  std::array<double, 4> lo, hi;
  lo.fill(1e300);
  hi.fill(-1e300);
  struct Near {
    double d2;
    double log_rate;
  };
  std::vector<Near> near;
  for (const KernelSample& s : samples_) {
    const std::array<double, 4> p = log_coords(s.shape);
    double d2 = 0;
    for (int i = 0; i < 4; ++i) {
      lo[i] = std::min(lo[i], p[i]);
      hi[i] = std::max(hi[i], p[i]);
      d2 += (p[i] - q[i]) * (p[i] - q[i]);
    }
    if (d2 < kRelTolerance) return KernelEstimate{s.seconds, CostSource::kMeasured};
    near.push_back({d2, std::log(gemm_flops(s.shape) / s.seconds)});
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

// Splits one CSV line; fields may be double-quoted. Each field keeps its 1-based column.
std::vector<std::pair<std::string, int>> split_csv(const std::string& line) {
  std::vector<std::pair<std::string, int>> out;
  size_t i = 0;
  while (true) {
    const int col = static_cast<int>(i) + 1;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (i < line.size() && line[i] != '"') field += line[i++];
      if (i < line.size()) ++i;
    } else {
      while (i < line.size() && line[i] != ',') field += line[i++];
    }
    out.push_back({field, col});
    if (i >= line.size() || line[i] != ',') break;
    ++i;
  }
  return out;
}

}  // namespace

void KernelTables::load_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::ifstream in(file);
  if (!in) throw InputError(name, "", "cannot open file");
  files_.push_back(name);
  static const std::vector<std::string> kColumns{"device", "kernel", "dtype",  "batch", "m",      "n",   "k",
                                                 "bytes",  "seconds", "gpu", "driver", "clock_mhz", "date"};
  Diagnostics diags;
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  const std::vector<std::string> devices = shipped_device_names();
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto fields = split_csv(line);
    if (header.empty()) {
      for (const auto& [f, col] : fields) header.push_back(f);
      if (header != kColumns) {
        diags.add({name, line_no, 1, "header", "expected the columns " + join(kColumns)});
        break;
      }
      continue;
    }
    if (fields.size() != kColumns.size()) {
      diags.add({name, line_no, 1, "", "expected " + std::to_string(kColumns.size()) + " columns, found " + std::to_string(fields.size())});
      continue;
    }
    auto err = [&](int c, std::string msg) { diags.add({name, line_no, fields[c].second, kColumns[c], std::move(msg)}); };
    auto number = [&](int c, bool required, double min) -> std::optional<double> {
      const std::string& f = fields[c].first;
      if (f.empty()) {
        if (required) err(c, "missing value");
        return std::nullopt;
      }
      double v = 0;
      auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      if (ec != std::errc() || p != f.data() + f.size() || !std::isfinite(v)) {
        err(c, in_quotes(f) + " is not a number");
        return std::nullopt;
      }
      if (v < min) {
        err(c, f + " is out of range; expected at least " + std::to_string(static_cast<long>(min)));
        return std::nullopt;
      }
      return v;
    };
    const size_t before = diags.size();
    const std::string& device = fields[0].first;
    if (std::find(devices.begin(), devices.end(), device) == devices.end()) {
      err(0, "unknown device " + in_quotes(device) + did_you_mean(device, devices) +
                 "; add kernels_profile/devices/" + device + ".yaml first");
    }
    const std::string& kernel = fields[1].first;
    if (std::find(kernel_names().begin(), kernel_names().end(), kernel) == kernel_names().end()) {
      err(1, in_quotes(kernel) + " is not one of: " + join(kernel_names()) + did_you_mean(kernel, kernel_names()));
    }
    const std::optional<DType> dtype = dtype_from_name(fields[2].first);
    if (!dtype) err(2, in_quotes(fields[2].first) + " is not one of: fp32, tf32, fp16, bf16, fp8");
    const bool gemm = kernel == "gemm" || kernel.starts_with("attention");
    KernelSample s;
    const std::optional<double> batch = number(3, false, 1);
    const std::optional<double> m = number(4, gemm, 1), n = number(5, gemm, 1), k = number(6, gemm, 1);
    const std::optional<double> bytes = number(7, !gemm, 1);
    const std::optional<double> seconds = number(8, true, 0);
    if (seconds && *seconds <= 0) err(8, "must be greater than zero");
    if (fields[9].first.empty()) err(9, "missing value: the GPU the time was measured on");
    if (fields[12].first.empty()) err(12, "missing value: when the time was measured");
    (void)number(11, false, 0);
    if (diags.size() != before) continue;
    s.shape = {static_cast<long>(batch.value_or(1)), static_cast<long>(m.value_or(0)), static_cast<long>(n.value_or(0)),
               static_cast<long>(k.value_or(0))};
    s.bytes = bytes.value_or(0);
    s.seconds = *seconds;
    auto key = std::make_tuple(device, kernel, *dtype);
    series_.try_emplace(key, kernel, *dtype).first->second.add(s);
  }
  if (header.empty() && diags.empty()) diags.add({name, 0, 0, "", "no header line"});
  diags.throw_if_any();
}

void KernelTables::prepare() {
  for (auto& [key, s] : series_) s.prepare();
}

KernelTables KernelTables::load_dir(const std::filesystem::path& dir) {
  KernelTables t;
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".csv") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) t.load_file(f);
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
