// File: studies/validation/published_mfu.cpp
#include "studies/validation/published_mfu.hpp"

#include <algorithm>
#include <map>

#include "base/data_dir.hpp"
#include "base/yaml_reader.hpp"
#include "base/text.hpp"
#include "kernels_profile/device.hpp"
#include "planner/block_costs.hpp"
#include "workloads/dtype.hpp"
#include "workloads/gemm_precision.hpp"

namespace hetsim {

namespace {

// A GPU's dense peak at a GEMM format named as the table names it; 0 where it has none.
double peak_at(const Device& d, const std::string& gemm) {
  const std::optional<DType> format = dtype_from_name(gemm);
  return format && d.supports(*format) ? d.peak(*format) : 0;
}

}  // namespace

std::vector<PublishedMfu> load_published_mfu(const std::filesystem::path& file) {
  const YamlFile y = YamlFile::load(file);
  Diagnostics diags;
  std::vector<PublishedMfu> out;
  const std::vector<std::string> devices = shipped_device_names();
  FieldReader root = y.root(diags);
  std::vector<FieldReader> rows = root.list("published_mfu");
  root.finish();
  std::map<std::string, Device> loaded;
  for (FieldReader& r : rows) {
    PublishedMfu m;
    m.gpu = r.text("gpu");
    const bool known = std::find(devices.begin(), devices.end(), m.gpu) != devices.end();
    if (!m.gpu.empty() && !known) r.error("gpu", unknown_device_message(m.gpu, devices));
    m.setting = r.choice("setting", {"dense", "moe"});
    m.gemm = r.choice("gemm", {"bf16", "fp8", "mxfp8", "nvfp4", "tf32", "fp32"});
    if (known && !m.gemm.empty()) {  // each GPU's file read once, however many rows name it
      auto it = loaded.find(m.gpu);
      if (it == loaded.end()) it = loaded.emplace(m.gpu, load_device(data_root() / "kernels_profile" / "devices" / (m.gpu + ".yaml"))).first;
      m.vendor = it->second.vendor;
      m.gemm_peak = peak_at(it->second, m.gemm);
    }
    // Counted against the dense peak of the training dtype (bf16), an FP8 or FP4 run's MFU may
    // pass 1: up to its GEMM format's peak over that one.
    m.mfu = r.number("mfu", 0.01, 8.0);
    m.source = r.text("source");
    r.finish();
    out.push_back(std::move(m));
  }
  diags.throw_if_any();
  return out;
}

const std::vector<PublishedMfu>& shipped_published_mfu() {
  // A data folder without the table (an older HETSIM_DATA_DIR) checks nothing rather than failing
  // every run; a table that is there must be right.
  static const std::vector<PublishedMfu> table = [] {
    const std::filesystem::path file = data_root() / "studies/validation/mfu/published-mfu.yaml";
    std::error_code ec;
    return std::filesystem::exists(file, ec) ? load_published_mfu(file) : std::vector<PublishedMfu>{};
  }();
  return table;
}

std::string mfu_setting(const ModelSpec& model) { return model.moe ? "moe" : "dense"; }

std::string mfu_gemm(const ModelSpec& model) {
  const std::optional<DType> f = gemm_input_format(model.training.gemm_precision);
  if (f) return std::string(dtype_name(*f));
  // fp32 and tf32 runs count against their own (lower) peaks: 16-bit figures do not bound them.
  if (model.training.dtype == DType::kFp32 || model.training.dtype == DType::kTf32) return std::string(dtype_name(model.training.dtype));
  return "bf16";  // fp16 counts with bf16: the same peak
}

std::string mfu_gemm_label(const std::string& gemm) { return gemm == "bf16" ? "16-bit (bf16 or fp16)" : gemm; }

namespace {

// Each GPU type of the cluster with its row of the table for the model's setting and GEMM format
// (nullptr: none) and its GPUs' peak at the dtype the run computes in. A type with no row of its own
// is held to a stand-in's, said in `stand_in`: a GPU of its vendor with the same peak at the run's
// GEMM format (H200 is H100's die with more memory; MI325X MI300X's), the highest such figure; else
// the highest figure for the setting and format on any GPU (nothing published for it ran faster).
struct TypeFigure {
  const PublishedMfu* row = nullptr;
  double peak = 0;
  std::string stand_in;  // empty: the type's own row
};

const PublishedMfu* stand_in_row(const std::vector<PublishedMfu>& table, const Device& d, const std::string& setting,
                                 const std::string& gemm, std::string& why) {
  const double peak = peak_at(d, gemm);
  const PublishedMfu *same_peak = nullptr, *any = nullptr;
  for (const PublishedMfu& m : table) {
    if (m.setting != setting || m.gemm != gemm) continue;
    if (any == nullptr || m.mfu > any->mfu) any = &m;
    if (m.vendor == d.vendor && m.gemm_peak == peak && peak > 0 && (same_peak == nullptr || m.mfu > same_peak->mfu)) same_peak = &m;
  }
  if (same_peak != nullptr) {
    why = "no figure of its own: " + same_peak->gpu + "'s, the same " + gemm + " peak";
    return same_peak;
  }
  if (any != nullptr) why = "no figure of its own: the highest for any GPU, " + any->gpu + "'s";
  return any;
}

std::map<std::string, TypeFigure> type_figures(const std::vector<PublishedMfu>& table, const ModelSpec& model, const Cluster& cluster) {
  const std::string setting = mfu_setting(model), gemm = mfu_gemm(model);
  const DType dtype = resolve_dtype(model, cluster);
  std::map<std::string, TypeFigure> out;
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    const Device& d = cluster.device_of(g);
    const bool first = out.find(d.name) == out.end();
    TypeFigure& f = out[d.name];
    f.peak += d.peak(dtype);
    if (!first) continue;
    const auto it = std::find_if(table.begin(), table.end(),
                                 [&](const PublishedMfu& m) { return m.gpu == d.name && m.setting == setting && m.gemm == gemm; });
    f.row = it != table.end() ? &*it : stand_in_row(table, d, setting, gemm, f.stand_in);
  }
  return out;
}

// A type's name as the ceiling names it: with its stand-in, where it has one.
std::string figure_gpu(const std::string& name, const TypeFigure& f) { return f.stand_in.empty() ? name : name + " (" + f.stand_in + ")"; }

}  // namespace

std::optional<PublishedMfu> published_mfu_ceiling(const std::vector<PublishedMfu>& table, const ModelSpec& model, const Cluster& cluster) {
  const std::map<std::string, TypeFigure> types = type_figures(table, model, cluster);
  if (types.empty()) return std::nullopt;
  double peak = 0, reached = 0;
  for (const auto& [name, f] : types) {
    if (f.row == nullptr) return std::nullopt;
    peak += f.peak;
    reached += f.peak * f.row->mfu;
  }
  if (types.size() == 1) {
    PublishedMfu m = *types.begin()->second.row;
    m.gpu = figure_gpu(types.begin()->first, types.begin()->second);
    return m;
  }
  // A mix: its MFU is its GPUs' achieved FLOP/s over their summed peaks, so at most each type's
  // figure weighted by the type's share of the peak.
  PublishedMfu m;
  m.setting = mfu_setting(model);
  m.gemm = mfu_gemm(model);
  m.mfu = peak > 0 ? reached / peak : 0;
  m.source = "each GPU type at its highest published MFU, weighted by its share of the cluster's peak:";
  for (const auto& [name, f] : types) {
    m.gpu += (m.gpu.empty() ? "" : " + ") + name;
    m.source.append(" ").append(figure_gpu(name, f)).append(" ").append(format_double("%.1f %%", 100 * f.row->mfu));
    m.source.append(" (").append(f.row->source).append(");");
  }
  m.source.pop_back();
  return m;
}

std::vector<std::string> unpublished_gpus(const std::vector<PublishedMfu>& table, const ModelSpec& model, const Cluster& cluster) {
  std::vector<std::string> out;
  for (const auto& [name, f] : type_figures(table, model, cluster)) {
    if (f.row == nullptr) out.push_back(name);
  }
  return out;
}

}  // namespace hetsim
