// File: workloads/unet_graph.hpp
// The operator graph of a diffusion U-Net (family unet): timestep embedding, conv_in, down levels
// of ResNet blocks (+ spatial transformers) and downsamples, the mid block, up levels that
// concatenate skip tensors from the down path, conv_out and an MSE loss. Skip connections are real
// Op::inputs edges, so pipeline layers of a U-Net depend on non-adjacent layers (layer_edges()).
#pragma once

#include <string>

#include "workloads/op_graph.hpp"

namespace hetsim {

// Pipeline layers of the U-Net in `model` (the value load_model() stores in ModelSpec::layers):
// levels x layers_per_block down units, the mid block (1 layer; 2 in the alpa variant) and the up
// units (layers_per_block + 1 per level; layers_per_block on alpa's levels with attention).
[[nodiscard]] long unet_layer_count(const ModelSpec& model);
// The same count spelled out for messages: "U-Net (4 down units + 2 mid + 5 up units)".
[[nodiscard]] std::string unet_layer_breakdown(const ModelSpec& model);

// Builds the graph; called by build_op_graph() for Family::kUnet.
// `flash`: attention probabilities are not kept (fused kernel).
[[nodiscard]] OpGraph build_unet_graph(const ModelSpec& model, long micro_batch, DType dtype, bool flash = false);

}  // namespace hetsim
