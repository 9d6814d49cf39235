// File: kernels_profile/fused_attention.hpp
// `attention: fused`: attention by cuDNN's fused flash-style kernels, as Transformer Engine runs it
// on Hopper and newer (Megatron-Core's default backend there), costed as hetsim's measured
// FlashAttention-2 rows (flash_attention_*) sped up by the published ratio of the two kernels'
// TFLOP/s on the same GPU (kernels_profile/published/fused-attention.csv: FlashAttention-3 paper,
// H100). The ratio is read at the op's head dimension and sequence length: linear in log2 of each
// between the published points, the nearest point's beyond them; a causal backward without
// published causal rows takes the non-causal ones.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace hetsim {

struct FusedAttentionPoint {
  bool backward = false;
  bool causal = false;
  double head_dim = 0, seq_len = 0;
  double flash_tflops = 0, fused_tflops = 0;
};

struct FusedAttentionTable {
  std::string measured_on;              // the GPU the figures were measured on
  std::vector<std::string> applies_to;  // devices whose flash rows the ratio scales (every row names its source)
  std::vector<FusedAttentionPoint> points;
  // flash time / fused time at this shape; nullopt without points for the pass.
  [[nodiscard]] std::optional<double> speedup(bool backward, bool causal, double head_dim, double seq_len) const;
};

// Reads one table (throws InputError naming file:line:col).
[[nodiscard]] std::vector<FusedAttentionTable> load_fused_attention(const std::filesystem::path& file);

// The shipped tables (kernels_profile/published/*.csv, read once per process): the one applying
// to `device` (or to the device it borrows kernel tables from), else nullptr.
[[nodiscard]] const FusedAttentionTable* fused_attention_for(const std::string& device, const std::string& kernels_from);

}  // namespace hetsim
