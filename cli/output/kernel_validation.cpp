// File: cli/output/kernel_validation.cpp
#include "cli/output/kernel_validation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "base/data_dir.hpp"
#include "base/text.hpp"
#include "kernels_profile/framework_costs.hpp"

namespace hetsim::cli {
namespace {

// Accuracy targets of the kernel-profile issue (median relative error).
constexpr double kFitTarget = 0.05;
constexpr double kInterpTarget = 0.10;
constexpr double kLayerTarget = 0.05;
// Per pass direction, per kind of layer (the GPU measurement issue): 16-bit layers 3 %, fp8 5 %.
constexpr double kPassTarget = 0.03, kFp8PassTarget = 0.05;

const char* verdict(double err, double target, size_t n) { return n == 0 ? "no data" : (err <= target ? "PASS" : "FAIL"); }

std::string pct(double x) { return format_double("%.1f%%", 100 * x); }

// The SM clocks the rows that state one (column sm_clock_mhz) ran at, per device: a 700 W GPU's
// clock moves with what ran before, so a time is only as steady as its clock.
void print_row_clocks(const KernelTables& tables, nlohmann::json& report) {
  std::map<std::string, std::pair<std::vector<double>, size_t>> by_device;  // clocks stated, rows
  for (const auto& [key, series] : tables.series()) {
    auto& [clocks, rows] = by_device[std::get<0>(key)];
    for (const KernelSample& x : series.samples()) {
      if (x.mhz > 0) clocks.push_back(x.mhz);
    }
    rows += series.samples().size();
  }
  for (auto& [device, d] : by_device) {
    auto& [clocks, rows] = d;
    if (clocks.empty()) continue;
    const auto [lo, hi] = std::minmax_element(clocks.begin(), clocks.end());
    std::printf("%s: %zu of the %zu samples in use (repeats merged) say the SM clock they ran at: %.0f-%.0f MHz, median %.0f\n", device.c_str(),
                clocks.size(), rows, *lo, *hi, median(clocks));
    report["row_clocks_mhz"][device] = {{"rows", clocks.size()}, {"min", *lo}, {"max", *hi}, {"median", median(clocks)}};
  }
}

}  // namespace

void print_kernel_tables(const KernelTables& tables, nlohmann::json& report) {
  if (tables.series().empty()) {
    std::cout << "no measured kernel tables: every compute time is a roofline estimate with assumed efficiencies.\n"
                 "Measure a GPU with kernels_profile/cuda/hetsim-kernels (see kernels_profile/README.md).\n";
  } else {
    std::printf("%-16s %-14s %-5s %8s %18s %22s\n", "device", "kernel", "dtype", "samples", "fit error (median)",
                "interpolation (median)");
    std::vector<double> all_fit, all_interp;
    for (const KernelValidation& v : validate_kernels(tables)) {
      std::printf("%-16s %-14s %-5s %8d %18s %15s (%3zu)\n", v.device.c_str(), v.kernel.c_str(),
                  std::string(dtype_name(v.dtype)).c_str(), v.samples, pct(median(v.fit_errors)).c_str(),
                  v.interp_errors.empty() ? "-" : pct(median(v.interp_errors)).c_str(), v.interp_errors.size());
      all_fit.insert(all_fit.end(), v.fit_errors.begin(), v.fit_errors.end());
      all_interp.insert(all_interp.end(), v.interp_errors.begin(), v.interp_errors.end());
      report["kernels"].push_back({{"device", v.device}, {"kernel", v.kernel}, {"dtype", dtype_name(v.dtype)},
                                   {"samples", v.samples}, {"fit_median_error", median(v.fit_errors)},
                                   {"interpolated_samples", v.interp_errors.size()},
                                   {"interpolation_median_error", median(v.interp_errors)}});
    }
    std::cout << "\nmedian over all samples: fitted curves " << pct(median(all_fit)) << " on measured shapes (target "
              << pct(kFitTarget) << ": " << verdict(median(all_fit), kFitTarget, all_fit.size()) << "), interpolation "
              << pct(median(all_interp)) << " on left-out shapes (target " << pct(kInterpTarget) << ": "
              << verdict(median(all_interp), kInterpTarget, all_interp.size()) << ")\n";
    report["fit_median_error"] = median(all_fit);
    report["interpolation_median_error"] = median(all_interp);
    print_row_clocks(tables, report);
  }
}

void print_layers(const std::vector<LayerFile>& files, const CostModel& cost, nlohmann::json& report) {
  std::cout << "\n";
  if (files.empty()) {
    std::cout << "no layer measurements: run kernels_profile/cuda/hetsim-layer-bench on a GPU and pass --layers FILE.\n";
  }
  std::vector<double> layer_err;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_kind;  // |fwd|, |bwd| errors per device and layer kind
  for (const LayerFile& lf : files) {
    std::cout << "layers measured in " << printable(lf.path.string()) << ":\n";
    std::printf("%-16s %6s %5s %6s %3s %-5s %-7s %12s %12s %7s %12s %12s %7s  %s\n", "device", "hidden", "heads", "seq", "mb", "dtype", "attn",
                "fwd meas.", "fwd pred.", "error", "bwd meas.", "bwd pred.", "error", "prediction from");
    for (const auto& [m, device] : lf.rows) {
      if (!device.supports(m.dtype)) continue;
      const LayerPrediction p = predict_layer(m, device, cost);
      const double ef = (p.fwd_s - m.fwd_s) / m.fwd_s, eb = (p.bwd_s - m.bwd_s) / m.bwd_s;
      layer_err.push_back(std::fabs((p.fwd_s + p.bwd_s) - (m.fwd_s + m.bwd_s)) / (m.fwd_s + m.bwd_s));
      auto& [kf, kb] = by_kind[m.device + ", " + (m.flash ? "flash" : "unfused") + (m.casts.empty() ? "" : ", fp8 GEMMs")];
      kf.push_back(std::fabs(ef));
      kb.push_back(std::fabs(eb));
      std::string from;
      double total = 0;
      for (double x : p.sources) total += x;
      for (int s = 0; s < kCostSources; ++s) {
        if (p.sources[s] > 0) from += (from.empty() ? "" : ", ") + pct(p.sources[s] / total) + " " + std::string(cost_source_name(static_cast<CostSource>(s)));
      }
      if (m.fwd_mhz > 0 && m.step_mhz > 0) from += format_double("; ran at %.0f", m.fwd_mhz) + format_double("/%.0f MHz", m.step_mhz);
      if (m.sustained_s > 0) from += format_double(" after %g s of replays", m.sustained_s);
      std::printf("%-16s %6ld %5ld %6ld %3ld %-5s %-7s %10.3f ms %9.3f ms %+6.1f%% %9.3f ms %9.3f ms %+6.1f%%  %s\n",
                  m.device.c_str(), m.hidden, m.heads, m.seq_len, m.micro_batch, std::string(dtype_name(m.dtype)).c_str(),
                  m.flash ? "flash" : "unfused", m.fwd_s * 1e3, p.fwd_s * 1e3, 100 * ef, m.bwd_s * 1e3, p.bwd_s * 1e3, 100 * eb, from.c_str());
      report["layers"].push_back({{"device", m.device}, {"hidden", m.hidden}, {"heads", m.heads}, {"seq_len", m.seq_len},
                                  {"micro_batch", m.micro_batch}, {"dtype", dtype_name(m.dtype)},
                                  {"attention", m.flash ? "flash" : "unfused"},
                                  {"measured_fwd_s", m.fwd_s}, {"predicted_fwd_s", p.fwd_s},
                                  {"measured_bwd_s", m.bwd_s}, {"predicted_bwd_s", p.bwd_s},
                                  {"gpu", m.gpu}, {"measured_at", m.date}, {"fwd_sm_clock_mhz", m.fwd_mhz},
                                  {"step_sm_clock_mhz", m.step_mhz}, {"sustained_s", m.sustained_s}});
    }
  }
  if (!layer_err.empty()) {
    std::cout << "\nmedian layer error (forward + backward): " << pct(median(layer_err)) << " (target " << pct(kLayerTarget)
              << ": " << verdict(median(layer_err), kLayerTarget, layer_err.size()) << ")\n";
    report["layer_median_error"] = median(layer_err);
    for (const auto& [kind, e] : by_kind) {
      const double target = kind.ends_with("fp8 GEMMs") ? kFp8PassTarget : kPassTarget;
      std::cout << "median |error| of layers on " << kind << " (" << e.first.size() << "): forward " << pct(median(e.first))
                << ", backward " << pct(median(e.second)) << " (target " << pct(target) << " each: "
                << verdict(std::max(median(e.first), median(e.second)), target, e.first.size()) << ")\n";
      report["layer_median_error_by_kind"][kind] = {{"forward", median(e.first)}, {"backward", median(e.second)}};
    }
  }
}

void print_layer_kernels(const std::vector<LayerKernelFile>& files, const CostModel& cost, nlohmann::json& report) {
  report["layer_kernels"] = nlohmann::json::array();
  std::map<std::string, std::array<ClassSeconds, 4>> totals;  // per device, dtype and timing: [fwd meas, fwd pred, bwd meas, bwd pred]
  std::map<std::string, Device> devices;                        // each device file read once
  for (const auto& [f, layers] : files) {
    if (layers.empty()) continue;
    std::cout << "\nlayers kernel by kernel in " << printable(f.string()) << " (us per pass, measured/predicted, classes over 1 % of the pass):\n";
    for (const LayerKernels& lk : layers) {
      const LayerMeasurement& m = lk.layer;
      auto it = devices.find(m.device);
      if (it == devices.end()) it = devices.emplace(m.device, load_shipped_device(m.device, Diagnostic{f.string(), 0, 0, "device", ""})).first;
      const LayerPrediction p = predict_layer(m, it->second, cost);
      const char* timing = lk.from_graphs ? "graphs" : "eager";
      const std::string group = m.device + ", " + std::string(dtype_name(m.dtype)) + ", " + timing;
      std::printf("%-16s %6ld %5ld %6ld %6ld %3ld %-5s %-6s\n", m.device.c_str(), m.hidden, m.heads, m.ffn_hidden, m.seq_len,
                  m.micro_batch, std::string(dtype_name(m.dtype)).c_str(), timing);
      nlohmann::json row{{"device", m.device}, {"hidden", m.hidden}, {"heads", m.heads}, {"ffn_hidden", m.ffn_hidden}, {"seq_len", m.seq_len},
                         {"micro_batch", m.micro_batch}, {"dtype", dtype_name(m.dtype)}, {"timing", timing}};
      for (int pass = 0; pass < 2; ++pass) {
        const double meas_total = pass == 0 ? m.fwd_s : m.bwd_s, pred_total = pass == 0 ? p.fwd_s : p.bwd_s;
        std::string line;
        nlohmann::json classes;
        for (int c = 0; c < kKernelClasses; ++c) {
          const double meas = lk.measured[pass][c], pred = p.by_class[pass][c];
          totals[group][2 * pass][c] += meas;
          totals[group][2 * pass + 1][c] += pred;
          if (meas == 0 && pred == 0) continue;
          const std::string name(kernel_class_name(static_cast<KernelClass>(c)));
          classes[name] = {{"measured_s", meas}, {"predicted_s", pred}};
          if (std::max(meas, pred) < 0.01 * meas_total) continue;
          char cell[96];
          std::snprintf(cell, sizeof cell, "  %s %.0f/%.0f", name.c_str(), meas * 1e6, pred * 1e6);
          line += cell;
        }
        std::printf("  %s %8.0f/%-8.0f (%+5.1f%%):%s\n", pass == 0 ? "fwd" : "bwd", meas_total * 1e6, pred_total * 1e6,
                    100 * (pred_total - meas_total) / meas_total, line.c_str());
        row[pass == 0 ? "fwd" : "bwd"] = {{"measured_s", meas_total}, {"predicted_s", pred_total}, {"classes", classes}};
      }
      report["layer_kernels"].push_back(row);
    }
  }
  if (totals.empty()) return;
  std::cout << "\nwhere the layers' error comes from (sum over the layers above; each class's predicted - measured time, as a\n"
               "share of the measured pass):\n";
  for (const auto& [group, t] : totals) {
    for (int pass = 0; pass < 2; ++pass) {
      double meas_total = 0;
      for (double x : t[2 * pass]) meas_total += x;
      std::string line;
      for (int c = 0; c < kKernelClasses; ++c) {
        const double d = (t[2 * pass + 1][c] - t[2 * pass][c]) / meas_total;
        if (std::fabs(d) < 0.0005) continue;
        char cell[64];
        std::snprintf(cell, sizeof cell, "  %s %+.1f%%", std::string(kernel_class_name(static_cast<KernelClass>(c))).c_str(), 100 * d);
        line += cell;
      }
      std::printf("  %-32s %s:%s\n", group.c_str(), pass == 0 ? "fwd" : "bwd", line.c_str());
    }
  }
}

// The framework's own costs (kernels_profile/framework_costs.hpp), as measured: `measured`/steps
// and `measured`/interference beside the kernel tables.
void print_framework_costs(const std::filesystem::path& measured, nlohmann::json& report) {
  std::vector<PassOverheadFit> fits;
  for (const auto& f : files_with_extension(measured / "steps", ".csv")) {
    for (PassOverheadFit& x : fit_pass_overheads(f)) fits.push_back(std::move(x));
  }
  std::vector<InterferenceCurve> curves;
  for (const auto& f : files_with_extension(measured / "interference", ".csv")) {
    for (InterferenceCurve& c : load_interference(f)) curves.push_back(std::move(c));
  }
  report["pass_overhead"] = nlohmann::json::array();
  if (!fits.empty()) {
    std::cout << "\nfixed cost per pass (a tiny model's training step, kernels_profile/measured/steps; fit\n"
                 "forwards = f0 + micro-batches x (f1 + layers x f2), step likewise):\n";
    std::printf("%-16s %-10s %4s %11s %11s %11s %11s %11s %6s\n", "device", "mode", "rows", "fwd/pass", "fwd/layer", "bwd/pass",
                "bwd/layer", "step fixed", "error");
  }
  for (const PassOverheadFit& f : fits) {
    std::printf("%-16s %-10s %4d %8.1f us %8.1f us %8.1f us %8.1f us %8.1f us %5.1f%%\n", f.device.c_str(), f.mode.c_str(), f.rows,
                f.fwd_fixed_s * 1e6, f.fwd_per_layer_s * 1e6, f.bwd_fixed_s * 1e6, f.bwd_per_layer_s * 1e6, f.step_fixed_s * 1e6,
                100 * f.median_error);
    report["pass_overhead"].push_back({{"device", f.device}, {"mode", f.mode}, {"rows", f.rows}, {"fwd_fixed_s", f.fwd_fixed_s},
                                       {"fwd_per_layer_s", f.fwd_per_layer_s}, {"bwd_fixed_s", f.bwd_fixed_s},
                                       {"bwd_per_layer_s", f.bwd_per_layer_s}, {"step_fixed_s", f.step_fixed_s},
                                       {"median_fit_error", f.median_error}, {"gpu", f.gpu}, {"measured_at", f.date},
                                       {"library", f.library}});
  }
  // A per-pass host time for a calibration that holds it at the measurement (hetsim calibrate
  // --measured): the mean of a forward's and a backward's fixed cost, where both came out positive.
  bool said = false;
  for (const PassOverheadFit& f : fits) {
    if (!(f.fwd_fixed_s > 0) || !(f.bwd_fixed_s > 0)) continue;
    if (!said) std::cout << "a calibration's per-pass host time from these (the mean of a forward's and a backward's fixed cost):\n";
    said = true;
    const double per_pass = (f.fwd_fixed_s + f.bwd_fixed_s) / 2;
    std::printf("  %s %s: hetsim calibrate ... --measured pass_host=%.0fus --measured-source \"kernels_profile/measured/steps: %s %s "
                "step fit, %s, %s\"\n",
                f.device.c_str(), f.mode.c_str(), per_pass * 1e6, f.device.c_str(), f.mode.c_str(), f.gpu.c_str(), f.date.c_str());
  }
  report["interference"] = nlohmann::json::array();
  for (const InterferenceCurve& c : curves) {
    std::cout << "\nGEMM beside a reduction kernel on k SMs (" << c.device << ", " << c.gpu << ", " << c.date
              << "; median over the shapes measured):\n";
    std::printf("%8s %14s %19s %7s\n", "channels", "GEMM slowdown", "reduction slowdown", "shapes");
    nlohmann::json points = nlohmann::json::array();
    for (const InterferencePoint& p : c.points) {
      std::printf("%8d %13.3fx %18.3fx %7d\n", p.channels, p.gemm_slowdown, p.reduce_slowdown, p.shapes);
      points.push_back({{"channels", p.channels}, {"gemm_slowdown", p.gemm_slowdown}, {"reduce_slowdown", p.reduce_slowdown}});
    }
    report["interference"].push_back({{"device", c.device}, {"gpu", c.gpu}, {"measured_at", c.date}, {"points", points}});
  }
}

}  // namespace hetsim::cli
