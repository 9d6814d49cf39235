// File: planner/hybrid/pipeline_layout.hpp
// A hybrid plan laid out on devices, as the pipeline program builder works with it: every
// stage's data-parallel copies (TP groups) with their slice of each micro-batch, the blocks of
// each chunk, the copies holding each block, and the task that produced each block's weight
// gradient on each device. Internal to planner/hybrid/.
#pragma once

#include <string>
#include <vector>

#include "planner/hybrid/pipeline_program.hpp"
#include "planner/hybrid/pipeline_schedule.hpp"

namespace hetsim {

// One data-parallel copy of a stage: a TP group and the slice of each micro-batch it runs.
struct Replica {
  std::vector<int> devices;  // TP ranks in order; with context parallelism, cp TP groups one after the other
  int cp = 1;
  int ep = 1;         // expert parallelism of the stage (its expert groups may span copies)
  int expert_tp = 1;
  int node_type = 0;
  long first_sample = 0;
  long samples = 0;
};

// The devices of `r` holding TP rank `rank` of a TP width `tp` (one per context-parallel rank).
[[nodiscard]] inline std::vector<int> rank_devices(const Replica& r, int rank, int tp) {
  std::vector<int> out;
  for (size_t k = static_cast<size_t>(rank); k < r.devices.size(); k += static_cast<size_t>(tp)) out.push_back(r.devices[k]);
  return out;
}

struct StageInfo {
  int stages = 0;  // of its pipeline
  int chunks = 1;
  std::vector<Replica> replicas;
  std::vector<std::vector<int>> chunk_blocks;  // block indices per chunk, forward order
  std::vector<PipelineStep> order;
  size_t next = 0;  // next step of `order` to emit
};

// A copy of a stage, by its place in the plan.
struct Holder {
  int pipeline = 0;
  int stage = 0;
  int replica = 0;
  friend bool operator==(const Holder&, const Holder&) = default;
};

struct PipelineLayout {
  int blocks = 0;     // embedding, layers, head
  bool tied = false;  // a tied embedding shared by every pipeline's first and last stage
  std::vector<std::vector<StageInfo>> stages;  // [pipeline][stage]
  std::vector<std::vector<Holder>> holders;    // [block]: every copy holding it
  std::vector<std::vector<int>> last_grad;     // [device][block]: task producing its weight gradient
  std::vector<int> tp_tail;                    // [device]: TP collective ending its latest step; the next
                                               // compute waits for it (Megatron's TP collectives block)
  std::vector<double> gathered_bytes;          // [device]: largest chunk of weights ZeRO-3 gathers
  double tied_embedding_params = 0;            // word embeddings shared by first and last stage

  [[nodiscard]] const Replica& replica(const Holder& h) const { return stages[h.pipeline][h.stage].replicas[h.replica]; }
  // Parameters of block b on one GPU of TP width `tp`. With a tied embedding the head's stage keeps
  // its own copy of the word embeddings (Megatron's), synchronised with the first stage's.
  [[nodiscard]] double params_of(const std::vector<BlockWork>& w, int b, int tp) const {
    return w[b].params + (tied && b == blocks - 1 ? tied_embedding_params / tp : 0);
  }
  // "layer3-layer7" style name of a set of blocks.
  [[nodiscard]] std::string block_name(const std::vector<int>& blocks) const;
};

// ZB-H1's order for each stage of pipeline `pl`, by the stages' own pass times (their slowest copy).
[[nodiscard]] std::vector<std::vector<PipelineStep>> zero_bubble_stage_orders(const HybridPlan& plan, const PipelinePlan& pl,
                                                                              const std::vector<StageInfo>& infos,
                                                                              const StageWorkFn& work);

// The blocks one GPU of copy `r` runs at TP width `tp` under `plan`.
[[nodiscard]] const std::vector<BlockWork>& replica_work(const StageWorkFn& work, const HybridPlan& plan, const Replica& r,
                                                         int tp);

}  // namespace hetsim
