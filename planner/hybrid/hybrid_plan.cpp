// File: planner/hybrid/hybrid_plan.cpp
// Descriptions and the rule checks of hybrid plans (names: hybrid_plan_names.cpp). The checks
// collect every problem with the numbers involved; the plan file reader turns the field paths into
// file:line:col.
#include "planner/hybrid/hybrid_plan.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <climits>
#include <optional>
#include <set>

#include "base/text.hpp"
#include "planner/hybrid/activation_offload.hpp"
#include "planner/hybrid/partial_recompute.hpp"
#include "planner/hybrid/pipeline_schedule.hpp"

namespace hetsim {

int StagePlan::lockstep_copies() const {
  const int g = std::max(1, group()), e = std::max(1, expert_group());
  return std::lcm(g, e) / g;
}

int StagePlan::layer_count() const {
  int n = 0;
  for (const LayerRange& r : chunks) n += r.size();
  return n;
}

long HybridPlan::samples() const {
  // Saturates rather than overflows (a plan file may hold any counts; the checker reports them).
  long n = 0;
  for (const PipelinePlan& p : pipelines) {
    long m = 0;
    if (__builtin_mul_overflow(p.micro_batches, micro_batch, &m) || __builtin_add_overflow(n, m, &n)) return LONG_MAX;
  }
  return n;
}

double HybridPlan::stage_copy_passes() const {
  double passes = 0;
  for (const PipelinePlan& pl : pipelines) {
    for (const StagePlan& st : pl.stages) {
      passes += static_cast<double>(pl.micro_batches) * static_cast<double>(st.chunks.size()) * st.dp() *
                (splits_weight_gradient(schedule) ? 3 : 2);
    }
  }
  return passes;
}

namespace {

// "3-5", or "3" for a single layer.
std::string range_text(int first, int last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

// "layers 3-5" / "layer 3".
std::string layers_phrase(const LayerRange& r) {
  return (r.first == r.last ? "layer " : "layers ") + range_text(r.first, r.last);
}

std::string stage_path(size_t p, size_t s) {
  return "pipelines[" + std::to_string(p) + "].stages[" + std::to_string(s) + "]";
}

// Runs of consecutive ascending values: "0-7,16,18-19" (sep ",") or "3, 12-15" (sep ", ").
std::string compress(const std::vector<int>& values, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    if (!out.empty()) out += sep;
    out += range_text(values[i], values[j]);
    i = j + 1;
  }
  return out;
}

// One pass per rule family; problems come out rule by rule, in plan order within each rule.
class Checker {
 public:
  Checker(const HybridPlan& plan, const ModelSpec& model, const Cluster& cluster)
      : plan_(plan), model_(model), cluster_(cluster) {}

  std::vector<PlanProblem> run() {
    names();
    if (plan_.pipelines.empty()) add("pipelines", "no pipelines");
    for (size_t p = 0; p < plan_.pipelines.size(); ++p) {
      if (plan_.pipelines[p].stages.empty()) add("pipelines[" + std::to_string(p) + "].stages", "no stages");
    }
    devices();
    tensor_parallel();
    for (size_t p = 0; p < plan_.pipelines.size(); ++p) layers(p);
    chunks();
    batch();
    dtype();
    one_tp_per_layer();
    lockstep_for_zero3();
    if (plan_.overlap_param_gather && plan_.gradient_sync != GradientSync::kZero1) {
      add("overlap_param_gather", "overlaps the parameter all-gather of the distributed optimizer; it needs "
                                  "gradient_sync: zero-1, not " + std::string(gradient_sync_name(plan_.gradient_sync)));
    }
    moe_choices();
    // The rules of each way of keeping fewer activations: partial_recompute.hpp, activation_offload.hpp.
    for (std::vector<PlanProblem> more : {recompute_problems(plan_, model_), activation_offload_problems(plan_, model_)}) {
      out_.insert(out_.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    if (plan_.tp_comm_userbuffers && !plan_.sequence_parallel) {
      add("tp_comm_overlap", "userbuffers chunk the all-gathers and reduce-scatters of sequence parallelism with their "
                             "GEMMs; they need sequence_parallel: true (as Megatron-Core's --tp-comm-overlap does)");
    }
    if (plan_.sequence_parallel && !any_stage([](const StagePlan& st) { return st.tp > 1; }) && !plan_.pipelines.empty()) {
      add("sequence_parallel", "sequence parallelism splits along the sequence what a tensor-parallel group would "
                               "otherwise hold in full; with tp 1 in every stage there is no such group (Megatron-LM "
                               "turns it off there): set it false, or give a stage tp > 1");
    }
    if (plan_.sequence_parallel && plan_.stage_program == StageProgram::kSynthesised) {
      add("sequence_parallel", "sequence parallelism is part of Megatron's stage program; with stage_program synthesised "
                               "the search chooses each operator's split itself");
    }
    return std::move(out_);
  }

 private:
  void add(std::string field, std::string message) { out_.push_back({std::move(field), std::move(message)}); }

  // Whether some stage of some pipeline satisfies `pred`.
  template <class Pred>
  bool any_stage(Pred pred) const {
    return std::any_of(plan_.pipelines.begin(), plan_.pipelines.end(),
                       [&](const PipelinePlan& p) { return std::any_of(p.stages.begin(), p.stages.end(), pred); });
  }

  // Megatron-Core's MoE choices need experts split: combined 1F1B (with the weight gradients in the
  // backward) and a dispatcher other than alltoall (allgather not with combined 1F1B).
  void moe_choices() {
    const bool split = model_.moe && any_stage([](const StagePlan& st) { return st.ep > 1; });
    const std::string needs = "; it needs a mixture-of-experts model and a stage with ep > 1";
    if (plan_.overlap_moe_expert_parallel_comm) {
      const std::string what = "overlaps the experts' all-to-alls with another micro-batch's compute";
      if (!split) {
        add("overlap_moe_expert_parallel_comm", what + needs);
      } else if (splits_weight_gradient(plan_.schedule)) {
        add("overlap_moe_expert_parallel_comm", what + " by pairing forward and backward passes; schedule " +
                                                    std::string(schedule_name(plan_.schedule)) +
                                                    " splits the backward (use 1f1b or interleaved-1f1b)");
      }
    }
    if (plan_.moe_dispatcher == MoeDispatcher::kAllToAll) return;
    if (!split) {
      add("moe_dispatcher", std::string(moe_dispatcher_name(plan_.moe_dispatcher)) +
                                " dispatches tokens to the GPUs of their experts" + needs);
    } else if (plan_.moe_dispatcher == MoeDispatcher::kAllGather && plan_.overlap_moe_expert_parallel_comm) {
      add("moe_dispatcher", "overlap_moe_expert_parallel_comm needs the alltoall or flex dispatcher (as Megatron-Core "
                            "requires), not allgather");
    }
  }

  // ZeRO-3 gathers each stage's weights from all its copies before every pass, so the pipelines
  // must run the same passes in the same order: same micro-batches, stages, tp and layers.
  void lockstep_for_zero3() {
    if (plan_.gradient_sync != GradientSync::kZero3 || plan_.pipelines.empty()) return;
    const PipelinePlan& a = plan_.pipelines[0];
    for (size_t p = 1; p < plan_.pipelines.size(); ++p) {
      const PipelinePlan& b = plan_.pipelines[p];
      bool same = a.micro_batches == b.micro_batches && a.stages.size() == b.stages.size();
      for (size_t s = 0; same && s < a.stages.size(); ++s) {
        same = a.stages[s].tp == b.stages[s].tp && a.stages[s].chunks == b.stages[s].chunks &&
               a.stages[s].devices.size() == b.stages[s].devices.size();
      }
      if (!same) {
        add("gradient_sync", "zero-3 gathers weights in lockstep across pipelines, but pipelines[" + std::to_string(p) +
                                 "] differs from pipelines[0] in micro-batches, stages, tp or layers");
        return;
      }
    }
  }

  bool in_cluster(int d) const { return d >= 0 && d < cluster_.gpu_count(); }
  // tp >= 1, dividing a non-empty stage whose GPUs are all in the cluster.
  bool well_formed(const StagePlan& st) const {
    return st.tp >= 1 && st.cp >= 1 && !st.devices.empty() && st.devices.size() % st.group() == 0 &&
           std::all_of(st.devices.begin(), st.devices.end(), [&](int d) { return in_cluster(d); });
  }
  // The layers of `r` that exist in the model.
  std::pair<int, int> clipped(const LayerRange& r) const {
    return {std::max(r.first, 0), std::min(r.last, static_cast<int>(model_.layers) - 1)};
  }

  void names() {
    if (!plan_.model.empty() && plan_.model != model_.name) {
      add("model", "plan is for model " + in_quotes(plan_.model) + ", not " + in_quotes(model_.name));
    }
    if (!plan_.cluster.empty() && plan_.cluster != cluster_.name) {
      add("cluster", "plan is for cluster " + in_quotes(plan_.cluster) + ", not " + in_quotes(cluster_.name));
    }
  }

  void devices() {
    std::vector<std::string> owner(cluster_.gpu_count());
    for (size_t p = 0; p < plan_.pipelines.size(); ++p) {
      for (size_t s = 0; s < plan_.pipelines[p].stages.size(); ++s) {
        const StagePlan& st = plan_.pipelines[p].stages[s];
        const std::string field = stage_path(p, s) + ".devices";
        if (st.devices.empty()) add(field, "no GPUs");
        bool outside = false, repeated = false;  // one message of each kind per stage
        for (int d : st.devices) {
          if (!in_cluster(d)) {
            if (!outside) {
              add(field, "GPU " + std::to_string(d) + " is not in cluster " + cluster_.name + " (0 to " +
                             std::to_string(cluster_.gpu_count() - 1) + ")");
            }
            outside = true;
          } else if (!owner[d].empty()) {
            if (!repeated) {
              add(field, "GPU " + std::to_string(d) +
                             (owner[d] == stage_path(p, s) ? " is listed twice" : " is also in " + owner[d]));
            }
            repeated = true;
          } else {
            owner[d] = stage_path(p, s);
          }
        }
      }
    }
  }

  void tensor_parallel() {
    for (size_t p = 0; p < plan_.pipelines.size(); ++p) {
      for (size_t s = 0; s < plan_.pipelines[p].stages.size(); ++s) {
        const StagePlan& st = plan_.pipelines[p].stages[s];
        const std::string field = stage_path(p, s) + ".tp";
        if (st.tp < 1 || st.devices.size() % st.tp != 0) {
          add(field, "tp " + std::to_string(st.tp) + " does not divide the stage's " +
                         std::to_string(st.devices.size()) + " GPUs");
        } else {
          tp_groups(st, field);
        }
        if (st.tp < 1) continue;
        if (model_.heads % st.tp != 0) {
          add(field, "tp " + std::to_string(st.tp) + " does not divide the model's " + std::to_string(model_.heads) +
                         " attention heads");
        }
        if (model_.kv_heads > 0 && model_.kv_heads != model_.heads && model_.kv_heads % st.tp != 0) {
          add(field, "tp " + std::to_string(st.tp) + " does not divide the model's " +
                         std::to_string(model_.kv_heads) + " key/value heads");
        }
        if (model_.mamba && (model_.mamba->groups % st.tp != 0 || model_.mamba->heads % st.tp != 0)) {
          add(field, "tp " + std::to_string(st.tp) + " does not divide the Mamba mixers' " + std::to_string(model_.mamba->groups) +
                         " groups and " + std::to_string(model_.mamba->heads) + " heads");
        }
        context_parallel(st, stage_path(p, s));
        expert_parallel(st, stage_path(p, s));
      }
    }
  }

  // ep x expert_tp GPUs hold every expert once; a model with routed experts that ep divides and an
  // expert width expert_tp divides; copies that an expert group spans run in lockstep, so they must
  // be alike (one GPU type, equal shares of the micro-batch).
  void expert_parallel(const StagePlan& st, const std::string& stage) {
    if (st.ep == 1 && st.expert_tp == 1) return;
    for (const auto& [name, v] : {std::pair{"ep", st.ep}, std::pair{"expert_tp", st.expert_tp}}) {
      if (v < 1) {
        add(stage + "." + name, std::string(name) + " " + std::to_string(v) + " must be at least 1");
        return;
      }
    }
    const std::string field = stage + ".ep";
    if (!model_.moe) {
      // Named where it is written: an expert_tp alone points at expert_tp.
      add(st.ep == 1 ? stage + ".expert_tp" : field,
          "expert parallelism splits the routed experts of a model with a moe: block; " + model_.name + " has none");
      return;
    }
    if (st.devices.size() % static_cast<size_t>(st.expert_group()) != 0) {
      add(field, "ep " + std::to_string(st.ep) + " x expert_tp " + std::to_string(st.expert_tp) + " = " +
                     std::to_string(st.expert_group()) + " does not divide the stage's " + std::to_string(st.devices.size()) + " GPUs");
    }
    if (model_.moe->experts % st.ep != 0) {
      add(field, "ep " + std::to_string(st.ep) + " does not divide the model's " + std::to_string(model_.moe->experts) +
                     " routed experts");
    }
    if (model_.moe->expert_ffn_hidden % st.expert_tp != 0) {
      add(stage + ".expert_tp", "expert_tp " + std::to_string(st.expert_tp) + " does not divide the experts' width " +
                                    std::to_string(model_.moe->expert_ffn_hidden));
    }
    if (plan_.gradient_sync == GradientSync::kZero3) {
      add(field, "expert parallelism with gradient_sync zero-3 is not modelled; use zero-1 or all-reduce");
    }
    if (st.lockstep_copies() > 1 && well_formed(st)) {
      const int type = cluster_.gpus[st.devices[0]].node_type;
      const bool one_type = std::all_of(st.devices.begin(), st.devices.end(), [&](int d) { return cluster_.gpus[d].node_type == type; });
      if (!one_type || plan_.micro_batch % st.dp() != 0) {
        add(field, "the expert groups of " + std::to_string(st.expert_group()) + " GPUs span " +
                       std::to_string(st.lockstep_copies()) + " data-parallel copies, which then run in lockstep: they need one "
                       "GPU type and equal shares of the micro-batch (micro_batch divisible by the stage's " +
                       std::to_string(st.dp()) + " copies)");
      }
    }
  }

  // cp x tp GPUs per data-parallel copy; the sequence in 2 x cp chunks (causal balance, as
  // Megatron-Core requires of ring attention); all-to-all splits each TP rank's heads cp ways.
  void context_parallel(const StagePlan& st, const std::string& stage) {
    if (st.cp == 1) return;
    const std::string field = stage + ".cp";
    if (st.cp < 1) {
      add(field, "cp " + std::to_string(st.cp) + " must be at least 1");
      return;
    }
    if (st.tp >= 1 && st.devices.size() % st.tp == 0 && st.devices.size() % (static_cast<size_t>(st.tp) * st.cp) != 0) {
      add(field, "tp " + std::to_string(st.tp) + " x cp " + std::to_string(st.cp) + " = " + std::to_string(st.tp * st.cp) +
                     " does not divide the stage's " + std::to_string(st.devices.size()) + " GPUs");
    }
    if (model_.seq_len % (2L * st.cp) != 0) {
      add(field, "cp " + std::to_string(st.cp) + " needs seq_len divisible by 2 x cp = " + std::to_string(2 * st.cp) +
                     " (the sequence is cut in 2 x cp chunks for causal balance); the model's is " +
                     std::to_string(model_.seq_len));
    }
    if (plan_.cp_comm == CpComm::kAllToAll && st.tp >= 1 && (model_.kv_heads / std::max(1, st.tp)) % st.cp != 0) {
      add(field, "cp_comm all-to-all gives each CP rank whole heads: cp " + std::to_string(st.cp) +
                     " must divide the " + std::to_string(model_.kv_heads / std::max(1, st.tp)) +
                     " key/value heads of a TP rank");
    }
    if (plan_.cp_comm == CpComm::kRing && has_sliding_window(model_)) {
      // Transformer Engine's get_attention_backend: no fused kernel for a window under cp_comm_type p2p.
      add(field, "the model's sliding-window layers run under context parallelism only with cp_comm all-to-all "
                 "(Transformer Engine's p2p ring has no sliding-window kernel); set cp_comm: all-to-all");
    }
    if (model_.mamba) {
      add(field, "context parallelism of Mamba layers (Megatron-Core splits their heads over the CP ranks by all-to-all) is "
                 "not modelled; use cp 1");
    }
    if (plan_.stage_program == StageProgram::kSynthesised) {
      add(field, "context parallelism is part of Megatron's stage program; with stage_program synthesised the "
                 "search splits each operator itself");
    }
    if (model_.family == Family::kUnet || model_.family == Family::kVgg) {
      add(field, "context parallelism splits token sequences; a " + std::string(family_name(model_.family)) +
                     " model has none");
    }
  }

  // Each run of `tp` consecutive devices must sit in one NVLink domain (TP traffic stays on
  // NVLink): a node, or the nodes of a rack-scale domain.
  void tp_groups(const StagePlan& st, const std::string& field) {
    for (size_t g = 0; g + st.tp <= st.devices.size(); g += st.tp) {
      std::vector<int> group(st.devices.begin() + g, st.devices.begin() + g + st.tp);
      if (!std::all_of(group.begin(), group.end(), [&](int d) { return in_cluster(d); })) continue;
      for (int d : group) {
        if (cluster_.same_domain(d, group[0])) continue;
        std::sort(group.begin(), group.end());
        const GpuSlot &a = cluster_.gpus[group[0]], &b = cluster_.gpus[d];
        const bool racks = cluster_.node_types[a.node_type].nodes_per_domain() > 1 || cluster_.node_types[b.node_type].nodes_per_domain() > 1;
        add(field, "TP group " + format_devices(group) +
                       (racks ? " spans NVLink domains " + std::to_string(a.domain) + " and " + std::to_string(b.domain) +
                                    " (a TP group must stay inside one NVLink domain)"
                              : " spans nodes " + std::to_string(a.node) + " and " + std::to_string(b.node) +
                                    " (a TP group must stay inside one node)"));
        break;
      }
    }
  }

  void layers(size_t p) {
    const std::vector<StagePlan>& stages = plan_.pipelines[p].stages;
    if (stages.empty()) return;
    const int count = static_cast<int>(model_.layers);
    std::vector<int> owner(count, -1);  // stage holding each layer
    bool broken = false;                // ordering is only meaningful when coverage is exact
    for (size_t s = 0; s < stages.size(); ++s) {
      const std::string field = stage_path(p, s) + ".layers";
      if (stages[s].chunks.empty()) {
        add(field, "no layers");
        broken = true;
      }
      // Several ranges outside interleaved-1f1b are reported by chunks(); their order means nothing.
      if (stages[s].chunks.size() > 1 && plan_.schedule != PipelineSchedule::kInterleaved) broken = true;
      bool repeated = false;
      for (size_t c = 0; c < stages[s].chunks.size(); ++c) {
        const LayerRange& r = stages[s].chunks[c];
        if (r.part == ChunkPart::kEmbedding && (s != 0 || c != 0)) {
          add(field, "an embedding chunk must be the pipeline's first chunk (stage 0, chunk 0), not chunk " +
                         std::to_string(c) + " of stage " + std::to_string(s));
          broken = true;
        }
        if (r.part == ChunkPart::kLoss && (s + 1 != stages.size() || c + 1 != stages[s].chunks.size())) {
          add(field, "a loss chunk must be the pipeline's last chunk (the last chunk of the last stage), not chunk " +
                         std::to_string(c) + " of stage " + std::to_string(s));
          broken = true;
        }
        if (!r.layers()) continue;
        if (r.first > r.last) {
          add(field, "range " + std::to_string(r.first) + "-" + std::to_string(r.last) + " is empty");
          broken = true;
          continue;
        }
        if (r.first < 0 || r.last >= count) {
          add(field, "layer range " + range_text(r.first, r.last) + " is outside the model's layers 0-" +
                         std::to_string(count - 1));
          broken = true;
        }
        const auto [lo, hi] = clipped(r);
        for (int l = lo; l <= hi; ++l) {
          if (owner[l] < 0) {
            owner[l] = static_cast<int>(s);
          } else if (!repeated) {
            add(field, "layer " + std::to_string(l) + " is also in " + stage_path(p, owner[l]));
            repeated = broken = true;
          }
        }
      }
    }
    std::vector<int> missing;
    for (int l = 0; l < count; ++l) {
      if (owner[l] < 0) missing.push_back(l);
    }
    if (!missing.empty()) {
      add("pipelines[" + std::to_string(p) + "].stages",
          (missing.size() == 1 ? "layer " : "layers ") + compress(missing, ", ") +
              (missing.size() == 1 ? " is" : " are") + " in no stage");
      broken = true;
    }
    if (!broken) order(p);
  }

  // Chunk c of stage s runs after chunk c of stage s-1 and after chunk c-1 of the last stage.
  void order(size_t p) {
    const std::vector<StagePlan>& stages = plan_.pipelines[p].stages;
    size_t most = 0;
    for (const StagePlan& st : stages) most = std::max(most, st.chunks.size());
    int next = 0;
    for (size_t c = 0; c < most; ++c) {
      for (size_t s = 0; s < stages.size(); ++s) {
        if (c >= stages[s].chunks.size() || !stages[s].chunks[c].layers()) continue;
        const LayerRange& r = stages[s].chunks[c];
        if (r.first != next) {
          const std::string previous = next == 0 ? "the pipeline's first chunk must start at layer 0"
                                                 : "the pipeline's previous chunk ends at layer " +
                                                       std::to_string(next - 1);
          add(stage_path(p, s) + ".layers",
              "chunk " + std::to_string(c) + " of this stage holds " + layers_phrase(r) + " but " + previous +
                  " (chunks must follow each other: stage by stage, then chunk by chunk)");
          return;  // later chunks would only repeat the same break
        }
        next = r.last + 1;
      }
    }
  }

  void chunks() {
    const bool interleaved = plan_.schedule == PipelineSchedule::kInterleaved;
    for (size_t p = 0; p < plan_.pipelines.size(); ++p) {
      const std::vector<StagePlan>& stages = plan_.pipelines[p].stages;
      for (size_t s = 0; s < stages.size(); ++s) {
        const size_t n = stages[s].chunks.size();
        const std::string field = stage_path(p, s) + ".layers";
        if (!interleaved && n > 1) {
          add(field, std::to_string(n) + " ranges need schedule interleaved-1f1b (one per model chunk)");
        } else if (interleaved && s > 0 && n != stages[0].chunks.size()) {
          add(field, counted(n, "chunk") + ", but stage 0 has " + std::to_string(stages[0].chunks.size()) +
                         " (interleaved-1f1b needs the same number on every stage)");
        }
      }
      const long mb = plan_.pipelines[p].micro_batches;
      if (interleaved && !stages.empty() && mb >= 1 && mb % static_cast<long>(stages.size()) != 0) {
        add("pipelines[" + std::to_string(p) + "].micro_batches",
            "interleaved-1f1b needs micro-batches in multiples of the " + counted(stages.size(), "stage") +
                " (got " + std::to_string(mb) + ")");
      }
    }
  }

  void batch() {
    bool counts_ok = plan_.micro_batch >= 1 && !plan_.pipelines.empty();
    if (plan_.micro_batch < 1) add("micro_batch", "must be at least 1");
    for (size_t p = 0; p < plan_.pipelines.size(); ++p) {
      if (plan_.pipelines[p].micro_batches < 1) {
        add("pipelines[" + std::to_string(p) + "].micro_batches", "must be at least 1");
        counts_ok = false;
      }
    }
    if (counts_ok && plan_.samples() != model_.training.global_batch) {
      add("pipelines", "micro-batches add up to " + std::to_string(plan_.samples()) +
                           " samples (sum of micro_batches x micro_batch " + std::to_string(plan_.micro_batch) +
                           "), but the model's global batch is " + std::to_string(model_.training.global_batch));
    }
    if (plan_.micro_batch < 1) return;
    for (size_t p = 0; p < plan_.pipelines.size(); ++p) {
      for (size_t s = 0; s < plan_.pipelines[p].stages.size(); ++s) {
        const StagePlan& st = plan_.pipelines[p].stages[s];
        if (st.tp < 1 || st.cp < 1 || st.devices.empty() || st.devices.size() % st.group() != 0) continue;
        if (st.dp() > plan_.micro_batch) {
          add(stage_path(p, s) + ".devices", "the stage's " + std::to_string(st.dp()) +
                                                 " data-parallel copies cannot share a micro-batch of " +
                                                 counted(plan_.micro_batch, "sample"));
        }
      }
    }
  }

  struct Use {
    std::string field;  // the devices field of the stage
    int gpu = 0;
  };

  // The first GPU (stages in plan order) that cannot compute in `t`.
  std::optional<Use> lacking(DType t) const {
    for (size_t p = 0; p < plan_.pipelines.size(); ++p) {
      for (size_t s = 0; s < plan_.pipelines[p].stages.size(); ++s) {
        for (int d : plan_.pipelines[p].stages[s].devices) {
          if (in_cluster(d) && !cluster_.device_of(d).supports(t)) return Use{stage_path(p, s) + ".devices", d};
        }
      }
    }
    return std::nullopt;
  }

  void dtype() {
    const DType want = model_.training.dtype;
    const std::optional<Use> miss = lacking(want);
    if (!miss) return;
    const Device& dev = cluster_.device_of(miss->gpu);
    const std::string lacks = dev.name + " does not support " + std::string(dtype_name(want));
    const std::optional<DType> fallback = model_.training.dtype_fallback;
    if (!fallback) {
      add(miss->field, lacks + " and the model states no fallback");
      return;
    }
    const std::optional<Use> miss_fallback = lacking(*fallback);
    if (!miss_fallback) return;  // the whole job computes in the fallback
    const std::string fb(dtype_name(*fallback));
    if (!dev.supports(*fallback)) {
      add(miss->field, lacks + " nor the fallback " + fb);
    } else {
      add(miss_fallback->field, cluster_.device_of(miss_fallback->gpu).name + " does not support the fallback " + fb +
                                    ", which the job needs because " + lacks);
    }
  }

  void one_tp_per_layer() {
    struct Holder {
      size_t p = 0, s = 0;
      int tp = 0;
    };
    std::vector<std::optional<Holder>> holder(std::max<long>(model_.layers, 0));
    for (size_t p = 0; p < plan_.pipelines.size(); ++p) {
      for (size_t s = 0; s < plan_.pipelines[p].stages.size(); ++s) {
        const StagePlan& st = plan_.pipelines[p].stages[s];
        bool reported = false;
        for (const LayerRange& r : st.chunks) {
          const auto [lo, hi] = clipped(r);
          for (int l = lo; l <= hi; ++l) {
            if (!holder[l]) {
              holder[l] = Holder{p, s, st.tp};
            } else if (holder[l]->p < p && holder[l]->tp != st.tp && !reported) {
              add(stage_path(p, s) + ".tp", "layer " + std::to_string(l) + " is held at tp " +
                                                std::to_string(holder[l]->tp) + " by " +
                                                stage_path(holder[l]->p, holder[l]->s) +
                                                "; every copy of a layer must use one tp width");
              reported = true;
            }
          }
        }
      }
    }
  }

  const HybridPlan& plan_;
  const ModelSpec& model_;
  const Cluster& cluster_;
  std::vector<PlanProblem> out_;
};

}  // namespace

std::string format_devices(const std::vector<int>& devices) { return compress(devices, ","); }

std::vector<int> chunk_starts(const PipelinePlan& p) {
  std::vector<int> out;
  for (const StagePlan& st : p.stages) {
    for (const LayerRange& c : st.chunks) {
      if (c.part == ChunkPart::kLayers) out.push_back(c.first);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<PlanProblem> check_hybrid_plan(const HybridPlan& plan, const ModelSpec& model, const Cluster& cluster) {
  return Checker(plan, model, cluster).run();
}


}  // namespace hetsim
