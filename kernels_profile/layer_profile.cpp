// File: kernels_profile/layer_profile.cpp
#include "kernels_profile/layer_profile.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "base/input_error.hpp"
#include "base/text.hpp"

namespace hetsim {

namespace {

const std::vector<std::string> kColumns{"model", "device", "layer", "micro_batch", "tp", "fwd_s", "bwd_s", "optimizer_s", "source"};

bool valid_layer(const std::string& l) {
  if (l == "embedding" || l == "transformer" || l == "head") return true;
  if (!l.starts_with("layer") || l.size() == 5) return false;
  return std::all_of(l.begin() + 5, l.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

LayerProfiles LayerProfiles::load(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::ifstream in(file);
  if (!in) throw InputError(name, "", "cannot open file");
  LayerProfiles out;
  Diagnostics diags;
  std::string line;
  int line_no = 0;
  bool header_seen = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::pair<std::string, int>> fields;
    std::istringstream ss(line);
    std::string f;
    int col = 1;
    while (std::getline(ss, f, ',')) {
      fields.push_back({f, col});
      col += static_cast<int>(f.size()) + 1;
    }
    if (!line.empty() && line.back() == ',') fields.push_back({"", col});
    if (!header_seen) {
      header_seen = true;
      std::vector<std::string> header;
      for (const auto& [h, c] : fields) header.push_back(h);
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
    auto number = [&](int c, double min) {
      double v = 0;
      const std::string& s = fields[c].first;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || p != s.data() + s.size() || s.empty()) err(c, in_quotes(s) + " is not a number");
      else if (!(v >= min)) err(c, s + " is out of range; expected at least " + std::to_string(static_cast<long>(min)));
      return v;
    };
    const size_t before = diags.size();
    LayerProfileRow r;
    r.model = fields[0].first;
    r.device = fields[1].first;
    r.layer = fields[2].first;
    if (r.model.empty()) err(0, "missing value");
    if (r.device.empty()) err(1, "missing value");
    if (!valid_layer(r.layer)) err(2, in_quotes(r.layer) + " is not embedding, transformer, head or layerN");
    r.micro_batch = static_cast<long>(number(3, 1));
    r.tp = static_cast<long>(number(4, 1));
    r.times.fwd_s = number(5, 0);
    r.times.bwd_s = number(6, 0);
    r.times.optimizer_s = number(7, 0);
    r.source = fields[8].first;
    if (r.source.empty()) err(8, "missing value: where and when the profile was taken");
    if (diags.size() == before) out.rows_.push_back(r);
  }
  if (!header_seen) diags.add({name, 0, 0, "", "no header line"});
  diags.throw_if_any();
  return out;
}

std::optional<LayerTimes> LayerProfiles::lookup_exact_layer(const std::string& model, const std::string& device,
                                                            const std::string& layer, long mb) const {
  std::map<long, LayerTimes> by_mb;
  for (const LayerProfileRow& r : rows_) {
    if (r.model == model && r.device == device && r.layer == layer && r.tp == 1) by_mb[r.micro_batch] = r.times;
  }
  if (by_mb.empty()) return std::nullopt;
  if (auto it = by_mb.find(mb); it != by_mb.end()) return it->second;
  const auto hi = by_mb.upper_bound(mb);
  if (hi == by_mb.begin() || hi == by_mb.end()) return std::nullopt;  // no extrapolation
  const auto lo = std::prev(hi);
  const double t = static_cast<double>(mb - lo->first) / static_cast<double>(hi->first - lo->first);
  auto mix = [t](double a, double b) { return a + t * (b - a); };
  return LayerTimes{mix(lo->second.fwd_s, hi->second.fwd_s), mix(lo->second.bwd_s, hi->second.bwd_s),
                    mix(lo->second.optimizer_s, hi->second.optimizer_s), true};
}

std::optional<LayerTimes> LayerProfiles::lookup(const std::string& model, const std::string& device,
                                                const std::string& block, long micro_batch) const {
  if (auto exact = lookup_exact_layer(model, device, block, micro_batch)) return exact;
  if (block.starts_with("layer")) return lookup_exact_layer(model, device, "transformer", micro_batch);
  return std::nullopt;
}

}  // namespace hetsim
