// File: studies/validation/published_mfu.cpp
#include "studies/validation/published_mfu.hpp"

#include <algorithm>
#include <set>

#include "base/data_dir.hpp"
#include "base/yaml_reader.hpp"
#include "kernels_profile/device.hpp"
#include "workloads/gemm_precision.hpp"

namespace hetsim {

std::vector<PublishedMfu> load_published_mfu(const std::filesystem::path& file) {
  const YamlFile y = YamlFile::load(file);
  Diagnostics diags;
  std::vector<PublishedMfu> out;
  const std::vector<std::string> devices = shipped_device_names();
  FieldReader root = y.root(diags);
  std::vector<FieldReader> rows = root.list("published_mfu");
  root.finish();
  for (FieldReader& r : rows) {
    PublishedMfu m;
    m.gpu = r.text("gpu");
    if (!m.gpu.empty() && std::find(devices.begin(), devices.end(), m.gpu) == devices.end()) {
      r.error("gpu", unknown_device_message(m.gpu, devices));
    }
    m.setting = r.choice("setting", {"dense", "moe"});
    m.gemm = r.choice("gemm", {"bf16", "fp8", "mxfp8", "nvfp4"});
    m.mfu = r.number("mfu", 0.01, 1.0);
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
  return f ? std::string(dtype_name(*f)) : "bf16";  // a 16-bit or fp32 run counts with the 16-bit figures
}

std::optional<PublishedMfu> published_mfu_ceiling(const std::vector<PublishedMfu>& table, const ModelSpec& model, const Cluster& cluster) {
  const std::string setting = mfu_setting(model), gemm = mfu_gemm(model);
  std::set<std::string> gpus;
  for (const NodeType& t : cluster.node_types) gpus.insert(t.gpu.name);
  std::optional<PublishedMfu> best;
  for (const std::string& g : gpus) {
    const auto it = std::find_if(table.begin(), table.end(),
                                 [&](const PublishedMfu& m) { return m.gpu == g && m.setting == setting && m.gemm == gemm; });
    if (it == table.end()) return std::nullopt;
    if (!best || it->mfu > best->mfu) best = *it;
  }
  return best;
}

}  // namespace hetsim
