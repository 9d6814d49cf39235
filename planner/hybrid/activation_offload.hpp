// File: planner/hybrid/activation_offload.hpp
// Transformer Engine's CPU offloading of activations as Megatron-Core runs it (--cpu-offloading
// --cpu-offloading-num-layers N; transformer_engine/pytorch/cpu_offload.py, its documentation's "Default
// offloading scheduling" and DefaultOffloadSynchronizer, Transformer Engine 2.10 on: NGC containers 26.02
// and later), internal to stage_block_work (stage_work.cpp). Of a model's L transformer layers (its main
// ones: not the multi-token-prediction modules'), the first N copy every tensor they keep for the backward
// to host memory on a copy stream, each once its forward has ended; at most K = L - N layers' activations
// are on the GPU at once, so
//   - the forward of layer j waits until layer j - K's copy out has ended (j - K < N);
//   - the copy back of offloaded layer i starts when layer i + K's backward has ended (freeing a set) and
//     the copies before it on the stream have, and layer i's backward waits for it;
// the copies in order on one stream each way at Device::host_link's rates (a PCIe link or a Grace CPU's
// NVLink-C2C). Stalls are timed in closed form over the blocks' compute times, once per micro-batch: a
// GPU runs one micro-batch's forward and backward back to back (Megatron-Core allows offloading only
// without pipeline parallelism). The copies' HBM traffic and their share of a PCIe switch with the NICs
// are not modelled.
#pragma once

#include <string>
#include <vector>

#include "kernels_profile/device.hpp"
#include "planner/hybrid/pipeline_layout.hpp"
#include "planner/hybrid/stage_work.hpp"

namespace hetsim {

// When each block starts and how long it waits, for `fwd_s` and `bwd_s` (forward and backward compute
// seconds per block, forward order) of which `offloaded[b]` copy `bytes[b]` out and back, at most
// `keep` of the `layer[b]` blocks holding activations on the GPU: the forward's waits per block
// and the backward's (the backward runs the blocks in reverse right after the forward).
struct OffloadStalls {
  std::vector<double> fwd_wait_s, bwd_wait_s;
};
struct OffloadBlock {
  double fwd_s = 0, bwd_s = 0, bytes = 0;
  bool layer = false;      // counts towards the `keep` sets on the GPU
  bool offloaded = false;  // a layer whose activations go to host memory
};
[[nodiscard]] OffloadStalls offload_stalls(const std::vector<OffloadBlock>& blocks, int keep, double to_host_Bps,
                                           double from_host_Bps);

// Applies offloading of the first `offloaded` of the model's `main_layers` transformer layers to `blocks`
// (embedding, layers, head as stage_block_work writes them; block b holds layer b - 1) on `device`:
// each offloaded layer keeps no activations on the GPU beyond the window of `main_layers - offloaded`
// layers (the largest window's excess over the kept layers' is charged to the first kept layer), and
// the waits for the host link are the blocks' host_wait_fwd_s and host_wait_bwd_s.
void add_activation_offload(std::vector<BlockWork>& blocks, int main_layers, int offloaded, const Device& device);

// One micro-batch's activations each of `devices` offloads to host memory under `plan` laid out as `layout`
// (pipelines of one stage hold one micro-batch's at a time).
[[nodiscard]] std::vector<double> host_offload_bytes(const HybridPlan& plan, const PipelineLayout& layout, const StageWorkFn& work,
                                                     int devices);
// Why `device` (cluster GPU `gpu`) cannot offload `bytes` of one micro-batch's activations: its host_link.memory.
[[nodiscard]] std::string offload_shortfall_text(int gpu, const Device& device, double bytes);

// check_hybrid_plan's rules, Megatron-Core's for --cpu-offloading (transformer_config.py): fewer layers than
// the model's main ones, no recompute, pipelines of one stage.
[[nodiscard]] std::vector<PlanProblem> activation_offload_problems(const HybridPlan& plan, const ModelSpec& model);

}  // namespace hetsim
