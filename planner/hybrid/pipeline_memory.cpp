// File: planner/hybrid/pipeline_memory.cpp
#include "planner/hybrid/pipeline_memory.hpp"

#include "base/units.hpp"
#include "planner/block_costs.hpp"
#include "planner/hybrid/activation_offload.hpp"

namespace hetsim {

void check_pipeline_memory(const HybridPlan& plan, const Cluster& cluster, const StageWorkFn& work,
                           const PipelineLayout& layout, const ComputeStreams& streams, double reserve_bytes,
                           PipelineProgram& out) {
  const int n = cluster.gpu_count();
  out.peak_memory_bytes.assign(n, 0);
  out.feasible = true;
  const std::vector<double> host = host_offload_bytes(plan, layout, work, n);
  for (int d = 0; d < n; ++d) {
    // Allocations happen at a task's start and frees at its end, all on the compute stream in
    // program order: the peak follows from the order alone (every pass, folded or not).
    const double peak = streams.activation_peak(d);
    const double static_bytes = out.program.devices[d].static_memory_bytes;
    out.peak_memory_bytes[d] = static_bytes > 0 || peak > 0 ? static_bytes + peak : 0;
    const Device& dev = cluster.device_of(d);
    if (out.feasible && out.peak_memory_bytes[d] > dev.memory_bytes) {
      out.feasible = false;
      out.infeasible_reason = memory_shortfall_text(d, dev, out.peak_memory_bytes[d],
                                                    "weights, gradients and optimizer state " + format_bytes(static_bytes - reserve_bytes) +
                                                        ", activations in flight " + format_bytes(peak) + ", runtime reserve " +
                                                        format_bytes(reserve_bytes));
    }
    if (out.feasible && dev.host_link.memory_bytes > 0 && host[d] > dev.host_link.memory_bytes) {
      out.feasible = false;
      out.infeasible_reason = offload_shortfall_text(d, dev, host[d]);
    }
  }
}

}  // namespace hetsim
