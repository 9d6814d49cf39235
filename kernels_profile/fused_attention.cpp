// File: kernels_profile/fused_attention.cpp
#include "kernels_profile/fused_attention.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "base/csv_reader.hpp"
#include "base/data_dir.hpp"
#include "base/text.hpp"
#include "kernels_profile/device.hpp"

namespace hetsim {
namespace {

// Linear in log2(x) between the two points around x; the nearest beyond them. `at` is sorted by x.
double log_interpolate(const std::vector<std::pair<double, double>>& at, double x) {
  if (x <= at.front().first) return at.front().second;
  if (x >= at.back().first) return at.back().second;
  const auto hi = std::lower_bound(at.begin(), at.end(), x, [](const auto& p, double v) { return p.first < v; });
  const auto lo = hi - 1;
  const double t = (std::log2(x) - std::log2(lo->first)) / (std::log2(hi->first) - std::log2(lo->first));
  return lo->second + t * (hi->second - lo->second);
}

}  // namespace

std::optional<double> FusedAttentionTable::speedup(bool backward, bool causal, double head_dim, double seq_len) const {
  auto rows_for = [&](bool c) {
    std::map<double, std::vector<std::pair<double, double>>> by_head;  // head_dim -> (seq, ratio)
    for (const FusedAttentionPoint& p : points) {
      if (p.backward != backward || p.causal != c) continue;
      by_head[p.head_dim].push_back({p.seq_len, p.fused_tflops / p.flash_tflops});  // both > 0 (the loader)
    }
    return by_head;
  };
  auto by_head = rows_for(causal);
  if (by_head.empty()) by_head = rows_for(!causal);
  if (by_head.empty()) return std::nullopt;
  std::vector<std::pair<double, double>> at_head;  // head_dim -> ratio at this sequence length
  for (auto& [h, rows] : by_head) {
    std::sort(rows.begin(), rows.end());
    at_head.push_back({h, log_interpolate(rows, seq_len)});
  }
  return log_interpolate(at_head, head_dim);
}

std::vector<FusedAttentionTable> load_fused_attention(const std::filesystem::path& file) {
  const std::vector<std::string> columns{"measured_on", "applies_to", "pass", "causal", "head_dim", "seq_len",
                                         "flash_tflops", "fused_tflops", "source"};
  enum Col { kMeasuredOn, kAppliesTo, kPass, kCausal, kHeadDim, kSeq, kFlash, kFused, kSource };
  std::map<std::string, FusedAttentionTable> tables;
  read_csv(file, columns, [&](const CsvRow& row) {
    const std::string& on = row.required(kMeasuredOn, "the GPU the figures were measured on");
    const std::string& applies = row.required(kAppliesTo, "the devices the ratio applies to");
    if (!on.empty()) check_shipped_device(row, kMeasuredOn, on);
    std::vector<std::string> devices;
    std::istringstream in(applies);
    for (std::string d; in >> d;) {
      check_shipped_device(row, kAppliesTo, d);
      devices.push_back(d);
    }
    const std::string& pass = row.required(kPass);
    if (!pass.empty() && pass != "forward" && pass != "backward") row.error(kPass, "\"" + pass + "\" is not forward or backward");
    const std::string& causal = row.required(kCausal);
    if (!causal.empty() && causal != "true" && causal != "false") row.error(kCausal, "\"" + causal + "\" is not true or false");
    const auto head = row.integer(kHeadDim, 1, 4096), seq = row.integer(kSeq, 1, 1L << 24);
    const auto flash = row.number(kFlash, 1e-3, true, 1e6), fused = row.number(kFused, 1e-3, true, 1e6);
    const std::string& source = row.required(kSource, "where the figures were published");
    const bool known = (pass == "forward" || pass == "backward") && (causal == "true" || causal == "false");
    if (on.empty() || applies.empty() || source.empty() || !known || !head || !seq || !flash || !fused) return;
    FusedAttentionTable& t = tables[on];
    if (t.measured_on.empty()) {
      t.measured_on = on;
      t.applies_to = devices;
    } else if (t.applies_to != devices) {
      row.error(kAppliesTo, "differs from this GPU's first row's (" + join(t.applies_to) + ")");
      return;
    }
    const FusedAttentionPoint p{pass == "backward", causal == "true", static_cast<double>(*head), static_cast<double>(*seq),
                                *flash, *fused};
    for (const FusedAttentionPoint& q : t.points) {
      if (q.backward == p.backward && q.causal == p.causal && q.head_dim == p.head_dim && q.seq_len == p.seq_len) {
        row.error(kSeq, "a second row for this GPU, pass, mask, head dimension and sequence length");
        return;
      }
    }
    t.points.push_back(p);
  });
  std::vector<FusedAttentionTable> out;
  for (auto& [name, t] : tables) out.push_back(std::move(t));
  return out;
}

const FusedAttentionTable* fused_attention_for(const std::string& device, const std::string& kernels_from) {
  static const std::vector<FusedAttentionTable> tables = [] {
    std::vector<FusedAttentionTable> all;
    for (const auto& f : files_with_extension(data_root() / "kernels_profile/published", ".csv")) {
      for (FusedAttentionTable& t : load_fused_attention(f)) all.push_back(std::move(t));
    }
    return all;
  }();
  for (const std::string& name : {device, kernels_from}) {
    if (name.empty()) continue;
    for (const FusedAttentionTable& t : tables) {
      if (std::find(t.applies_to.begin(), t.applies_to.end(), name) != t.applies_to.end()) return &t;
    }
  }
  return nullptr;
}

}  // namespace hetsim
