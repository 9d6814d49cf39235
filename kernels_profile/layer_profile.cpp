// File: kernels_profile/layer_profile.cpp
#include "kernels_profile/layer_profile.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/csv_reader.hpp"
#include "base/text.hpp"
#include "kernels_profile/device.hpp"

namespace hetsim {

namespace {

const std::vector<std::string> kColumns{"model", "device", "layer", "micro_batch", "tp", "fwd_s", "bwd_s", "optimizer_s", "source"};

bool valid_layer(const std::string& l) {
  if (l == "embedding" || l == "transformer" || l == "head") return true;
  if (!l.starts_with("layer") || l.size() == 5) return false;
  if (l.size() > 6 && l[5] == '0') return false;  // layer011 would be layer11 under another name
  return std::all_of(l.begin() + 5, l.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

LayerProfiles LayerProfiles::load(const std::filesystem::path& file) {
  enum Col { kModel, kDevice, kLayer, kMicroBatch, kTp, kFwd, kBwd, kOptimizer, kSource };
  LayerProfiles out;
  out.file_ = file.string();
  const std::vector<std::string> devices = shipped_device_names();
  // One row per model, device, layer, micro-batch and TP width: a second row of different times
  // silently replaced the first.
  std::map<std::tuple<std::string, std::string, std::string, long, long>, int> seen;
  read_csv(file, kColumns, [&](const CsvRow& row) {
    LayerProfileRow r;
    r.model = row.required(kModel);
    r.device = row.required(kDevice);
    r.layer = row.text(kLayer);
    bool ok = !r.model.empty() && !r.device.empty();
    if (!r.device.empty() && std::find(devices.begin(), devices.end(), r.device) == devices.end()) {
      row.error(kDevice, unknown_device_message(r.device, devices));
      ok = false;
    }
    if (!valid_layer(r.layer)) {
      row.error(kLayer, in_quotes(r.layer) + " is not embedding, transformer, head or layerN (N without leading zeros)");
      ok = false;
    }
    const auto mb = row.integer(kMicroBatch, 1, 1L << 30), tp = row.integer(kTp, 1, 1L << 20);
    const auto fwd = row.seconds(kFwd), bwd = row.seconds(kBwd), opt = row.number(kOptimizer, 0, true, 3600);
    r.source = row.required(kSource, "where and when the profile was taken");
    if (!ok || !mb || !tp || !fwd || !bwd || !opt || r.source.empty()) return;
    const auto [at, fresh] = seen.emplace(std::make_tuple(r.model, r.device, r.layer, *mb, *tp), row.line());
    if (!fresh) {
      row.error(kModel, "a second row for " + r.model + " on " + r.device + ", " + r.layer + ", micro_batch " + std::to_string(*mb) +
                            ", tp " + std::to_string(*tp) + " (the first is at line " + std::to_string(at->second) + ")");
      return;
    }
    r.micro_batch = *mb;
    r.tp = *tp;
    r.line = row.line();
    r.times = {*fwd, *bwd, *opt, false, out.file_, row.line(), 0};
    out.rows_.push_back(r);
  });
  return out;
}

void LayerProfiles::check_applies_to(const std::string& model, long layers, const std::vector<std::string>& devices) const {
  Diagnostics diags;
  std::vector<std::string> models, model_devices;
  bool used = false;
  auto note = [](std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  for (const LayerProfileRow& r : rows_) {
    note(models, r.model);
    if (r.model != model) continue;
    note(model_devices, r.device);
    if (r.layer.starts_with("layer")) {
      // valid_layer() let only digits through; more digits than a long holds are past any model too.
      const std::string digits = r.layer.substr(5);
      if (digits.size() > 18 || std::stol(digits) >= layers) {
        diags.add({file_, r.line, 0, "layer",
                   r.layer + " is past " + model + "'s " + std::to_string(layers) + " layers (layer0 to layer" +
                       std::to_string(layers - 1) + ")"});
      }
    }
    used = used || (r.tp == 1 && std::find(devices.begin(), devices.end(), r.device) != devices.end());
  }
  if (!used) {
    std::string why;
    if (models.empty()) {
      why = "the profile has no rows";
    } else if (model_devices.empty()) {
      why = "no row is for model " + in_quotes(model) + " (its rows are for " + join(models) + ")" + did_you_mean(model, models);
    } else {
      why = "no row for model " + in_quotes(model) + " is at tp 1 on one of the cluster's GPU types (" + join(devices) +
            "); its rows for this model are for " + join(model_devices);
    }
    diags.add({file_, 0, 0, "", why + ": it would apply to nothing; give a profile of this model and these GPUs, or leave --layer-profile out"});
  }
  diags.throw_if_any();
}

std::optional<LayerTimes> LayerProfiles::lookup_exact_layer(const std::string& model, const std::string& device,
                                                            const std::string& layer, long mb) const {
  std::map<long, LayerTimes> by_mb;
  for (const LayerProfileRow& r : rows_) {
    if (r.model == model && r.device == device && r.layer == layer && r.tp == 1) {
      LayerTimes& t = by_mb[r.micro_batch] = r.times;
      t.file = file_;
      t.line = r.line;
    }
  }
  if (by_mb.empty()) return std::nullopt;
  if (auto it = by_mb.find(mb); it != by_mb.end()) return it->second;
  const auto hi = by_mb.upper_bound(mb);
  if (hi == by_mb.begin() || hi == by_mb.end()) return std::nullopt;  // no extrapolation
  const auto lo = std::prev(hi);
  const double t = static_cast<double>(mb - lo->first) / static_cast<double>(hi->first - lo->first);
  auto mix = [t](double a, double b) { return a + t * (b - a); };
  return LayerTimes{mix(lo->second.fwd_s, hi->second.fwd_s), mix(lo->second.bwd_s, hi->second.bwd_s),
                    mix(lo->second.optimizer_s, hi->second.optimizer_s), true, file_, lo->second.line, hi->second.line};
}

std::optional<LayerTimes> LayerProfiles::lookup(const std::string& model, const std::string& device,
                                                const std::string& block, long micro_batch) const {
  if (auto exact = lookup_exact_layer(model, device, block, micro_batch)) return exact;
  if (block.starts_with("layer")) return lookup_exact_layer(model, device, "transformer", micro_batch);
  return std::nullopt;
}

}  // namespace hetsim
