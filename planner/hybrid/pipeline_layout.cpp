// File: planner/hybrid/pipeline_layout.cpp
// How a hybrid plan lays out on devices: each chunk's blocks, each copy's share of a micro-batch
// and the work its GPUs run, and block names.
#include "planner/hybrid/pipeline_layout.hpp"

#include <algorithm>
#include <tuple>

#include "base/text.hpp"
#include "planner/data_parallel.hpp"

namespace hetsim {

std::string PipelineLayout::block_name(const std::vector<int>& list) const {
  auto name = [&](int b) {
    if (b == 0) return std::string("embedding");
    if (b == blocks - 1) return std::string("head");
    return indexed_name("layer", static_cast<size_t>(b - 1));
  };
  const int lo = *std::min_element(list.begin(), list.end());
  const int hi = *std::max_element(list.begin(), list.end());
  return lo == hi ? name(lo) : name(lo) + "-" + name(hi);
}

const std::vector<BlockWork>& replica_work(const StageWorkFn& work, const HybridPlan& plan, const Replica& r, int tp) {
  return work(r.node_type, stage_work_key(plan, r.samples, tp, r.cp, r.ep, r.expert_tp));
}

std::vector<int> stage_blocks(const StagePlan& st, int s, int stages, int chunk, int layers) {
  const int chunks = static_cast<int>(st.chunks.size());
  // An embedding or loss chunk holds that block alone (check_hybrid_plan allows them only as the
  // pipeline's first and last chunk); the first and last layer chunks hold them otherwise.
  if (st.chunks[chunk].part == ChunkPart::kEmbedding) return {0};
  if (st.chunks[chunk].part == ChunkPart::kLoss) return {layers + 1};
  std::vector<int> blocks;
  if (s == 0 && chunk == 0) blocks.push_back(0);
  for (int l = st.chunks[chunk].first; l <= st.chunks[chunk].last; ++l) blocks.push_back(l + 1);
  if (s == stages - 1 && chunk == chunks - 1) blocks.push_back(layers + 1);
  return blocks;
}

std::vector<long> replica_shares(const HybridPlan& plan, const StagePlan& st, const std::vector<int>& blocks,
                                 const Cluster& cluster, const StageWorkFn& work) {
  std::vector<double> speed;
  for (int j = 0; j < st.dp(); ++j) {
    const int node_type = cluster.gpus[st.devices[j * st.group()]].node_type;
    const std::vector<BlockWork>& w = work(node_type, stage_work_key(plan, plan.micro_batch, st));
    double t = 0;
    for (int b : blocks) t += w[b].fwd_s() + w[b].bwd_s();
    speed.push_back(t > 0 ? 1 / t : 1);
  }
  return split_proportionally(plan.micro_batch, speed);
}

std::vector<std::vector<PipelineStep>> zero_bubble_stage_orders(const HybridPlan& plan, const PipelinePlan& pl,
                                                                const std::vector<StageInfo>& infos, const StageWorkFn& work) {
  // Place the weight-gradient passes by the stages' own pass times (slowest copy).
  const int P = static_cast<int>(infos.size());
  std::vector<double> f(P, 0), b(P, 0), w(P, 0);
  for (int s = 0; s < P; ++s) {
    for (const Replica& r : infos[s].replicas) {
      double fs = 0, bs = 0, ws = 0;
      for (int blk : infos[s].chunk_blocks[0]) {
        const BlockWork& bw = replica_work(work, plan, r, pl.stages[s].tp)[blk];
        fs += bw.fwd_s();
        bs += bw.recompute_s;
        for (const WorkPart& part : bw.parts) {
          bs += part.bwd_input_s;
          ws += part.bwd_weight_s;
        }
      }
      if (fs + bs + ws > f[s] + b[s] + w[s]) std::tie(f[s], b[s], w[s]) = std::tie(fs, bs, ws);
    }
  }
  return zero_bubble_orders(P, static_cast<int>(pl.micro_batches), f, b, w, 0);
}

}  // namespace hetsim
