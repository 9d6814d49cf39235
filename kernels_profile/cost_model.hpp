// File: kernels_profile/cost_model.hpp
// Compute time of one operator on one device type. Today: a roofline from FLOPs and bytes with
// the device's stated efficiency factors, plus a kernel launch cost. Every estimate says where it
// came from so reports can state how much of the compute time is assumed rather than measured.
#pragma once

#include <string_view>

#include "kernels_profile/device.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {

enum class CostSource { kRoofline };
[[nodiscard]] std::string_view cost_source_name(CostSource s);

enum class Pass { kForward, kBackward };

struct OpCost {
  double seconds = 0;
  CostSource source = CostSource::kRoofline;
};

class CostModel {
 public:
  // Time of `op` (built for `dtype`) in `pass` on `device`. Backward includes recompute work.
  // Precondition: device.supports(dtype) (the planner resolves fallbacks first).
  [[nodiscard]] OpCost op_time(const Device& device, const Op& op, DType dtype, Pass pass) const;
  // Optimizer step over `params` elements: a memory-bound sweep of weights, gradients and states.
  [[nodiscard]] OpCost optimizer_time(const Device& device, double params, double bytes_per_param) const;
};

}  // namespace hetsim
