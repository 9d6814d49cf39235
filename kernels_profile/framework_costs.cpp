// File: kernels_profile/framework_costs.cpp
#include "kernels_profile/framework_costs.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <map>

#include "base/csv_reader.hpp"
#include "base/data_dir.hpp"
#include "base/input_error.hpp"
#include "base/text.hpp"
#include "kernels_profile/device.hpp"
#include "kernels_profile/kernel_table.hpp"

namespace hetsim {

namespace {

struct StepRow {
  double layers, micro_batches, fwd_s, step_s;
};

// Least squares on relative error of t = a + mb x (b + layers x c) over `rows`; returns {a, b, c}.
std::array<double, 3> fit(const std::vector<StepRow>& rows, bool step) {
  Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), 3);
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    const StepRow& r = rows[i];
    const double w = 1.0 / (step ? r.step_s : r.fwd_s);
    const auto k = static_cast<Eigen::Index>(i);
    a(k, 0) = w;
    a(k, 1) = r.micro_batches * w;
    a(k, 2) = r.micro_batches * r.layers * w;
    y(k) = 1;
  }
  const Eigen::VectorXd x = a.colPivHouseholderQr().solve(y);
  return {x(0), x(1), x(2)};
}

}  // namespace

std::vector<PassOverheadFit> fit_pass_overheads(const std::filesystem::path& file) {
  const std::vector<std::string> columns{"device", "mode", "layers", "micro_batches", "hidden", "heads", "seq_len", "fwd_s",
                                         "step_s", "gpu", "driver", "clock_mhz", "date", "library"};
  enum Col { kDevice, kMode, kLayers, kMb, kHidden, kHeads, kSeq, kFwd, kStep, kGpu, kDriver, kClock, kDate, kLibrary };
  std::map<std::pair<std::string, std::string>, std::vector<StepRow>> groups;
  std::map<std::pair<std::string, std::string>, PassOverheadFit> fits;
  read_csv(file, columns, [&](const CsvRow& row) {
    const std::string& device = row.required(kDevice);
    check_shipped_device(row, kDevice, device);
    const std::string& mode = row.text(kMode);
    if (mode != "eager" && mode != "cuda_graph") row.error(kMode, in_quotes(mode) + " is not one of: eager, cuda_graph");
    const auto layers = row.integer(kLayers, 1, 1024), mb = row.integer(kMb, 1, 1L << 20);
    (void)row.integer(kHidden, 1, 1L << 24);
    (void)row.integer(kHeads, 1, 1L << 16);
    (void)row.integer(kSeq, 1, 1L << 24);
    const auto fwd = row.seconds(kFwd), step = row.seconds(kStep);
    const std::string& gpu = row.required(kGpu, "the GPU it was measured on");
    const auto date = row.date(kDate, "when it was measured");
    if (!layers || !mb || !fwd || !step || gpu.empty() || !date || (mode != "eager" && mode != "cuda_graph")) return;
    if (*fwd > *step) {
      row.error(kFwd, "the forward passes alone cannot take longer than the whole step (step_s)");
      return;
    }
    groups[{device, mode}].push_back({static_cast<double>(*layers), static_cast<double>(*mb), *fwd, *step});
    PassOverheadFit& f = fits[{device, mode}];
    f.device = device;
    f.mode = mode;
    f.gpu = gpu;
    f.date = *date;
    f.library = row.text(kLibrary);
  });
  std::vector<PassOverheadFit> out;
  for (auto& [key, rows] : groups) {
    PassOverheadFit& f = fits[key];
    f.rows = static_cast<int>(rows.size());
    std::vector<double> layer_counts, mb_counts;
    for (const StepRow& r : rows) {
      layer_counts.push_back(r.layers);
      mb_counts.push_back(r.micro_batches);
    }
    std::sort(layer_counts.begin(), layer_counts.end());
    std::sort(mb_counts.begin(), mb_counts.end());
    if (layer_counts.front() == layer_counts.back() || mb_counts.front() == mb_counts.back()) {
      throw InputError(file.string(), "", f.device + " " + f.mode +
                                              ": the fit needs rows at two or more layer counts and two or more micro-batch counts");
    }
    const std::array<double, 3> fw = fit(rows, false), st = fit(rows, true);
    f.step_fixed_s = st[0];
    f.fwd_fixed_s = fw[1];
    f.fwd_per_layer_s = fw[2];
    f.bwd_fixed_s = st[1] - fw[1];
    f.bwd_per_layer_s = st[2] - fw[2];
    std::vector<double> errors;
    for (const StepRow& r : rows) {
      errors.push_back(std::fabs(fw[0] + r.micro_batches * (fw[1] + r.layers * fw[2]) - r.fwd_s) / r.fwd_s);
      errors.push_back(std::fabs(st[0] + r.micro_batches * (st[1] + r.layers * st[2]) - r.step_s) / r.step_s);
    }
    f.median_error = median(errors);
    out.push_back(f);
  }
  return out;
}

double InterferenceCurve::gemm_slowdown(double channels) const {
  if (points.empty() || channels <= 0) return 1;
  double c0 = 0, s0 = 1;
  for (const InterferencePoint& p : points) {
    if (channels <= p.channels) return s0 + (p.gemm_slowdown - s0) * (channels - c0) / (p.channels - c0);
    c0 = p.channels;
    s0 = p.gemm_slowdown;
  }
  return s0;
}

std::vector<InterferenceCurve> load_interference(const std::filesystem::path& file) {
  const std::vector<std::string> columns{"device", "dtype", "m", "n", "k", "channels", "gemm_alone_s", "gemm_with_s", "gemm_slowdown",
                                         "reduce_alone_s", "reduce_with_s", "reduce_slowdown", "reduce_gbps_alone", "gpu",
                                         "driver", "clock_mhz", "date", "library"};
  enum Col { kDevice, kDtype, kM, kN, kK, kChannels, kGemmAlone, kGemmWith, kGemmSlow, kRedAlone, kRedWith, kRedSlow, kGbps, kGpu,
             kDriver, kClock, kDate, kLibrary };
  std::map<std::string, InterferenceCurve> curves;
  std::map<std::pair<std::string, int>, std::pair<std::vector<double>, std::vector<double>>> at;
  read_csv(file, columns, [&](const CsvRow& row) {
    const std::string& device = row.required(kDevice);
    check_shipped_device(row, kDevice, device);
    for (size_t c : {kM, kN, kK}) (void)row.integer(c, 1, 1L << 40);
    const auto channels = row.integer(kChannels, 1, 1024);
    const auto alone = row.seconds(kGemmAlone), with = row.seconds(kGemmWith), r_alone = row.seconds(kRedAlone),
               r_with = row.seconds(kRedWith);
    const auto slow = row.number(kGemmSlow, 0), r_slow = row.number(kRedSlow, 0);
    (void)row.number(kGbps, 0);
    const std::string& gpu = row.required(kGpu, "the GPU it was measured on");
    const auto date = row.date(kDate, "when it was measured");
    if (!channels || !alone || !with || !r_alone || !r_with || !slow || !r_slow || gpu.empty() || !date) return;
    // The slowdowns are the ratios of the times beside them (a hand-edited row would disagree).
    if (std::fabs(*slow - *with / *alone) > 1e-3 * *slow) {
      row.error(kGemmSlow, "is not gemm_with_s / gemm_alone_s");
      return;
    }
    if (std::fabs(*r_slow - *r_with / *r_alone) > 1e-3 * *r_slow) {
      row.error(kRedSlow, "is not reduce_with_s / reduce_alone_s");
      return;
    }
    InterferenceCurve& c = curves[device];
    c.device = device;
    c.gpu = gpu;
    c.date = *date;
    auto& [g, r] = at[{device, static_cast<int>(*channels)}];
    g.push_back(*slow);
    r.push_back(*r_slow);
  });
  for (const auto& [key, v] : at) {
    curves[key.first].points.push_back({key.second, median(v.first), median(v.second), static_cast<int>(v.first.size())});
  }
  std::vector<InterferenceCurve> out;
  for (auto& [device, c] : curves) out.push_back(std::move(c));
  return out;
}

void apply_measured_interference(Device& device) {
  static const std::vector<InterferenceCurve> curves = [] {
    std::vector<InterferenceCurve> all;
    for (const auto& f : files_with_extension(data_root() / "kernels_profile/measured/interference", ".csv")) {
      for (InterferenceCurve& c : load_interference(f)) all.push_back(std::move(c));
    }
    return all;
  }();
  for (const InterferenceCurve& c : curves) {
    if (c.device != device.name) continue;
    device.collective_interference = c.gemm_slowdown(kNcclChannels);
    device.collective_interference_source = "measured: a GEMM beside a reduction kernel on " + std::to_string(kNcclChannels) +
                                            " SMs (NCCL's channels), " + c.gpu + ", " + c.date +
                                            " (kernels_profile/measured/interference)";
    return;
  }
  device.collective_interference = 1;
  device.collective_interference_source = "not measured: collectives do not slow compute on this GPU";
}

}  // namespace hetsim
