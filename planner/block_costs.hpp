// File: planner/block_costs.hpp
// What one device type pays per model block (embedding, each transformer layer, head) for one
// micro-batch: forward and backward time from the cost model, parameters, saved activations.
// Also: which dtype a device type computes in (the model's, or its stated fallback).
#pragma once

#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {

struct BlockCost {
  std::string name;  // "embedding", "layer7", "head"
  double fwd_s = 0;
  double bwd_s = 0;  // includes recompute
  double params = 0;
  double saved_bytes = 0;
  double model_flops = 0;  // forward + backward
  SourceSeconds sources{};  // where fwd_s + bwd_s came from
  std::optional<double> optimizer_s;  // from a per-layer profile, when it covers this block
};

// Blocks in forward order: embedding, layer0 .. layer{L-1}, head. A block covered by a per-layer
// profile takes its times from there; the others sum their operators' costs.
[[nodiscard]] std::vector<BlockCost> block_costs(const OpGraph& graph, const Device& device, const CostModel& cost);

// The dtype the whole job computes in: the model's if every GPU type supports it, else its stated
// fallback (gradients of one job must share a format). Throws InputError naming the model's
// training.dtype (file:line:col) and the device when neither is supported everywhere. Logs a
// warning when training.attention asks for `flash` on a GPU type without a fused attention kernel
// (that type falls back to the unfused path, as `auto` does).
[[nodiscard]] DType resolve_dtype(const ModelSpec& model, const Cluster& cluster);

// Kernels every GPU type of the cluster has (one graph for all devices, as the SPMD planner uses):
// flash attention only where all have it.
[[nodiscard]] KernelSupport cluster_kernel_support(const Cluster& cluster);

// Bytes held per parameter for weights, gradients and optimizer state (mixed precision keeps an
// fp32 master copy; Adam keeps two fp32 moments, SGD one momentum): 16 for mixed-precision Adam,
// ZeRO's accounting (Rajbhandari et al. 2020: 2 + 2 + 12 bytes); 18 with fp32 gradients
// (training.fp32_grads, Megatron's --accumulate-allreduce-grads-in-fp32). `fp8_any_layout`: the
// GPU's FP8 GEMMs take any layout (Device::fp8_any_layout), so per-tensor scaled FP8 weights keep
// one low-precision copy, not two (weight_copy_bytes).
[[nodiscard]] double state_bytes_per_param(const ModelSpec& model, DType dtype, bool fp8_any_layout);
// Of those, the weights in the training dtype: all of them, but for the GEMM weights of a recipe that
// keeps them only in its low-precision format (training.fp8_param_gather).
[[nodiscard]] double held_weight_bytes_per_param(const ModelSpec& model, DType dtype);
// Bytes per parameter a ZeRO parameter all-gather moves: the training dtype's, but FP8 for the GEMM
// weights of an FP8 tensor-scaling recipe with fp8_param_gather (MXFP8 gathers the 16-bit weights
// into the gradient buffer and casts them after, as Megatron-Core's reuse_grad_buf_for_mxfp8_param_ag).
[[nodiscard]] double gathered_weight_bytes_per_param(const ModelSpec& model, DType dtype);
// Of those, the low-precision weight copies a GEMM recipe keeps (training.gemm_precision), averaged
// over all parameters (only the transformer layers' GEMM weights have them): held with the weights,
// never sharded by ZeRO-1.
[[nodiscard]] double low_precision_copy_bytes_per_param(const ModelSpec& model, bool fp8_any_layout);
// Bytes of one gradient as it is accumulated and reduced across data-parallel copies.
[[nodiscard]] double grad_bytes_per_param(const ModelSpec& model, DType dtype);
// Bytes the optimizer step reads and writes per parameter, pass by pass as Megatron-LM's
// mixed-precision optimizer runs them (megatron/optimizer/optimizer.py, Float16OptimizerWithFloat16Params
// .step, and clip_grads.py; unchanged from 2021 to 2022): copy 16-bit gradients to fp32, unscale and
// check for inf/NaN (fp16 loss scaling), the gradient norm for clipping, the fused Adam/SGD update of
// the fp32 master weights and moments, and the copy back to the 16-bit weights. 52 bytes for fp16
// Adam, 38 with bf16 and fp32 gradients; in fp32 training the update and the norm only. A GEMM
// recipe adds the recast of its weight copies (as many as weight_copy_bytes with `fp8_any_layout`).
[[nodiscard]] double optimizer_traffic_per_param(const ModelSpec& model, DType dtype, bool fp8_any_layout);

// Memory reserved on every device for the runtime (CUDA/ROCm context, collective buffers,
// allocator slack). A stated assumption, not a measurement: no sourced per-vendor figure found.
inline constexpr double kRuntimeReserveBytes = 1024.0 * 1024 * 1024;

// Why GPU `gpu` (a `device`) cannot hold `need_bytes`: "gpuN (NAME) needs X (PARTS) but has Y: short
// by Z", PARTS what the need is made of (left out when empty).
[[nodiscard]] std::string memory_shortfall_text(int gpu, const Device& device, double need_bytes, const std::string& parts);

}  // namespace hetsim
