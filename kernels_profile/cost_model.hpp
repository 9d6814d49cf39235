// File: kernels_profile/cost_model.hpp
// Compute time of one operator on one device type, from the best source available:
//   1. a per-layer profile covering the block (planner asks via layer_profile()),
//   2. measured kernel tables: measured, interpolated, or fitted (kernel_table.hpp); a GPU without
//      tables of its own may borrow another's (device file: kernels_from), scaled,
//   3. the roofline: max(FLOPs / (peak x efficiency), bytes / (bandwidth x efficiency)) + launch,
//      with the efficiencies the device file states as assumptions.
// Every estimate says how many of its seconds came from each source, so reports can state how
// much of the compute time is measured rather than assumed.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string_view>

#include "kernels_profile/device.hpp"
#include "kernels_profile/kernel_table.hpp"
#include "kernels_profile/layer_profile.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {

using SourceSeconds = std::array<double, kCostSources>;

enum class Pass { kForward, kBackward };

struct OpCost {
  double seconds = 0;
  SourceSeconds by_source{};
};

class CostModel {
 public:
  CostModel() = default;  // roofline only
  CostModel(std::shared_ptr<const KernelTables> tables, std::shared_ptr<const LayerProfiles> profiles)
      : tables_(std::move(tables)), profiles_(std::move(profiles)) {}
  // Tables from kernels_profile/measured/*.csv (none: roofline only) and an optional profile file.
  [[nodiscard]] static CostModel shipped(const std::string& layer_profile_path = "");

  // Time of `op` (built for `dtype`) in `pass` on `device`. Backward includes recompute work.
  // Precondition: device.supports(dtype) (the planner resolves fallbacks first).
  [[nodiscard]] OpCost op_time(const Device& device, const Op& op, DType dtype, Pass pass) const;
  // Optimizer step over `params` elements: memory-bound sweeps moving `traffic_per_param` bytes
  // per element in all (reads and writes; planner/block_costs: optimizer_traffic_per_param).
  [[nodiscard]] OpCost optimizer_time(const Device& device, double params, double traffic_per_param) const;
  [[nodiscard]] std::optional<LayerTimes> layer_profile(const std::string& model, const std::string& device,
                                                        const std::string& block, long micro_batch) const;
  [[nodiscard]] const KernelTables* tables() const { return tables_.get(); }
  [[nodiscard]] const LayerProfiles* layer_profiles() const { return profiles_.get(); }

 private:
  // A kernel's rows for `device`: its own, else (device file's kernels_from) another GPU's, whose
  // estimates are scaled to this one and say so (CostSource::kScaled).
  struct Series {
    const KernelSeries* series = nullptr;
    double scale = 1;
    bool borrowed = false;
    // Borrowed rows: each time's fixed cost (the lender's kernel_launch) is this GPU's own
    // (fixed_s), the rest scaled: a small kernel is no faster on a GPU of a higher peak.
    double fixed_s = 0, lender_fixed_s = 0;
    [[nodiscard]] std::optional<KernelEstimate> gemm(const GemmShape& shape) const;
    [[nodiscard]] std::optional<KernelEstimate> by_bytes(double bytes) const;
    [[nodiscard]] std::optional<KernelEstimate> scaled(std::optional<KernelEstimate> e) const;
  };
  [[nodiscard]] Series find(const Device& device, const std::string& kernel, DType dtype) const;
  [[nodiscard]] std::optional<KernelEstimate> from_tables(const Device& device, const Op& op, DType dtype, Pass pass) const;
  [[nodiscard]] std::optional<KernelEstimate> gemm_from_tables(const Device& device, const Op& op, DType dtype, Pass pass) const;
  [[nodiscard]] std::optional<KernelEstimate> flash_attention(const Device& device, const Op& op, DType dtype, Pass pass) const;
  [[nodiscard]] double roofline_s(const Device& device, const Op& op, DType dtype, Pass pass) const;

  std::shared_ptr<const KernelTables> tables_;
  std::shared_ptr<const LayerProfiles> profiles_;
};

// The memory-bound kernel of the tables that stands for `kind` in `pass` (e.g. "layernorm_bwd").
[[nodiscard]] std::string table_kernel(OpKind kind, Pass pass);

// Host time `op` makes the GPU wait for in `pass` under `host` (a calibration profile's costs):
// an expert GEMM's issue per local expert, an MoE layer's bookkeeping on its permutation. Zero for
// other operators and without a profile.
[[nodiscard]] double host_time(const FittedCosts& host, const Op& op, Pass pass);
// The kernels the framework runs for `op` in `pass`, casts aside (the calibration profile's
// kernel_overhead is paid once each).
[[nodiscard]] double kernel_count(const Op& op, Pass pass);

}  // namespace hetsim
