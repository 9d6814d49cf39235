// File: kernels_profile/cost_model.cpp
#include "kernels_profile/cost_model.hpp"

#include <algorithm>

namespace hetsim {

std::string_view cost_source_name(CostSource s) {
  switch (s) {
    case CostSource::kRoofline: return "roofline";
  }
  return "?";
}

namespace {
double roofline(const Device& d, double flops, double bytes, double flop_rate) {
  const double compute_s = flops / flop_rate;
  const double memory_s = bytes / (d.memory_bandwidth_Bps * d.efficiency.memory);
  return std::max(compute_s, memory_s) + d.efficiency.kernel_launch_s;
}
}  // namespace

OpCost CostModel::op_time(const Device& device, const Op& op, DType dtype, Pass pass) const {
  // Matrix products run at the dtype's tensor-core peak; other arithmetic at the fp32 vector peak.
  const double rate = is_matmul(op.kind) ? device.peak(dtype) * device.efficiency.matmul
                                         : device.peak(DType::kFp32) * device.efficiency.vector;
  if (pass == Pass::kForward) return {roofline(device, op.fwd_flops, op.fwd_bytes, rate), CostSource::kRoofline};
  double s = roofline(device, op.bwd_flops, op.bwd_bytes, rate);
  if (op.recompute_flops > 0) s += roofline(device, op.recompute_flops, op.fwd_bytes, rate);
  return {s, CostSource::kRoofline};
}

OpCost CostModel::optimizer_time(const Device& device, double params, double bytes_per_param) const {
  // Reads and writes every byte of state once (fused multi-tensor kernels).
  return {roofline(device, 10 * params, 2 * params * bytes_per_param, device.peak(DType::kFp32) * device.efficiency.vector),
          CostSource::kRoofline};
}

}  // namespace hetsim
