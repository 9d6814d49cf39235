// File: planner/hybrid/activation_offload.cpp
#include "planner/hybrid/activation_offload.hpp"

#include <algorithm>
#include <string>

#include "base/units.hpp"
#include "planner/hybrid/pipeline_schedule.hpp"

namespace hetsim {

OffloadStalls offload_stalls(const std::vector<OffloadBlock>& blocks, int keep, double to_host_Bps, double from_host_Bps) {
  const size_t n = blocks.size();
  OffloadStalls out{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  std::vector<int> layer_block;  // the block of each layer ordinal
  std::vector<int> ordinal(n, -1);
  for (size_t b = 0; b < n; ++b) {
    if (!blocks[b].layer) continue;
    ordinal[b] = static_cast<int>(layer_block.size());
    layer_block.push_back(static_cast<int>(b));
  }
  const int layers = static_cast<int>(layer_block.size());
  std::vector<double> out_end(n, 0.0), bwd_end(n, 0.0);
  double t = 0, link = 0;  // the compute stream's time; when the copy stream is free
  for (size_t b = 0; b < n; ++b) {
    const OffloadBlock& x = blocks[b];
    double start = t;
    if (x.layer && ordinal[b] - keep >= 0) {
      const int earlier = layer_block[ordinal[b] - keep];  // its set must have left the GPU
      if (blocks[earlier].offloaded) start = std::max(start, out_end[earlier]);
    }
    out.fwd_wait_s[b] = start - t;
    t = start + x.fwd_s;
    if (x.offloaded) {
      // Its copy out starts as the next layer's forward does (Transformer Engine's fwd_step).
      out_end[b] = std::max(link, t) + x.bytes / to_host_Bps;
      link = out_end[b];
    }
  }
  const double backward_start = t;
  for (size_t i = n; i-- > 0;) {
    const OffloadBlock& x = blocks[i];
    double start = t;
    if (x.offloaded) {
      const int freeing = ordinal[i] + keep;  // the layer whose backward frees a set for this one
      const double gate = freeing < layers ? bwd_end[layer_block[freeing]] : backward_start;
      link = std::max(link, gate) + x.bytes / from_host_Bps;
      start = std::max(start, link);
    }
    out.bwd_wait_s[i] = start - t;
    t = start + x.bwd_s;
    bwd_end[i] = t;
  }
  return out;
}

void add_activation_offload(std::vector<BlockWork>& blocks, int main_layers, int offloaded, const Device& device) {
  const int n = static_cast<int>(blocks.size());
  main_layers = std::min(main_layers, n - 2);
  offloaded = std::clamp(offloaded, 0, main_layers - 1);
  if (offloaded <= 0) return;
  const int keep = main_layers - offloaded;
  std::vector<OffloadBlock> x(blocks.size());
  for (int b = 0; b < n; ++b) {
    x[b].fwd_s = blocks[b].fwd_s();
    x[b].bwd_s = blocks[b].bwd_s();
    x[b].layer = b >= 1 && b <= main_layers;
    x[b].offloaded = b >= 1 && b <= offloaded;
    x[b].bytes = x[b].offloaded ? blocks[b].saved_bytes : 0;
  }
  // (Device files give at least 1 GB/s each way; a device built in code without a host link copies at 1 B/s.)
  const OffloadStalls stalls =
      offload_stalls(x, keep, std::max(1.0, device.host_link.to_host_Bps), std::max(1.0, device.host_link.from_host_Bps));
  // The most activations on the GPU at once: `keep` consecutive layers' (the forward's window), of which
  // the kept layers hold theirs until the backward.
  double window = 0, peak = 0, kept = 0;
  for (int b = 1; b <= main_layers; ++b) {
    window += blocks[b].saved_bytes - (b - keep >= 1 ? blocks[b - keep].saved_bytes : 0);
    if (b >= keep) peak = std::max(peak, window);
    if (b > offloaded) kept += blocks[b].saved_bytes;
  }
  for (int b = 0; b < n; ++b) {
    BlockWork& bw = blocks[b];
    bw.host_wait_fwd_s = stalls.fwd_wait_s[b];
    bw.host_wait_bwd_s = stalls.bwd_wait_s[b];
    bw.same_as = -1;  // (the caller marks them again)
    if (x[b].offloaded) {
      bw.offload_bytes = bw.saved_bytes;
      bw.saved_bytes = bw.weight_input_bytes = 0;
    }
  }
  blocks[offloaded + 1].saved_bytes += std::max(0.0, peak - kept);
}

std::vector<double> host_offload_bytes(const HybridPlan& plan, const PipelineLayout& layout, const StageWorkFn& work,
                                       int devices) {
  std::vector<double> host(static_cast<size_t>(devices), 0.0);
  if (plan.activation_offload_layers <= 0) return host;
  for (const std::vector<StageInfo>& infos : layout.stages) {
    for (const StageInfo& info : infos) {
      for (const Replica& r : info.replicas) {
        double bytes = 0;
        for (const BlockWork& bw : replica_work(work, plan, r, static_cast<int>(r.devices.size()) / std::max(1, r.cp))) {
          bytes += bw.offload_bytes;
        }
        for (int d : r.devices) host[d] = std::max(host[d], bytes);
      }
    }
  }
  return host;
}

std::string offload_shortfall_text(int gpu, const Device& device, double bytes) {
  return "gpu" + std::to_string(gpu) + " (" + device.name + ") offloads " + format_bytes(bytes) +
         " of one micro-batch's activations to host memory, which holds " + format_bytes(device.host_link.memory_bytes) +
         " for it (host_link.memory of its device file): offload fewer layers";
}

std::vector<PlanProblem> activation_offload_problems(const HybridPlan& plan, const ModelSpec& model) {
  std::vector<PlanProblem> out;
  const int n = plan.activation_offload_layers;
  if (n == 0) return out;
  const std::string field = "activation_offload_layers";
  const long decoder_layers = main_layers(model);
  if (n < 0 || n >= decoder_layers) {
    out.push_back({field, std::to_string(n) + " layers offloaded: it takes 1 to " + std::to_string(decoder_layers - 1) +
                              " (fewer than the model's " + std::to_string(decoder_layers) +
                              " transformer layers; at least one keeps its activations on the GPU)"});
  }
  if (plan.recompute != RecomputeMode::kNone) {
    out.push_back({field, "CPU offloading beside recompute " + std::string(recompute_name(plan.recompute)) +
                              ": Megatron-Core refuses the two together (recompute: none)"});
  }
  if (splits_weight_gradient(plan.schedule)) {
    out.push_back({field, "schedule " + std::string(schedule_name(plan.schedule)) + " defers weight gradients past the "
                          "backward, after which Transformer Engine frees a reloaded layer's activations (use 1f1b)"});
  }
  for (size_t p = 0; p < plan.pipelines.size(); ++p) {
    if (plan.pipelines[p].stages.size() > 1) {
      out.push_back({field, "pipelines[" + std::to_string(p) + "] has " + std::to_string(plan.pipelines[p].stages.size()) +
                                " stages: Megatron-Core has no CPU offloading with pipeline parallelism"});
      break;
    }
  }
  return out;
}

}  // namespace hetsim
