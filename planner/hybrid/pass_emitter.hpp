// File: planner/hybrid/pass_emitter.hpp
// The compute side of a pipeline program: every device's compute stream (its latest kernel, the
// ZeRO-3 gather its next kernel waits for, its activation allocations in order) and the kernels
// and TP collectives of one pass of one stage copy on it. Internal to planner/hybrid/.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "planner/hybrid/pipeline_layout.hpp"
#include "sim/program.hpp"

namespace hetsim {

class ComputeStreams {
 public:
  ComputeStreams(Program& program, PipelineLayout& layout, int devices);

  // One kernel on every rank of a TP group in lockstep: simulated on the first rank, mirrored on
  // the others. It waits for `deps`, for each rank's pending ZeRO-3 gather and for the TP
  // collective ending each rank's previous step. Returns the task.
  int add(const std::vector<int>& group, double seconds, double flops, double memory, std::vector<int> deps,
          std::string label);
  // The next kernel on `device` also waits for `task` (a ZeRO-3 gather).
  void wait_for(int device, int task) { gather_dep_[device] = task; }
  [[nodiscard]] int pending_gather(int device) const { return gather_dep_[device]; }
  [[nodiscard]] int last(int device) const { return last_compute_[device]; }
  // The most activation memory `device` holds at once: allocations (at a kernel's start) and frees
  // (at its end) summed in program order, the order its compute stream runs them.
  [[nodiscard]] double activation_peak(int device) const { return mem_peak_[device]; }
  // Every task index held for later kernels to wait for (RepeatFolder::HeldTasks).
  template <class F>
  void for_each_held_task(F&& f) {
    for (int& t : last_compute_) {
      if (t >= 0) f(t);
    }
    for (int& t : gather_dep_) {
      if (t >= 0) f(t);
    }
  }
  // Device `to` runs what `from` ran (a mirrored pipeline's): its latest kernel, pending gather and
  // activation memory are `from`'s.
  void mirror(int from, int to);
  [[nodiscard]] Program& program() { return program_; }
  [[nodiscard]] PipelineLayout& layout() { return layout_; }

 private:
  Program& program_;
  PipelineLayout& layout_;
  std::vector<double> mem_now_, mem_peak_;
  std::vector<int> last_compute_;
  std::vector<int> gather_dep_;
};

// One pass of one copy of a stage.
struct PassSpec {
  PassKind pass = PassKind::kForward;
  const Replica* replica = nullptr;  // its devices: cp TP groups of `tp`, one after the other (for
                                     // each of the copies that run in lockstep)
  int tp = 1;
  int cp = 1;
  int ep = 1;         // expert groups: consecutive runs of ep x expert_tp of the devices
  int expert_tp = 1;
  const std::vector<BlockWork>* work = nullptr;  // as one GPU of the copy runs them
  const std::vector<int>* blocks = nullptr;      // the chunk's blocks, forward order
  std::string tag;                               // label prefix
  bool split_weight = false;       // the schedule runs weight gradients as passes of their own
  bool tp_comm_overlap = false;    // backward TP collectives under the weight-gradient GEMMs
  bool sequence_parallel = false;  // TP all-reduces as reduce-scatter + all-gather
  // Granularity: every part of every block separately (per_part), one span and one collective per
  // block (per_block: the last backward, so each gradient bucket can sync as soon as it is ready),
  // or one per pass (the default, about 20x fewer tasks). Merged collectives add their latency
  // `alpha_s` each to the span.
  bool per_part = false;
  bool per_block = false;
  double alpha_s = 0;
  // Forward only: tasks the compute of a block waits for besides the pass's own dependencies (the
  // parameter all-gathers of overlap_param_gather, before the first forward of each block). The
  // pass is cut into spans where these change, so a block waits only for its own bucket.
  std::map<int, std::vector<int>> block_waits;
  // Expert-parallel collectives (on the expert stream) hold only this pass's next kernel, not the
  // compute stream: another pass's kernels emitted in between run under them.
  bool defer_expert = false;
  // ep > 1: how tokens reach their experts; flex runs its in-node all-to-all over each node's GPUs
  // of an EP group and its inter-node one over the group's rails, which the cluster's nodes give.
  MoeDispatcher dispatcher = MoeDispatcher::kAllToAll;
  const Cluster* cluster = nullptr;
};

// Emits the pass after `deps` and records, per device and block, the task producing its weight
// gradient (layout().last_grad). Returns the pass's last task: what its outputs wait for.
int emit_pass(ComputeStreams& streams, const PassSpec& spec, std::vector<int> deps);

// Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm): a forward and a backward of
// different micro-batches emitted together, part by part in turn (the backward's first part, the
// forward's first, the backward's second, ...), with their expert all-to-alls deferred, so that each
// one's dispatch and combine run under the other's kernels. Both run every part separately.
// Returns each pass's last task.
std::pair<int, int> emit_overlapped_passes(ComputeStreams& streams, PassSpec a, std::vector<int> a_deps, PassSpec b,
                                           std::vector<int> b_deps);

}  // namespace hetsim
