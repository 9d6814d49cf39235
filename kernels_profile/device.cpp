// File: kernels_profile/device.cpp
#include "kernels_profile/device.hpp"

#include "kernels_profile/framework_costs.hpp"

#include <algorithm>
#include <cmath>

#include "base/data_dir.hpp"
#include "base/text.hpp"
#include "base/yaml_reader.hpp"

namespace hetsim {

std::string_view vendor_name(Vendor v) { return v == Vendor::kAmd ? "amd" : "nvidia"; }

std::optional<Device::Borrowed> Device::borrowed(DType t, bool matmul) const {
  if (kernels_from.empty() || !supports(t)) return std::nullopt;
  if (!matmul) return Borrowed{t, donor_memory_rate / (memory_bandwidth_Bps * efficiency.memory)};
  // A block-scaled format the lender has no rows of (Hopper has none: mxfp8, nvfp4, mxfp6, mxfp4) takes
  // its fp8 rows: the same tiles and waves at each shape, at the ratio of the two achievable rates.
  DType from = t;
  if (!donor_matmul_rate.contains(from) && block_scaled(t)) from = DType::kFp8;
  const auto it = donor_matmul_rate.find(from);
  if (it == donor_matmul_rate.end()) return std::nullopt;
  return Borrowed{from, it->second / (peak(t) * efficiency.matmul_of(t))};
}

namespace {

Device load_device_file(const std::filesystem::path& path, bool donor);

}  // namespace

Device load_device(const std::filesystem::path& path) { return load_device_file(path, false); }

namespace {

Device load_device_file(const std::filesystem::path& path, bool donor) {
  const YamlFile file = YamlFile::load(path);
  Diagnostics diags;
  FieldReader r = file.root(diags);
  Device d;
  d.file = file.name();
  d.name = r.name("name");
  d.vendor = r.choice("vendor", {"nvidia", "amd"}) == "amd" ? Vendor::kAmd : Vendor::kNvidia;
  // Physical floors of a GPU (every figure above them on any GPU since 2012: a K20 has 5 GB,
  // 208 GB/s, PCIe 3 and 3.5 TFLOP/s fp32): a figure below is a typo or a wrong unit, and would
  // print iteration times of years.
  d.memory_bytes = r.quantity_at_least("memory", Unit::kBytes, 1LL << 30, "1GiB");
  d.memory_bandwidth_Bps = r.quantity_at_least("memory_bandwidth", Unit::kRate, 1e10, "10GBps");
  d.pcie_bandwidth_Bps = r.quantity_at_least("pcie_bandwidth", Unit::kRate, 1e9, "1GBps");
  FieldReader peak = r.child("peak");
  for (DType t : kAllDTypes) {
    if (auto v = peak.opt_quantity_at_least(dtype_name(t), Unit::kFlopRate, 1e11, "100GFlops")) d.peak_flops[t] = *v;
  }
  peak.finish();
  if (!d.peak_flops.contains(DType::kFp32) && !peak.opt_node("fp32")) {  // (one given but refused is not also missing)
    peak.error("fp32", "missing required field (every device has fp32)");
  }
  d.collective_library = r.choice("collective_library", {"nccl", "rccl"});
  d.source = r.text("source");
  FieldReader eff = r.child("efficiency");
  d.efficiency.matmul = eff.number("matmul", 0.01, 1.0);
  d.efficiency.matmul_fp32 = eff.opt_number("matmul_fp32", 0.01, 1.0).value_or(0);
  if (std::optional<FieldReader> per = eff.opt_child("matmul_per_dtype")) {
    if (per->opt_node("fp32")) per->error("fp32", "fp32 GEMMs take efficiency.matmul_fp32");
    for (DType t : kAllDTypes) {
      if (t == DType::kFp32) continue;  // refused above
      const std::optional<double> v = per->opt_number(dtype_name(t), 0.01, 1.0);
      if (!v) continue;
      if (!d.peak_flops.contains(t)) per->error(dtype_name(t), "this device has no " + std::string(dtype_name(t)) + " peak");
      d.efficiency.matmul_per_dtype[t] = *v;
    }
    per->finish();
  }
  d.efficiency.vector = eff.number("vector", 0.01, 1.0);
  d.efficiency.memory = eff.number("memory", 0.01, 1.0);
  d.efficiency.kernel_launch_s = eff.quantity("kernel_launch", Unit::kTime, Bound::kLatency);
  d.efficiency.source = eff.text("source");
  eff.finish();
  if (std::optional<FieldReader> mm = r.opt_child("matmul")) {
    d.gemm.compute_units = mm->integer("compute_units", 1, 100000);
    if (auto tile = mm->opt_numbers("tile", 1, 4096)) {
      if (tile->size() != 2) mm->error("tile", "needs two whole numbers [rows, columns]");
      else {
        d.gemm.tile_m = std::lround((*tile)[0]);
        d.gemm.tile_n = std::lround((*tile)[1]);
      }
    }
    d.gemm.k_half = mm->opt_number("k_half", 0, 1e6).value_or(d.gemm.k_half);
    if (auto ref = mm->opt_numbers("reference", 1, 1e7)) {
      if (ref->size() != 3) mm->error("reference", "needs three whole numbers [m, n, k]");
      else d.gemm.reference = {1, std::lround((*ref)[0]), std::lround((*ref)[1]), std::lround((*ref)[2])};
    }
    d.gemm_source = mm->text("source");
    mm->finish();
  }
  if (std::optional<FieldReader> fa = r.opt_child("flash_attention")) {
    d.flash_attention = fa->opt_flag("supported").value_or(false);
    d.flash_attention_source = fa->text("source");
    fa->finish();
  }
  if (std::optional<FieldReader> fl = r.opt_child("fp8_any_layout")) {
    d.fp8_any_layout = fl->opt_flag("supported").value_or(false);
    d.fp8_any_layout_source = fl->text("source");
    fl->finish();
    if (d.fp8_any_layout && !d.supports(DType::kFp8)) r.error("fp8_any_layout", "says FP8 GEMMs take any layout, but `peak` has no fp8");
  }
  if (std::optional<FieldReader> hl = r.opt_child("host_link")) {
    d.host_link.to_host_Bps = hl->quantity_at_least("to_host", Unit::kRate, 1e9, "1GBps");
    d.host_link.from_host_Bps = hl->quantity_at_least("from_host", Unit::kRate, 1e9, "1GBps");
    d.host_link.memory_bytes = hl->opt_quantity_at_least("memory", Unit::kBytes, 1LL << 30, "1GiB").value_or(0);
    d.host_link.source = hl->text("source");
    hl->finish();
  } else {
    d.host_link.to_host_Bps = d.host_link.from_host_Bps = kDefaultHostCopyShare * d.pcie_bandwidth_Bps;
    d.host_link.source = "ASSUMED: 0.82 of pcie_bandwidth each way, a copy's device-to-host rate over PCIe Gen5 x16 on H100 "
                         "(NVIDIA/nvbandwidth issue #24, 2024-09-11: 52.77 of 64 GB/s); the device file has no host_link block";
  }
  if (std::optional<FieldReader> kf = r.opt_child("kernels_from")) {
    d.kernels_from = kf->name("device");
    d.kernels_from_source = kf->text("source");
    if (donor) {
      kf->error("device", "a GPU that lends its kernel tables (kernels_from of another device file) borrows none itself");
    } else if (!d.kernels_from.empty()) {
      if (d.kernels_from == d.name) {
        kf->error("device", "names this device itself; name a GPU with measured kernel tables");
      } else if (const std::filesystem::path p = data_root() / "kernels_profile" / "devices" / (d.kernels_from + ".yaml");
                 !std::filesystem::is_regular_file(p)) {
        kf->error("device", unknown_device_message(d.kernels_from, shipped_device_names()));
      } else {
        const Device lender = load_device_file(p, true);
        for (const auto& [t, peak] : lender.peak_flops) d.donor_matmul_rate[t] = peak * lender.efficiency.matmul_of(t);
        d.donor_memory_rate = lender.memory_bandwidth_Bps * lender.efficiency.memory;
        d.donor_kernel_launch_s = lender.efficiency.kernel_launch_s;
        if (d.vendor != lender.vendor) kf->error("device", d.kernels_from + " is " + std::string(vendor_name(lender.vendor)) +
                                                               ": a GPU borrows kernel tables from its own vendor's GPUs only");
      }
    }
    kf->finish();
  }
  r.finish();
  const std::string stem = std::filesystem::path(d.file).stem().string();
  if (!d.name.empty() && d.name != stem) {
    r.error("name", "\"" + d.name + "\" differs from the file name \"" + stem + "\"; devices are looked up by file name");
  }
  diags.throw_if_any();
  apply_measured_interference(d);
  apply_calibration(d);
  return d;
}

}  // namespace

void check_shipped_device(const CsvRow& row, size_t column, const std::string& device) {
  static const std::vector<std::string> devices = shipped_device_names();
  if (std::find(devices.begin(), devices.end(), device) == devices.end()) row.error(column, unknown_device_message(device, devices));
}

std::string unknown_device_message(const std::string& name, const std::vector<std::string>& known) {
  return "unknown device " + in_quotes(name) + " (no kernels_profile/devices/" + name + ".yaml)" + did_you_mean(name, known);
}

Device load_shipped_device(const std::string& name, const Diagnostic& referrer) {
  const std::filesystem::path path = data_root() / "kernels_profile" / "devices" / (name + ".yaml");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    const std::vector<std::string> known = shipped_device_names();
    Diagnostic d = referrer;
    const std::string hint = did_you_mean(name, known);
    d.message = "unknown device " + in_quotes(name) + (hint.empty() ? " (known: " + join(known) + ")" : hint);
    throw InputError({d});
  }
  return load_device(path);
}

std::vector<std::string> shipped_device_names() { return shipped_names("kernels_profile/devices"); }

}  // namespace hetsim
