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

// Fused layernorm or RMSNorm (apex/Megatron) over `rows` rows of `width`: forward reads x and
// writes y; backward reads dy and x and writes dx (3 tensors), plus the parameters (RMSNorm: a
// scale; layernorm: scale and shift) and their gradients. Keeps its input.
[[nodiscard]] Op norm_op(const std::string& name, int layer, double rows, double width, bool rms, std::vector<long> shape,
                         double elem_bytes);

// A dropout kernel over `n` elements: reads x, writes y and a 1-byte mask; backward reads dy and
// the mask, writes dx. Keeps the mask, and with `keep_output` its output for the consumer's backward.
[[nodiscard]] Op dropout_op(const std::string& name, int layer, double n, std::vector<long> shape, bool keep_output,
                            double elem_bytes);

// Autograd's sums where a tensor of `n` elements is read by `consumers` ops: the gradients arriving
// from them are added one by one (PyTorch's InputBuffer: one add per further consumer, reading two
// gradients and writing one, 3n elements and n FLOPs each), added to `op`'s backward. Views that
// slice a tensor (q, k, v of a packed projection) write disjoint parts and need no sum.
void add_fork_gradient_sums(Op& op, double n, int consumers, double elem_bytes);

// A residual add over `n` elements summing `branches` tensors (the residual stream and what its
// branches computed from it): forward reads them and writes the sum. Its backward passes the
// gradient to every branch unchanged; autograd then sums the gradients where the stream forked,
// one add per further branch (reads two gradients, writes one: 3n each). With `dropout`,
// Megatron's fused bias+dropout+add: forward also writes a 1-byte mask (kept), and backward also
// runs the dropout's gradient (reads dy and the mask, writes dx).
[[nodiscard]] Op residual_op(const std::string& name, int layer, double n, int branches, bool dropout,
                             std::vector<long> shape, double elem_bytes);

// Megatron's fused bias+GeLU over `n` elements: forward reads x (and the bias), writes y;
// backward reads dy and x, writes dx. Keeps its input.
[[nodiscard]] Op gelu_op(const std::string& name, int layer, double n, std::vector<long> shape, double elem_bytes);

// Squared ReLU (relu(x)^2, Megatron-Core's squared_relu) over `n` elements: as GeLU's traffic, 2
// FLOPs an element forward, 4 backward. Keeps its input.
[[nodiscard]] Op relu2_op(const std::string& name, int layer, double n, std::vector<long> shape, double elem_bytes);

// SwiGLU over `n` output elements: forward reads gate and up (2n), writes their product; backward
// reads dy, gate and up, writes both gradients. Keeps gate and up.
[[nodiscard]] Op swiglu_op(const std::string& name, int layer, double n, std::vector<long> shape, double elem_bytes);

}  // namespace hetsim
