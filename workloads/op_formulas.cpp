// File: workloads/op_formulas.cpp
// Conventions (workloads/README.md): a multiply-add is 2 FLOPs; backward of a matrix product is
// twice its forward (input and weight gradients); bytes count each tensor read or written once.
#include "workloads/op_formulas.hpp"

#include <algorithm>

namespace hetsim {

Op linear_op(const std::string& name, int layer, double rows, double in, double out, bool bias, std::vector<long> shape,
             double elem_bytes, OpKind kind, bool save_input) {
  const double e = elem_bytes;
  Op op = Op::make(name, kind, layer);
  op.shape = std::move(shape);
  op.gemm = {1, static_cast<long>(rows), static_cast<long>(out), static_cast<long>(in)};
  op.fwd_flops = 2 * rows * in * out;
  op.bwd_flops = 2 * op.fwd_flops;
  op.fwd_bytes = (rows * in + in * out + rows * out) * e;
  // dX = dY·W^T reads dY, W, writes dX; dW = X^T·dY reads X, dY, writes dW.
  op.bwd_bytes = (2 * rows * out + in * out + 2 * rows * in + in * out) * e;
  op.params = in * out + (bias ? out : 0);
  op.saved_bytes = save_input ? rows * in * e : 0;
  return op;
}

Op vector_op(const std::string& name, OpKind kind, int layer, double elements, double flops_per, double tensors_moved,
             double params, double saved_elements, std::vector<long> shape, double elem_bytes) {
  const double e = elem_bytes;
  Op op = Op::make(name, kind, layer);
  op.shape = std::move(shape);
  op.fwd_flops = flops_per * elements;
  op.bwd_flops = 2 * op.fwd_flops;
  op.fwd_bytes = tensors_moved * elements * e + params * e;
  op.bwd_bytes = 2 * tensors_moved * elements * e + 2 * params * e;
  op.params = params;
  op.saved_bytes = saved_elements * e;
  return op;
}

Op norm_op(const std::string& name, int layer, double rows, double width, bool rms, std::vector<long> shape,
           double elem_bytes) {
  const double n = rows * width, params = rms ? width : 2 * width;
  Op op = vector_op(name, rms ? OpKind::kRmsNorm : OpKind::kLayerNorm, layer, n, rms ? 4 : 8, 2, params, n,
                    std::move(shape), elem_bytes);
  op.bwd_bytes = (3 * n + 2 * params) * elem_bytes;
  return op;
}

Op dropout_op(const std::string& name, int layer, double n, std::vector<long> shape, bool keep_output, double elem_bytes) {
  const double e = elem_bytes;
  Op op = vector_op(name, OpKind::kDropout, layer, n, 2, 2, 0, 0, std::move(shape), e);
  op.fwd_bytes = n * (2 * e + 1);
  op.bwd_bytes = n * (2 * e + 1);
  op.bwd_flops = n;
  op.saved_bytes = n * (1 + (keep_output ? e : 0));
  return op;
}

Op residual_op(const std::string& name, int layer, double n, int branches, bool dropout, std::vector<long> shape,
                double elem_bytes) {
  const double e = elem_bytes, merges = branches - 1;
  Op op = vector_op(name, OpKind::kResidual, layer, n, merges + (dropout ? 2 : 0), branches + 1, 0, 0, std::move(shape), e);
  op.bwd_flops = 0;
  op.bwd_bytes = 0;
  add_fork_gradient_sums(op, n, branches, e);
  if (dropout) {
    op.fwd_bytes += n;
    op.bwd_flops += n;
    op.bwd_bytes += n * (2 * e + 1);
    op.saved_bytes = n;
  }
  return op;
}

void add_fork_gradient_sums(Op& op, double n, int consumers, double elem_bytes) {
  if (consumers < 2) return;
  const double sums = consumers - 1;
  op.bwd_flops += n * sums;
  op.bwd_bytes += 3 * n * elem_bytes * sums;
}

Op gelu_op(const std::string& name, int layer, double n, std::vector<long> shape, double elem_bytes) {
  Op op = vector_op(name, OpKind::kActivation, layer, n, 8, 2, 0, n, std::move(shape), elem_bytes);
  op.bwd_bytes = 3 * n * elem_bytes;
  return op;
}

Op relu2_op(const std::string& name, int layer, double n, std::vector<long> shape, double elem_bytes) {
  Op op = vector_op(name, OpKind::kActivation, layer, n, 2, 2, 0, n, std::move(shape), elem_bytes);
  op.bwd_bytes = 3 * n * elem_bytes;
  return op;
}

Op swiglu_op(const std::string& name, int layer, double n, std::vector<long> shape, double elem_bytes) {
  Op op = vector_op(name, OpKind::kActivation, layer, n, 8, 3, 0, 2 * n, std::move(shape), elem_bytes);
  op.bwd_bytes = 5 * n * elem_bytes;
  return op;
}

// Declared in op_graph.hpp (the cost model reads it): the select-backward assembly as PyTorch's
// autograd runs it for q, k, v = qkv[0], qkv[1], qkv[2] of a packed [3, ...] output
// (kernels_profile/measured/layer-kernels: 3 fills, 4 copies and 2 of the adds of a layer's backward).
EagerGradBytes eager_grad_bytes(const Op& op, double elem_bytes) {
  EagerGradBytes g;
  const double e = elem_bytes, batch = static_cast<double>(op.gemm.batch), rows = static_cast<double>(op.gemm.m),
               cols = static_cast<double>(op.gemm.n);
  const double out = batch * rows * cols;  // elements of the output (its gradient)
  if (op.eager_bias_grad && out > 0) {
    g.bias_grad = (out + batch * cols) * e;
    g.kernels += 1;
  }
  if (const int v = op.eager_views; v > 1 && out > 0) {
    g.fill = v * out * e;
    g.copy = 2 * out * e + 2 * out * e;  // the views' parts in, the sum back
    g.add = (v - 1) * 3 * out * e;
    g.kernels += v + v + 1 + (v - 1);
  }
  return g;
}

EagerGradBytes eager_expert_bias_bytes(const Op& op, double elem_bytes, bool backward) {
  EagerGradBytes g;
  const double e = elem_bytes;
  const long experts = std::max(1L, op.gemm.batch);
  const double out = static_cast<double>(experts) * static_cast<double>(op.gemm.m) * static_cast<double>(op.gemm.n);
  if (!op.eager_expert_bias || out <= 0) return g;
  g.add = out * (backward ? 32 + 4 * e : 24 + 2 * e);
  g.kernels = static_cast<int>(experts) * (backward ? 5 : 2) + 2;  // experts: at most 2^16 (model.cpp)
  return g;
}

}  // namespace hetsim
