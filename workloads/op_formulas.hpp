// File: workloads/op_formulas.hpp
// FLOPs, bytes, parameters and saved activations of the operator shapes every model family
// uses (a linear layer over rows, a vector kernel over elements), in one place so that the
// transformer and U-Net builders cost the same operator the same way. Internal to workloads/.
#pragma once

#include <string>
#include <vector>

#include "workloads/op_graph.hpp"

namespace hetsim {

// y[rows, out] = x[rows, in] · W[in, out] (+ bias), output shaped `shape`, elements of
// `elem_bytes`. Keeps its input for the weight gradient when `save_input`. No inputs set.
[[nodiscard]] Op linear_op(const std::string& name, int layer, double rows, double in, double out, bool bias,
                           std::vector<long> shape, double elem_bytes, OpKind kind = OpKind::kLinear,
                           bool save_input = true);

// Elementwise or row-wise kernel over `elements`, `flops_per` FLOPs each, `tensors_moved` tensors
// of that size read or written in forward (backward moves twice as much), owning `params` and
// keeping `saved_elements` for backward. No inputs set.
[[nodiscard]] Op vector_op(const std::string& name, OpKind kind, int layer, double elements, double flops_per,
                           double tensors_moved, double params, double saved_elements, std::vector<long> shape,
                           double elem_bytes);

}  // namespace hetsim
