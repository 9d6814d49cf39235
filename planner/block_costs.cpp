// File: planner/block_costs.cpp
#include "planner/block_costs.hpp"

#include "base/input_error.hpp"

namespace hetsim {

std::vector<BlockCost> block_costs(const OpGraph& graph, const Device& device, const CostModel& cost) {
  const int layers = static_cast<int>(graph.layers);
  std::vector<BlockCost> blocks(static_cast<size_t>(layers) + 2);
  blocks.front().name = "embedding";
  blocks.back().name = "head";
  for (int l = 0; l < layers; ++l) blocks[l + 1].name = "layer" + std::to_string(l);
  for (const Op& op : graph.ops) {
    const int b = op.layer < 0 ? 0 : (op.layer >= layers ? layers + 1 : op.layer + 1);
    BlockCost& bc = blocks[b];
    bc.fwd_s += cost.op_time(device, op, graph.dtype, Pass::kForward).seconds;
    bc.bwd_s += cost.op_time(device, op, graph.dtype, Pass::kBackward).seconds;
    bc.params += op.params;
    bc.saved_bytes += op.saved_bytes;
    bc.model_flops += op.fwd_flops + op.bwd_flops;
  }
  return blocks;
}

DType resolve_dtype(const ModelSpec& model, const Cluster& cluster) {
  auto first_lacking = [&](DType t) -> const NodeType* {
    for (const NodeType& nt : cluster.node_types) {
      if (!nt.gpu.supports(t)) return &nt;
    }
    return nullptr;
  };
  const NodeType* lacking = first_lacking(model.training.dtype);
  if (lacking == nullptr) return model.training.dtype;
  const std::string want(dtype_name(model.training.dtype));
  const std::string where = lacking->gpu.name + " (node type " + lacking->name + " of cluster " + cluster.name + ")";
  Diagnostic d = model.dtype_location;
  if (model.training.dtype_fallback) {
    const DType fb = *model.training.dtype_fallback;
    const NodeType* lacking_fb = first_lacking(fb);
    if (lacking_fb == nullptr) return fb;
    d.message = want + " is not supported by " + where + " and the fallback " + std::string(dtype_name(fb)) +
                " is not supported by " + lacking_fb->gpu.name;
  } else {
    d.message = want + " is not supported by " + where + "; set training.dtype_fallback (e.g. fp16) or use another dtype";
  }
  throw InputError({d});
}

double state_bytes_per_param(const ModelSpec& model, DType dtype) {
  const double e = dtype_bytes(dtype);
  const bool mixed = e < 4;
  const double master = mixed ? 4 : 0;
  const double moments = model.training.optimizer == Optimizer::kAdam ? 8 : 4;
  return e /*weights*/ + e /*gradients*/ + master + moments;
}

}  // namespace hetsim
