// File: planner/hybrid/gradient_sync.cpp
#include "planner/hybrid/gradient_sync.hpp"

#include <algorithm>
#include <map>

#include "base/text.hpp"
#include "planner/hybrid/pass_emitter.hpp"

namespace hetsim {

std::vector<std::pair<int, int>> add_zero3_gather(const HybridPlan& plan, const StageWorkFn& work, const PipelineContext& ctx,
                                                  PipelineLayout& layout, ComputeStreams& streams, int pi, int s,
                                                  const PipelineStep& st) {
  const StageInfo& info = layout.stages[pi][s];
  const int tp = plan.pipelines[pi].stages[s].tp;
  const std::vector<int>& blocks = info.chunk_blocks[st.chunk];
  const std::vector<Holder>& hs = layout.holders[blocks.front()];
  const std::vector<BlockWork>& w = replica_work(work, plan, layout.replica(hs[0]), tp);
  double params = 0, largest = 0;
  for (int b : blocks) {
    params += layout.params_of(w, b, tp);
    largest = std::max(largest, layout.params_of(w, b, tp));
  }
  const double first = layout.params_of(w, st.pass == PassKind::kForward ? blocks.front() : blocks.back(), tp);
  std::vector<std::pair<int, int>> rest;
  for (int rank = 0; rank < tp; ++rank) {
    std::vector<int> group, deps;
    for (const Holder& h : hs) {
      for (int d : rank_devices(layout.replica(h), rank, tp)) group.push_back(d);
    }
    std::sort(group.begin(), group.end());
    if (group.size() < 2 || params <= 0) continue;
    for (int d : group) {
      if (streams.last(d) >= 0) deps.push_back(streams.last(d));
      if (streams.pending_gather(d) >= 0) deps.push_back(streams.pending_gather(d));  // the previous step's prefetch
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    std::string label = indexed_name("p", static_cast<size_t>(pi));
    label.append(".s").append(std::to_string(s)).append(".mb").append(std::to_string(st.micro_batch)).append(".param_allgather");
    if (tp > 1) label.append(".tp").append(std::to_string(rank));
    const int t = streams.program().add({label, collective(CollectiveOp::kAllGather, group, first * ctx.weight_bytes_per_param), deps});
    for (int d : group) streams.wait_for(d, t);
    if (params - first <= 0) continue;
    const int r = streams.program().add(
        {label + ".prefetch", collective(CollectiveOp::kAllGather, group, (params - first) * ctx.weight_bytes_per_param), {t}});
    for (int d : group) rest.emplace_back(d, r);
  }
  const double held = std::min(params, 2 * largest) * ctx.weight_bytes_per_param;
  for (const Holder& h : hs) {
    for (int d : layout.replica(h).devices) layout.gathered_bytes[d] = std::max(layout.gathered_bytes[d], held);
  }
  return rest;
}

namespace {

class BucketedSync {
 public:
  BucketedSync(const HybridPlan& plan, const Cluster& cluster, const StageWorkFn& work, const PipelineContext& ctx,
               const PipelineLayout& layout, Program& program)
      : plan_(plan), cluster_(cluster), work_(work), ctx_(ctx), layout_(layout), program_(program) {}

  void run() {
    Program& p = program_;
    const int n = cluster_.gpu_count();
    const int blocks = layout_.blocks;
    const auto& last_grad = layout_.last_grad;
    std::vector<std::vector<int>> synced(n);  // per device: its sync collectives
    std::vector<double> opt_params(n, 0), held_params(n, 0);
    const bool zero = plan_.gradient_sync != GradientSync::kAllReduce;
    std::vector<std::pair<std::vector<int>, double>> zero1_gathers;  // (group, bytes) to all-gather after the step
    std::vector<std::string> zero1_names;
    for (const GradientBucket& bucket : gradient_buckets(plan_, work_, ctx_, layout_)) {
      const int tp = static_cast<int>(bucket.groups.size());
      for (int rank = 0; rank < tp; ++rank) {
        const std::vector<int>& group = bucket.groups[rank];
        const double copies = static_cast<double>(group.size());
        for (int d : group) {
          held_params[d] += bucket.params;
          opt_params[d] += zero ? bucket.params / copies : bucket.params;
        }
        if (group.size() < 2 || bucket.params <= 0) continue;
        // Overlapped: a bucket waits for its own blocks' gradients; otherwise for every gradient
        // its devices compute (the sync starts after their last backward).
        std::vector<int> deps;
        for (int d : group) {
          if (plan_.grad_sync_overlap) {
            for (int b : bucket.blocks) {
              if (last_grad[d][b] >= 0) deps.push_back(last_grad[d][b]);
            }
          } else {
            for (int b = 0; b < blocks; ++b) {
              if (last_grad[d][b] >= 0) deps.push_back(last_grad[d][b]);
            }
          }
        }
        const CollectiveOp op = zero ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
        std::string label = bucket.expert ? "expert_" : "";
        label += zero ? "grad_reducescatter." : "grad_allreduce.";
        label += layout_.block_name(bucket.blocks);
        if (tp > 1) label.append(bucket.expert ? ".e" : ".tp").append(std::to_string(rank));
        const int t = p.add({std::move(label), collective(op, group, bucket.params * ctx_.grad_bytes_per_param), std::move(deps)});
        for (int d : group) synced[d].push_back(t);
        if (plan_.gradient_sync == GradientSync::kZero1 && !plan_.overlap_param_gather) {
          zero1_gathers.push_back({group, bucket.params * ctx_.weight_bytes_per_param});
          zero1_names.push_back(std::string(bucket.expert ? "expert_" : "") + "param_allgather." + layout_.block_name(bucket.blocks));
        }
      }
    }
    tied_embedding_sync(synced);
    // Optimizer step on every device holding weights, after its last gradient is in.
    std::vector<int> opt_task(n, -1);
    for (int d = 0; d < n; ++d) {
      if (held_params[d] <= 0) continue;
      std::vector<int> deps = synced[d];
      if (layout_.tp_tail[d] >= 0) deps.push_back(layout_.tp_tail[d]);
      for (int b = 0; b < blocks; ++b) {
        if (last_grad[d][b] >= 0) deps.push_back(last_grad[d][b]);
      }
      const double secs = ctx_.optimizer_s ? ctx_.optimizer_s(cluster_.gpus[d].node_type, opt_params[d]) : 0;
      opt_task[d] = p.add({indexed_name("gpu", static_cast<size_t>(d)) + ".optimizer", ComputeTask{d, secs, 0, 0}, std::move(deps)});
      // Static memory: weights and gradients in full (sharded under ZeRO-3), optimizer state per ZeRO.
      const auto type = static_cast<size_t>(cluster_.gpus[d].node_type);
      const double state = ctx_.state_bytes_per_param.at(type);
      const double held_bytes = ctx_.held_weight_bytes_per_param + ctx_.grad_bytes_per_param + ctx_.copy_bytes_per_param.at(type);  // per parameter
      const double optimizer_state = state - held_bytes;
      double bytes = 0;
      switch (plan_.gradient_sync) {
        case GradientSync::kAllReduce: bytes = held_params[d] * state; break;
        case GradientSync::kZero1: bytes = held_params[d] * held_bytes + opt_params[d] * optimizer_state; break;
        case GradientSync::kZero3: bytes = opt_params[d] * state + layout_.gathered_bytes[d]; break;
      }
      p.devices[d].static_memory_bytes = bytes + ctx_.reserve_bytes;
    }
    // ZeRO-1: every copy gathers the updated weights of the others.
    for (size_t i = 0; i < zero1_gathers.size(); ++i) {
      const auto& [group, bytes] = zero1_gathers[i];
      std::vector<int> deps;
      for (int d : group) deps.push_back(opt_task[d]);
      p.add({zero1_names[i], collective(CollectiveOp::kAllGather, group, bytes), std::move(deps)});
    }
  }

 private:
  // Megatron's embedding group: each pipeline's first and last stage all-reduce the gradient of
  // the embedding they share, TP rank with TP rank, after the data-parallel sync of each.
  void tied_embedding_sync(std::vector<std::vector<int>>& synced) {
    if (!layout_.tied) return;
    const int head = layout_.blocks - 1;
    for (size_t pi = 0; pi < layout_.stages.size(); ++pi) {
      const StageInfo& first = layout_.stages[pi].front();
      const StageInfo& last = layout_.stages[pi].back();
      const int tp = plan_.pipelines[pi].stages.front().tp;
      const double bytes = ctx_.tied_embedding_params / tp * ctx_.grad_bytes_per_param;
      for (size_t j = 0; j < first.replicas.size(); ++j) {
        const Replica& a = first.replicas[j];
        const Replica& b = last.replicas[j % last.replicas.size()];
        for (int rank = 0; rank < static_cast<int>(a.devices.size()); ++rank) {  // every TP rank of every CP rank
          const int x = a.devices[rank], y = b.devices[rank % b.devices.size()];
          std::vector<int> deps;
          for (int d : {x, y}) {
            for (int t : {layout_.last_grad[d][0], layout_.last_grad[d][head]}) {
              if (t >= 0) deps.push_back(t);
            }
            deps.insert(deps.end(), synced[d].begin(), synced[d].end());
          }
          std::string label = indexed_name("p", pi);
          label += ".embedding_allreduce";
          if (tp > 1) label.append(".tp").append(std::to_string(rank));
          const int t = program_.add({std::move(label), collective(CollectiveOp::kAllReduce, {std::min(x, y), std::max(x, y)}, bytes),
                                      std::move(deps)});
          synced[x].push_back(t);
          synced[y].push_back(t);
        }
      }
    }
  }

  const HybridPlan& plan_;
  const Cluster& cluster_;
  const StageWorkFn& work_;
  const PipelineContext& ctx_;
  const PipelineLayout& layout_;
  Program& program_;
};

}  // namespace

std::vector<GradientBucket> gradient_buckets(const HybridPlan& plan, const StageWorkFn& work, const PipelineContext& ctx,
                                             const PipelineLayout& layout) {
  const auto block_work = [&](int b) -> const BlockWork& {
    const Holder& h = layout.holders[b][0];
    return replica_work(work, plan, layout.replica(h), plan.pipelines[h.pipeline].stages[h.stage].tp)[b];
  };
  // Dense weights (all but the routed experts') over every copy of each TP rank; the routed
  // experts' over the copies of each expert shard (expert data parallelism).
  std::vector<GradientBucket> buckets;
  for (const bool expert : {false, true}) {
    const size_t first = buckets.size();
    for (int b = layout.blocks; b-- > 0;) {
      if (layout.holders[b].empty()) continue;
      const Holder& h = layout.holders[b][0];
      const int tp = plan.pipelines[h.pipeline].stages[h.stage].tp;
      const BlockWork& w = block_work(b);
      const double params = expert ? w.expert_params : layout.params_of(replica_work(work, plan, layout.replica(h), tp), b, tp) - w.expert_params;
      if (expert && params <= 0) continue;
      if (buckets.size() == first || layout.holders[buckets.back().blocks.back()] != layout.holders[b] ||
          buckets.back().params + params > ctx.bucket_params) {
        buckets.push_back({});
        buckets.back().expert = expert;
      }
      buckets.back().blocks.push_back(b);
      buckets.back().params += params;
    }
  }
  // In backward order, dense and expert buckets of the same blocks side by side (collectives of one
  // stream run in program order).
  std::stable_sort(buckets.begin(), buckets.end(),
                   [](const GradientBucket& a, const GradientBucket& b) { return a.blocks.front() > b.blocks.front(); });
  for (GradientBucket& bucket : buckets) {
    const std::vector<Holder>& hs = layout.holders[bucket.blocks.front()];
    const StagePlan& st = plan.pipelines[hs[0].pipeline].stages[hs[0].stage];
    if (!bucket.expert) {
      bucket.groups.resize(st.tp);
      for (int rank = 0; rank < st.tp; ++rank) {
        for (const Holder& h : hs) {
          for (int d : rank_devices(layout.replica(h), rank, st.tp)) bucket.groups[rank].push_back(d);
        }
      }
    } else {  // position in the stage's expert groups: device k of copy j is the stage's (j x group + k)-th
      bucket.groups.resize(st.expert_group());
      for (const Holder& h : hs) {
        const std::vector<int>& devices = layout.replica(h).devices;
        for (size_t k = 0; k < devices.size(); ++k) {
          const size_t index = static_cast<size_t>(h.replica) * devices.size() + k;
          bucket.groups[index % bucket.groups.size()].push_back(devices[k]);
        }
      }
    }
    for (std::vector<int>& g : bucket.groups) std::sort(g.begin(), g.end());
  }
  return buckets;
}

std::vector<std::vector<std::vector<int>>> add_param_prefetch(const HybridPlan& plan, const Cluster& cluster,
                                                             const StageWorkFn& work, const PipelineContext& ctx,
                                                             const PipelineLayout& layout, Program& program) {
  std::vector<std::vector<std::vector<int>>> waits(cluster.gpu_count(), std::vector<std::vector<int>>(layout.blocks));
  if (!plan.overlap_param_gather || plan.gradient_sync != GradientSync::kZero1) return waits;
  const std::vector<GradientBucket> buckets = gradient_buckets(plan, work, ctx, layout);
  std::map<std::vector<int>, int> previous;  // group -> its latest gather (one after the other)
  for (auto it = buckets.rbegin(); it != buckets.rend(); ++it) {  // forward order
    const GradientBucket& bucket = *it;
    const int tp = static_cast<int>(bucket.groups.size());
    for (int rank = 0; rank < tp; ++rank) {
      const std::vector<int>& group = bucket.groups[rank];
      if (group.size() < 2 || bucket.params <= 0) continue;
      std::vector<int> deps;
      if (const auto prev = previous.find(group); prev != previous.end()) deps.push_back(prev->second);
      std::string label = std::string(bucket.expert ? "expert_" : "") + "param_allgather." + layout.block_name(bucket.blocks);
      if (tp > 1) label.append(bucket.expert ? ".e" : ".tp").append(std::to_string(rank));
      const int t = program.add({std::move(label), collective(CollectiveOp::kAllGather, group, bucket.params * ctx.weight_bytes_per_param),
                                 std::move(deps)});
      previous[group] = t;
      for (int d : group) {
        for (int b : bucket.blocks) waits[d][b].push_back(t);
      }
    }
  }
  return waits;
}

void add_gradient_sync(const HybridPlan& plan, const Cluster& cluster, const StageWorkFn& work,
                       const PipelineContext& ctx, const PipelineLayout& layout, Program& program) {
  BucketedSync(plan, cluster, work, ctx, layout, program).run();
}

}  // namespace hetsim
