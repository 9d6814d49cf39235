// File: planner/block_costs.cpp
#include "planner/block_costs.hpp"

#include <tuple>

#include "base/input_error.hpp"
#include "base/log.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace hetsim {

std::vector<BlockCost> block_costs(const OpGraph& graph, const Device& device, const CostModel& cost) {
  const int layers = static_cast<int>(graph.layers);
  std::vector<BlockCost> blocks(static_cast<size_t>(layers) + 2);
  blocks.front().name = "embedding";
  blocks.back().name = "head";
  for (int l = 0; l < layers; ++l) blocks[l + 1].name = "layer" + std::to_string(l);
  std::vector<std::optional<LayerTimes>> profiled(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    profiled[b] = cost.layer_profile(graph.model, device.name, blocks[b].name, graph.micro_batch);
    if (profiled[b]) {  // measured on a healthy GPU: a degraded node type's slowdown applies
      blocks[b].fwd_s = device.slowdown * profiled[b]->fwd_s;
      blocks[b].bwd_s = device.slowdown * profiled[b]->bwd_s;
      blocks[b].optimizer_s = device.slowdown * profiled[b]->optimizer_s;
      blocks[b].sources[static_cast<int>(CostSource::kLayerProfile)] = blocks[b].fwd_s + blocks[b].bwd_s;
    }
  }
  std::vector<double> fwd_flops(blocks.size(), 0.0);  // each pass of a profiled row is bounded on its own
  for (const Op& op : graph.ops) {
    const int b = op.layer < 0 ? 0 : (op.layer >= layers ? layers + 1 : op.layer + 1);
    BlockCost& bc = blocks[b];
    bc.params += op.params;
    bc.saved_bytes += op.saved_bytes;
    bc.model_flops += op.fwd_flops + op.bwd_flops;
    fwd_flops[static_cast<size_t>(b)] += op.fwd_flops;
    if (profiled[b]) continue;
    for (Pass pass : {Pass::kForward, Pass::kBackward}) {
      const OpCost c = cost.op_time(device, op, graph.dtype, pass);
      (pass == Pass::kForward ? bc.fwd_s : bc.bwd_s) += c.seconds;
      for (int s = 0; s < kCostSources; ++s) bc.sources[s] += c.by_source[s];
    }
  }
  // A profiled time faster than the GPU's peak FLOP rate allows is a wrong profile, not a fast GPU:
  // the forward and the backward each (a 1 ns forward beside a plausible backward was taken).
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (!profiled[b] || !device.supports(graph.dtype)) continue;
    const LayerTimes& row = *profiled[b];
    const double peak = device.peak(graph.dtype);
    const double bwd_flops = blocks[b].model_flops - fwd_flops[b];
    for (const auto& [field, what, flops, seconds] : {std::tuple{"fwd_s", "forward", fwd_flops[b], row.fwd_s},
                                                       std::tuple{"bwd_s", "backward", bwd_flops, row.bwd_s}}) {
      const double fastest = flops / peak;
      if (seconds >= fastest) continue;
      throw InputError({Diagnostic{row.file.empty() ? "--layer-profile" : row.file, row.line, 0, field,
                                   graph.model + " " + blocks[b].name + " on " + device.name + " at micro-batch " +
                                       std::to_string(graph.micro_batch) +
                                       (row.line_above > 0 ? " (between this row and line " + std::to_string(row.line_above) + ")" : "") +
                                       ": the " + what + " " + format_time(seconds) + " is faster than the GPU's peak " +
                                       std::string(dtype_name(graph.dtype)) + " rate allows for its " + format_double("%.3g", flops) +
                                       " FLOP (at least " + format_time(fastest) + ")"}});
    }
  }
  return blocks;
}

KernelSupport cluster_kernel_support(const Cluster& cluster) {
  KernelSupport k{!cluster.node_types.empty()};
  for (const NodeType& nt : cluster.node_types) k.flash_attention = k.flash_attention && nt.gpu.flash_attention;
  return k;
}

namespace {

// `attention: flash` on a GPU type without a fused kernel: that type runs the unfused path
// (uses_flash_attention()); said once per plan, on stderr.
void check_attention(const ModelSpec& model, const Cluster& cluster) {
  const AttentionKernel k = model.training.attention;
  if (k != AttentionKernel::kFlash && k != AttentionKernel::kFused) return;
  for (const NodeType& nt : cluster.node_types) {
    if (nt.gpu.flash_attention) continue;
    const Diagnostic& d = model.attention_location;
    std::string msg = d.file;
    msg.append(":").append(std::to_string(d.line)).append(":").append(std::to_string(d.column));
    msg.append(": warning: training.attention: ").append(attention_kernel_name(k)).append(" is not available on ").append(nt.gpu.name);
    msg.append(" (node type ").append(nt.name).append("); it runs the unfused attention path");
    log_info(msg);
  }
}

}  // namespace

DType resolve_dtype(const ModelSpec& model, const Cluster& cluster) {
  check_attention(model, cluster);
  auto first_lacking = [&](DType t) -> const NodeType* {
    for (const NodeType& nt : cluster.node_types) {
      if (!nt.gpu.supports(t)) return &nt;
    }
    return nullptr;
  };
  // A low-precision GEMM recipe needs its format on every GPU type (no fallback: a job's GEMMs
  // share one numerics).
  for (const GemmPrecision p : gemm_recipes_used(model.training)) {
    const DType format = gemm_input_format(p).value_or(model.training.dtype);
    if (const NodeType* without = first_lacking(format)) {
      Diagnostic d = model.gemm_precision_location;
      d.message = std::string(gemm_precision_name(p)) + " needs " + gemm_format_hardware(p) + "; " + without->gpu.name +
                  " (node type " + without->name + " of cluster " + cluster.name + ") has no " + std::string(dtype_name(format)) +
                  " peak in its device file";
      throw InputError({d});
    }
  }
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

namespace {

// The weights a device holds in the training dtype (`e` bytes), given the share of the parameters
// whose GEMMs run in the recipe's format (gemm_precision_param_share, which walks the model's ops:
// callers count it once).
double held_weights(const ModelSpec& model, double e, double share) { return model.training.fp8_param_gather ? e * (1 - share) : e; }

}  // namespace

double state_bytes_per_param(const ModelSpec& model, DType dtype, bool fp8_any_layout) {
  const double e = dtype_bytes(dtype);
  const bool mixed = e < 4;
  const double master = mixed ? 4 : 0;
  const double moments = model.training.optimizer == Optimizer::kAdam ? 8 : 4;
  double share = 0, copies = 0;  // (one walk of the model's ops for both)
  for (const auto& [p, s] : gemm_precision_param_shares(model)) {
    share += s;
    copies += weight_copy_bytes(p, fp8_any_layout) * s;
  }
  return held_weights(model, e, share) + grad_bytes_per_param(model, dtype) + master + moments + copies;
}

double held_weight_bytes_per_param(const ModelSpec& model, DType dtype) {
  return held_weights(model, dtype_bytes(dtype), model.training.fp8_param_gather ? gemm_precision_param_share(model) : 0);
}

double gathered_weight_bytes_per_param(const ModelSpec& model, DType dtype) {
  const double e = dtype_bytes(dtype);
  const GemmPrecision p = model.training.gemm_precision;
  if (!model.training.fp8_param_gather || p == GemmPrecision::kMxfp8) return e;
  const double share = gemm_precision_param_share(model);
  return e * (1 - share) + share * dtype_bytes(gemm_input_format(p).value_or(dtype));
}

double low_precision_copy_bytes_per_param(const ModelSpec& model, bool fp8_any_layout) {
  return weight_copy_bytes_per_param(model, fp8_any_layout);
}

double grad_bytes_per_param(const ModelSpec& model, DType dtype) {
  return model.training.fp32_grads ? 4.0 : dtype_bytes(dtype);
}

double optimizer_traffic_per_param(const ModelSpec& model, DType dtype, bool fp8_any_layout) {
  const double e = dtype_bytes(dtype), g = grad_bytes_per_param(model, dtype);
  const double moments = model.training.optimizer == Optimizer::kAdam ? 8 : 4;
  const double update = (4 + 4 + moments) /*read weights, gradient, moments*/ + (4 + moments) /*write*/;
  const double norm = 4;  // read every fp32 gradient once
  if (e >= 4) return update + norm;
  const double copy_in = g < 4 ? g + 4 : 0;         // 16-bit gradient -> fp32 main gradient
  const double unscale = dtype == DType::kFp16 ? 8 : 0;  // read and write the fp32 gradient
  const double copy_out = 4 + e;                    // fp32 master -> 16-bit weights
  // Low-precision GEMM recipes: the updated 16-bit weights cast to their copies once per step.
  double recast = 0;
  for (const auto& [p, share] : gemm_precision_param_shares(model)) recast += share * (e + weight_copy_bytes(p, fp8_any_layout));
  return copy_in + unscale + norm + update + copy_out + recast;
}

std::string memory_shortfall_text(int gpu, const Device& device, double need_bytes, const std::string& parts) {
  std::string out = "gpu" + std::to_string(gpu) + " (" + device.name + ") needs " + format_bytes(need_bytes);
  if (!parts.empty()) out.append(" (").append(parts).append(")");
  return out.append(" but has ").append(format_bytes(device.memory_bytes)).append(": short by ").append(format_bytes(need_bytes - device.memory_bytes));
}

}  // namespace hetsim
