// File: planner/hybrid/pipeline_program.cpp
#include "planner/hybrid/pipeline_program.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <numeric>
#include <stdexcept>

#include "base/text.hpp"
#include "planner/data_parallel.hpp"
#include "planner/hybrid/boundary_resharder.hpp"
#include "planner/hybrid/gradient_sync.hpp"
#include "planner/hybrid/pass_emitter.hpp"
#include "planner/hybrid/pipeline_layout.hpp"
#include "planner/hybrid/pipeline_memory.hpp"
#include "planner/hybrid/pipeline_mirrors.hpp"
#include "planner/hybrid/pipeline_schedule.hpp"
#include "planner/hybrid/stage_boundary.hpp"
#include "planner/resharding/reshard_program.hpp"
#include "sim/repeat_folder.hpp"
#include "sim/repeated_step.hpp"

namespace hetsim {

namespace {

// What a copy of a stage receives before a pass. Key: (virtual stage, micro-batch, pass), then
// copy. Transfers issued when produced are already tasks; those issued when consumed wait as
// pending reshardings until the copy's step is emitted.
struct PendingReshard {
  MeshLayout src, dst;
  int producer = -1;  // the task that produced the tensor
  std::string label;
  CommStream stream = CommStream::kPipeline;
};
struct Received {
  std::vector<int> tasks;
  std::vector<PendingReshard> pending;
  std::vector<LocalGather> gathers;  // run by the receiving TP group just before it computes
};
using Inbox = std::map<std::tuple<int, int, int>, std::vector<Received>>;

// Passes of stage copies a program may hold (about ten tasks each, ~1 KB per task).
constexpr double kMaxHeldPasses = 1e6;
// Passes of stage copies a program may have when repeating locksteps are folded: every pass is
// still written (and those that repeat dropped) on the way, about a microsecond each (measured:
// 8.4 M passes of gpt3-1.3b interleaved-1f1b on a100-v100-2x2 built and simulated in 8.3 s,
// 2-core development machine, 2026-11-26), so this bounds a candidate's build to ~20 s.
constexpr double kMaxWrittenPasses = 2e7;

// Locksteps a repeating unit may span at most (a lockstep is one stage's step in every pipeline;
// a period of the steady state holds a step of every virtual stage, each in a few shapes: GPT-3
// 175B as PP 16 needs more than 272).
constexpr size_t kMaxLockstepsPerUnit = 4096;

struct TooManyHeldPasses {};

class Emitter {
 public:
  Emitter(const HybridPlan& plan, const Cluster& cluster, const StageWorkFn& work, const PipelineContext& ctx)
      : plan_(plan), cluster_(cluster), work_(work), ctx_(ctx), resharder_(plan.resharding, cluster) {
    out_.program.strategy = ctx.strategy;
    out_.program.devices.resize(cluster.gpu_count());
    layout_.gathered_bytes.assign(cluster.gpu_count(), 0);
  }

  PipelineProgram run() {
    Program& p = out_.program;
    for (int g = 0; g < cluster_.gpu_count(); ++g) p.devices[g].peak_flops = cluster_.device_of(g).peak(ctx_.dtype);
    p.samples = static_cast<double>(plan_.samples());
    p.tokens = p.samples * ctx_.tokens_per_sample;
    p.model_flops = p.samples * ctx_.model_flops_per_sample;
    // Every pass of every copy becomes a few tasks: refuse plans too large to simulate. Folded,
    // the program holds only the passes that do not repeat, but every pass is still written once
    // on the way (about a microsecond each).
    passes_ = plan_.stage_copy_passes();
    // Refused for hetsim's pass limit, not for the GPUs.
    auto count = [](double n) { return std::to_string(static_cast<long long>(n)); };
    auto too_large = [&](const std::string& why) {
      out_.infeasible_reason = "the plan has " + count(passes_) + " forward and backward passes of stage copies" + why +
                               ": use fewer, larger micro-batches";
      out_.program.tasks.clear();
      out_.too_large = true;
      return std::move(out_);
    };
    const double limit = ctx_.fold_rounds ? kMaxWrittenPasses : kMaxHeldPasses;
    if (passes_ > limit) return too_large("; hetsim simulates at most " + count(limit));
    setup();
    mirrors_ = pipeline_mirrors(ctx_.mirror_pipelines ? alike_pipelines(plan_, cluster_, layout_) : std::vector<int>(plan_.pipelines.size(), -1),
                                layout_, cluster_.gpu_count());
    param_waits_ = add_param_prefetch(plan_, cluster_, work_, ctx_, layout_, out_.program);
    try {
      const size_t first = out_.program.tasks.size();
      emit_pipelines();
      // The pipelines that mirror a written one: its tasks name their devices, which then hold
      // what its devices hold.
      add_pipeline_mirrors(out_.program, first, mirrors_);
      mirror_device_state(mirrors_, layout_, streams_, param_waits_);
    } catch (const TooManyHeldPasses&) {
      return too_large(" and its micro-batches do not repeat identically; hetsim holds at most " + count(kMaxHeldPasses) + " that do not");
    }
    add_gradient_sync(plan_, cluster_, work_, ctx_, layout_, out_.program);
    check_pipeline_memory(plan_, cluster_, work_, layout_, streams_, ctx_.reserve_bytes, out_);
    // Leaving out fewer tasks than are held saves little and costs the simulator a check of the
    // copies (a short drain that repeats at the very end): written back, now that nothing holds an
    // index into the program any more (the gradient synchronisation above used them).
    if (const std::optional<RepeatedStep>& rs = out_.program.repeated_step;
        rs && static_cast<double>(rs->more) * rs->size < static_cast<double>(out_.program.tasks.size())) {
      out_.program = unrolled(out_.program);
    }
    return std::move(out_);
  }

 private:
  const std::vector<BlockWork>& work_of(const Replica& r, int tp) { return replica_work(work_, plan_, r, tp); }

  void setup() {
    const std::vector<BlockWork>& any = work_(cluster_.gpus[plan_.pipelines[0].stages[0].devices[0]].node_type,
                                              stage_work_key(plan_, plan_.micro_batch, 1));
    layout_.blocks = static_cast<int>(any.size());
    layout_.last_grad.assign(cluster_.gpu_count(), std::vector<int>(layout_.blocks, -1));
    layout_.tp_tail.assign(cluster_.gpu_count(), -1);
    layout_.tied_embedding_params = ctx_.tied_embedding_params;
    layout_.tied = ctx_.tied_embedding_params > 0 && std::all_of(plan_.pipelines.begin(), plan_.pipelines.end(),
                                                [](const PipelinePlan& p) { return p.stages.size() > 1; });
    layout_.holders.assign(layout_.blocks, {});
    for (size_t pi = 0; pi < plan_.pipelines.size(); ++pi) {
      const PipelinePlan& pl = plan_.pipelines[pi];
      std::vector<StageInfo> infos;
      const int P = static_cast<int>(pl.stages.size());
      for (int s = 0; s < P; ++s) {
        const StagePlan& sp = pl.stages[s];
        StageInfo info;
        info.stages = P;
        info.chunks = static_cast<int>(sp.chunks.size());
        std::vector<int> all;
        for (int c = 0; c < info.chunks; ++c) {
          info.chunk_blocks.push_back(stage_blocks(sp, s, P, c, layout_.blocks - 2));
          all.insert(all.end(), info.chunk_blocks.back().begin(), info.chunk_blocks.back().end());
        }
        const std::vector<long> shares = replica_shares(plan_, sp, all, cluster_, work_);
        long first = 0;
        for (int j = 0; j < sp.dp(); ++j) {
          Replica r;
          r.devices.assign(sp.devices.begin() + j * sp.group(), sp.devices.begin() + (j + 1) * sp.group());
          r.cp = sp.cp;
          r.ep = sp.ep;
          r.expert_tp = sp.expert_tp;
          r.node_type = cluster_.gpus[r.devices[0]].node_type;
          r.first_sample = first;
          r.samples = shares[j];
          first += shares[j];
          for (int b : all) layout_.holders[b].push_back({static_cast<int>(pi), s, j});
          info.replicas.push_back(r);
        }
        info.order = stage_order(plan_.schedule, s, P, static_cast<int>(pl.micro_batches), info.chunks, extra_warmup(plan_));
        infos.push_back(std::move(info));
      }
      if (plan_.schedule == PipelineSchedule::kZeroBubble) {
        const auto orders = zero_bubble_stage_orders(plan_, pl, infos, work_);
        for (int s = 0; s < P; ++s) infos[s].order = orders[s];
      }
      layout_.stages.push_back(std::move(infos));
    }
  }

  // --- pipelines -----------------------------------------------------------------------------

  // Emits the steps of every stage in an order that respects each stage's schedule and the
  // dependencies between stages. Pipelines advance in rounds of one step each, so identical
  // pipelines are emitted in lockstep (their collectives, such as ZeRO-3 gathers, line up).
  void emit_pipelines() {
    const size_t np = layout_.stages.size();
    std::vector<std::vector<std::vector<char>>> fdone(np), bdone(np);
    inbox_.assign(np, {});
    for (size_t pi = 0; pi < np; ++pi) {
      const int V = static_cast<int>(layout_.stages[pi].size()) * layout_.stages[pi][0].chunks;
      const int m = static_cast<int>(plan_.pipelines[pi].micro_batches);
      fdone[pi].assign(V, std::vector<char>(m, 0));
      bdone[pi].assign(V, std::vector<char>(m, 0));
    }
    // Zero-bubble orders (from the passes' times) repeat over longer spans when a stage emits every
    // step it has ready (GPT-3 175B, 8 stages, 1536 micro-batches: 12 times the tasks otherwise).
    const bool every_ready = plan_.schedule == PipelineSchedule::kZeroBubble;
    auto weight_pass_next = [&](int s) {  // some pipeline's next step at stage s is a weight pass
      for (size_t pi = 0; pi < np; ++pi) {
        const std::vector<StageInfo>& infos = layout_.stages[pi];
        if (!mirrors_.is_mirror(pi) && s < static_cast<int>(infos.size()) && infos[s].next < infos[s].order.size() &&
            infos[s].order[infos[s].next].pass == PassKind::kWeight) {
          return true;
        }
      }
      return false;
    };
    // Whether step `k` of stage s's order (its next step by default) has its inputs emitted.
    auto ready = [&](size_t pi, int s, size_t k = SIZE_MAX) {
      const std::vector<StageInfo>& infos = layout_.stages[pi];
      if (s >= static_cast<int>(infos.size())) return false;
      k = k == SIZE_MAX ? infos[s].next : k;
      if (k >= infos[s].order.size()) return false;
      const int P = static_cast<int>(infos.size());
      const int V = P * infos[0].chunks;
      const PipelineStep& st = infos[s].order[k];
      const int vs = st.chunk * P + s;
      if (st.pass == PassKind::kForward) return vs == 0 || fdone[pi][vs - 1][st.micro_batch] != 0;
      if (st.pass == PassKind::kBackward) return vs == V - 1 ? fdone[pi][vs][st.micro_batch] != 0 : bdone[pi][vs + 1][st.micro_batch] != 0;
      return true;
    };
    size_t max_stages = 0, max_virtual = 0;
    for (const auto& infos : layout_.stages) {
      max_stages = std::max(max_stages, infos.size());
      max_virtual = std::max(max_virtual, infos.size() * static_cast<size_t>(infos[0].chunks));
    }
    // Steps are emitted stage by stage, each stage's ready steps in lockstep across pipelines (a
    // lockstep is one step of every pipeline that has one ready). Once the pipelines run in their
    // steady state the locksteps repeat with some period, micro-batches advanced: the folder keeps
    // two periods and leaves out the rest.
    const int max_period = static_cast<int>(std::min<size_t>(256 * max_virtual + 16, kMaxLockstepsPerUnit));
    RepeatFolder folder(out_.program, 2, max_period);
    const auto held = [this](const std::function<void(int&)>& f) { for_each_held_task(f); };
    std::deque<double> lockstep_passes;  // passes of the latest locksteps, newest last
    // Combined 1F1B: a step waits for the one it runs with; should nothing else be ready, the
    // steps waiting run alone for one round.
    bool alone = false;
    for (bool progress = true; progress;) {
      progress = false;
      bool waiting = false;
      for (int s = 0; s < static_cast<int>(max_stages); ++s) {
        // One forward or backward lockstep of each stage a sweep (and the weight passes after it),
        // even where more are ready: a P-stage steady state then repeats every two sweeps (2P
        // locksteps), not every P - 1 (2P^2 locksteps, past the folder's search at 64 stages).
        for (bool lockstep = true; lockstep;) {
          lockstep = false;
          bool gathered = false;
          std::vector<std::pair<int, int>> prefetched;  // ZeRO-3: the chunk's later weights, gathered under the step
          const int lockstep_start = static_cast<int>(out_.program.tasks.size());
          const double passes_before = held_passes_;
          for (size_t pi = 0; pi < np; ++pi) {
            if (mirrors_.is_mirror(pi) || !ready(pi, s)) continue;
            StageInfo& info = layout_.stages[pi][s];
            const PipelineStep st = info.order[info.next];
            const bool pairs = runs_paired(static_cast<int>(pi), s);
            if (pairs && !ready(pi, s, info.next + 1) && !alone) {
              waiting = true;
              continue;
            }
            const bool together = pairs && ready(pi, s, info.next + 1);
            if (plan_.gradient_sync == GradientSync::kZero3 && !gathered && st.pass != PassKind::kWeight) {
              prefetched = add_zero3_gather(plan_, work_, ctx_, layout_, streams_, static_cast<int>(pi), s, st);
              gathered = true;
            }
            emit_step(static_cast<int>(pi), s, st, inbox_[pi], together ? &info.order[info.next + 1] : nullptr);
            for (int k = 0; k <= (together ? 1 : 0); ++k) {
              const PipelineStep& done = info.order[info.next++];
              const int vs = done.chunk * static_cast<int>(layout_.stages[pi].size()) + s;
              if (done.pass == PassKind::kForward) fdone[pi][vs][done.micro_batch] = 1;
              if (done.pass == PassKind::kBackward) bdone[pi][vs][done.micro_batch] = 1;
            }
            lockstep = progress = true;
          }
          for (const auto& [d, t] : prefetched) streams_.wait_for(d, t);
          if (lockstep && ctx_.fold_rounds) {
            lockstep_passes.push_back(held_passes_ - passes_before);
            for (int left_out = folder.end_round(lockstep_start, held); left_out > 0; --left_out) {
              held_passes_ -= lockstep_passes.back();
              lockstep_passes.pop_back();
            }
            if (lockstep_passes.size() > static_cast<size_t>(max_period)) lockstep_passes.pop_front();
          }
          // Past the held limit, or sure to pass it once the folder finds nothing to leave out.
          if (held_passes_ > kMaxHeldPasses || (folder.gave_up() && passes_ > kMaxHeldPasses)) throw TooManyHeldPasses{};
          if (lockstep && !every_ready) lockstep = weight_pass_next(s);
        }
      }
      if (progress) {
        alone = false;
      } else if (waiting && !alone) {
        alone = progress = true;
      }
    }
    folder.finish();
    for (size_t pi = 0; pi < np; ++pi) {
      for (size_t s = 0; s < layout_.stages[pi].size() && !mirrors_.is_mirror(pi); ++s) {
        if (layout_.stages[pi][s].next != layout_.stages[pi][s].order.size()) {
          throw std::logic_error("pipeline schedule " + std::string(schedule_name(plan_.schedule)) + " deadlocks at stage " +
                                 std::to_string(s));
        }
      }
    }
  }

  // Every task index the emitter holds for tasks still to come to depend on (not the -1 of slots
  // never set, most [device][block] ones: the folder walks these once per period it leaves out).
  void for_each_held_task(const std::function<void(int&)>& f) {
    const auto set = [&f](int& t) { if (t >= 0) f(t); };
    streams_.for_each_held_task(f);
    for (int& t : layout_.tp_tail) set(t);
    for (auto& per_block : param_waits_) {
      for (std::vector<int>& tasks : per_block) {
        for (int& t : tasks) f(t);
      }
    }
    for (std::vector<int>& blocks : layout_.last_grad) {
      for (int& t : blocks) set(t);
    }
    for (Inbox& in : inbox_) {
      for (auto& [key, copies] : in) {
        for (Received& r : copies) {
          for (int& t : r.tasks) f(t);
          for (PendingReshard& p : r.pending) f(p.producer);
        }
      }
    }
  }

  // What copy `j` (`r`) received for the step keyed `in_key`: the transfers issued when produced,
  // those issued now (when consumed: after the producer and once the copy has finished its previous
  // work), and its TP group's local all-gathers. Returns the tasks its pass waits for.
  std::vector<int> receive(const Replica& r, Inbox& inbox, const std::tuple<int, int, int>& in_key, size_t j,
                           const std::string& rtag, PassKind pass) {
    std::vector<int> deps;
    const auto it = inbox.find(in_key);
    if (it == inbox.end()) return deps;
    Received& in = it->second[j];
    for (PendingReshard& pend : in.pending) {
      std::vector<int> after{pend.producer};
      for (int d : r.devices) {
        if (streams_.last(d) >= 0) after.push_back(streams_.last(d));
      }
      std::sort(after.begin(), after.end());
      after.erase(std::unique(after.begin(), after.end()), after.end());
      reshard(pend.src, pend.dst, after, pend.label, pend.stream, in);
    }
    in.pending.clear();
    if (in.gathers.empty()) return in.tasks;  // (the gathers wait for the transfers)
    for (size_t g = 0; g < in.gathers.size(); ++g) {
      std::string name = rtag;
      name.append(pass == PassKind::kForward ? ".act" : ".grad").append("_allgather");
      if (in.gathers.size() > 1) name.append(std::to_string(g));
      deps.push_back(emit_local_gather(out_.program, in.gathers[g], in.tasks, name, CommStream::kTensor));
    }
    return deps;
  }

  // Combined 1F1B (overlap_moe_expert_parallel_comm): whether stage s's next step runs together
  // with the one after it, on a stage whose experts are split.
  bool runs_paired(int pi, int s) const {
    const StageInfo& info = layout_.stages[pi][s];
    return plan_.overlap_moe_expert_parallel_comm && plan_.pipelines[pi].stages[s].ep > 1 && info.next + 1 < info.order.size() &&
           run_together(info.order[info.next], info.order[info.next + 1]);
  }

  // One pass of one unit of copies of a stage (the copies that expert groups span run as one):
  // what it received and how it runs.
  struct UnitPass {
    PassSpec spec;
    std::vector<int> deps;
    Replica lockstep;  // the copies of a unit as one (their devices in stage order), when several
    const std::vector<BlockWork>* w = nullptr;
    size_t j0 = 0, members = 1;
  };

  // The unit of copies starting at copy `j0` for step `st`; false when it runs no samples.
  bool prepare(UnitPass& u, int pi, int s, const PipelineStep& st, size_t j0, size_t unit, Inbox& inbox) {
    StageInfo& info = layout_.stages[pi][s];
    const int tp = plan_.pipelines[pi].stages[s].tp;
    const std::vector<int>& blocks = info.chunk_blocks[st.chunk];
    const std::string tag = "p" + std::to_string(pi) + ".s" + std::to_string(s) + ".mb" + std::to_string(st.micro_batch) +
                            (info.chunks > 1 ? ".c" + std::to_string(st.chunk) : "");
    const auto in_key = std::make_tuple(st.chunk * info.stages + s, st.micro_batch, static_cast<int>(st.pass));
    const Replica& r = info.replicas[j0];
    if (r.samples == 0) return false;
    u.w = &work_of(r, tp);
    u.j0 = j0;
    u.members = std::min(unit, info.replicas.size() - j0);
    // Everything each copy received for this step; then each task waits for the one before.
    for (size_t j = j0; j < j0 + u.members; ++j) {
      const std::vector<int> got = receive(info.replicas[j], inbox, in_key, j, tag + (info.replicas.size() > 1 ? ".r" + std::to_string(j) : ""),
                                           st.pass);
      u.deps.insert(u.deps.end(), got.begin(), got.end());
    }
    if (u.members > 1) {
      u.lockstep = r;
      for (size_t j = j0 + 1; j < j0 + u.members; ++j) {
        u.lockstep.devices.insert(u.lockstep.devices.end(), info.replicas[j].devices.begin(), info.replicas[j].devices.end());
      }
    }
    const Replica& runs = u.members > 1 ? u.lockstep : r;
    // The pass producing the chunk's final weight gradients runs block by block when they are
    // synchronised with other copies while the backward goes on, so each bucket can start early.
    const bool split_w = splits_weight_gradient(plan_.schedule);
    const bool grads = split_w ? st.pass == PassKind::kWeight : st.pass == PassKind::kBackward;
    const bool last_gradients = grads && plan_.grad_sync_overlap &&
                                st.micro_batch == plan_.pipelines[pi].micro_batches - 1 &&
                                std::any_of(blocks.begin(), blocks.end(), [&](int b) { return layout_.holders[b].size() > 1; });
    PassSpec& spec = u.spec;
    spec.pass = st.pass;
    spec.replica = &runs;
    spec.tp = tp;
    spec.cp = r.cp;
    spec.ep = r.ep;
    spec.expert_tp = r.expert_tp;
    spec.dispatcher = plan_.moe_dispatcher;
    spec.cluster = &cluster_;
    spec.work = u.w;
    spec.blocks = &blocks;
    spec.tag = tag + (info.replicas.size() > 1 ? (u.members > 1 ? ".u" : ".r") + std::to_string(j0 / unit) : "");
    spec.split_weight = split_w;
    spec.tp_comm_overlap = plan_.tp_comm_overlap;
    spec.sequence_parallel = plan_.sequence_parallel;
    spec.per_part = ctx_.tp_per_part;
    spec.alpha_s = tp > 1 && ctx_.tp_latency_s ? ctx_.tp_latency_s(r.node_type, tp) : 0;
    spec.per_block = last_gradients && !ctx_.tp_per_part;
    if (st.pass == PassKind::kForward && st.micro_batch == 0) {  // the first forward of each block
      for (int b : blocks) {
        for (int d : runs.devices) {
          // Read once, here: cleared after, so that the folder's walks over the tasks held skip them.
          std::vector<int>& waits = param_waits_[d][b];
          spec.block_waits[b].insert(spec.block_waits[b].end(), waits.begin(), waits.end());
          waits.clear();
        }
        if (spec.block_waits[b].empty()) spec.block_waits.erase(b);
      }
    }
    return true;
  }

  // After the unit's pass (its last task `last`): its compute sources, and what it sends on.
  void finish(const UnitPass& u, int pi, int s, const PipelineStep& st, int last, Inbox& inbox) {
    held_passes_ += 1;
    const StageInfo& info = layout_.stages[pi][s];
    const std::vector<int>& blocks = info.chunk_blocks[st.chunk];
    const std::vector<BlockWork>& w = *u.w;
    if (st.pass == PassKind::kBackward) {
      for (int b : blocks) {
        for (int k = 0; k < kCostSources; ++k) {
          out_.program.compute_source_s[k] += w[b].sources[k] * static_cast<double>(u.spec.replica->devices.size()) * mirrors_.stands_for(static_cast<size_t>(pi));
        }
      }
    }
    if (st.pass == PassKind::kWeight) return;
    // Forward: every tensor of this chunk read by a later stage; backward: the gradients of every
    // tensor this chunk read from an earlier one. Per receiving virtual stage, from every copy.
    std::map<int, double> bytes_to;
    const int first = blocks.front(), end = blocks.back() + 1;
    const int last_block = static_cast<int>(w.size()) - 1;
    for (int b = st.pass == PassKind::kForward ? first : 0; b < (st.pass == PassKind::kForward ? end : first); ++b) {
      for_each_consumer(w, b, [&](int c, double bytes) {
        const bool crosses = st.pass == PassKind::kForward ? c >= end : c >= first && c < end;
        if (crosses) bytes_to[virtual_stage_of(pi, st.pass == PassKind::kForward ? std::min(c, last_block) : b)] += bytes;
      });
    }
    const long samples = info.replicas[u.j0].samples;
    for (size_t j = u.j0; j < u.j0 + u.members; ++j) {
      for (const auto& [to, bytes] : bytes_to) {
        send_boundary(pi, s, st, static_cast<int>(j), last, to, bytes / static_cast<double>(samples), inbox);
      }
    }
  }

  // Step `st` of stage `s`; with `with`, that step too, run together with it (combined 1F1B).
  void emit_step(int pi, int s, const PipelineStep& st, Inbox& inbox, const PipelineStep* with = nullptr) {
    const StageInfo& info = layout_.stages[pi][s];
    const size_t unit = static_cast<size_t>(plan_.pipelines[pi].stages[s].lockstep_copies());
    for (size_t j0 = 0; j0 < info.replicas.size(); j0 += unit) {
      UnitPass a, b;
      if (!prepare(a, pi, s, st, j0, unit, inbox)) continue;
      if (with == nullptr) {
        finish(a, pi, s, st, emit_pass(streams_, a.spec, std::move(a.deps)), inbox);
        continue;
      }
      prepare(b, pi, s, *with, j0, unit, inbox);
      const auto [last_a, last_b] = emit_overlapped_passes(streams_, a.spec, std::move(a.deps), b.spec, std::move(b.deps));
      finish(a, pi, s, st, last_a, inbox);
      finish(b, pi, s, *with, last_b, inbox);
    }
    for (const PipelineStep* x : {&st, with}) {  // received and consumed
      if (x != nullptr) inbox.erase(std::make_tuple(x->chunk * info.stages + s, x->micro_batch, static_cast<int>(x->pass)));
    }
  }

  // The virtual stage (chunk x stages + stage) of pipeline `pi` holding block `b`.
  int virtual_stage_of(int pi, int b) {
    std::vector<int>& at = block_vs_[pi];
    if (at.empty()) {
      const std::vector<StageInfo>& infos = layout_.stages[pi];
      at.assign(static_cast<size_t>(layout_.blocks), -1);
      for (size_t s = 0; s < infos.size(); ++s) {
        for (size_t c = 0; c < infos[s].chunk_blocks.size(); ++c) {
          for (int blk : infos[s].chunk_blocks[c]) at[blk] = static_cast<int>(c * infos.size() + s);
        }
      }
    }
    return at[b];
  }

  // Activations to a later virtual stage `to`, or gradients back to an earlier one: the
  // micro-batch's boundary tensors as copy j of this stage holds them, resharded onto each copy of
  // the receiving stage that shares samples with it.
  void send_boundary(int pi, int s, const PipelineStep& st, int j, int last, int to, double bytes_per_sample, Inbox& inbox) {
    std::vector<StageInfo>& infos = layout_.stages[pi];
    const int P = infos[s].stages;
    const int V = P * infos[s].chunks;
    const int vs = st.chunk * P + s;
    if (to < 0 || to >= V || to == vs) return;
    // Another chunk of this stage (an interleaved skip connection): the same GPUs and layout, the
    // reading pass later on their streams; nothing moves (resharding would send GPUs to themselves).
    if (to % P == s) return;
    const StageInfo& dst = infos[to % P];
    const Replica& src = infos[s].replicas[j];
    std::vector<Received>& slot = inbox[std::make_tuple(to, st.micro_batch, static_cast<int>(st.pass))];
    slot.resize(dst.replicas.size());
    std::string label = "p";
    label.append(std::to_string(pi)).append(".mb").append(std::to_string(st.micro_batch));
    label.append(st.pass == PassKind::kForward ? ".act" : ".grad").append(".vs").append(std::to_string(vs));
    label.append("to").append(std::to_string(to));
    // [samples of the micro-batch] x [sequence, in units every TP width divides]; the sequence
    // is the longer dimension, the one a local all-gather splits among the receiving ranks.
    const long units = 1024 * std::lcm(static_cast<long>(src.devices.size()), static_cast<long>(dst.replicas.front().devices.size()));
    const double element_bytes = bytes_per_sample / static_cast<double>(units);
    const MeshLayout from = boundary_layout(src, plan_.micro_batch, plan_.sequence_parallel, units, element_bytes);
    for (size_t k = 0; k < dst.replicas.size(); ++k) {
      const Replica& d = dst.replicas[k];
      const long overlap = std::min(src.first_sample + src.samples, d.first_sample + d.samples) -
                           std::max(src.first_sample, d.first_sample);
      if (overlap <= 0) continue;
      MeshLayout into = boundary_layout(d, plan_.micro_batch, plan_.sequence_parallel, units, element_bytes);
      std::string name = label;
      if (dst.replicas.size() > 1 || infos[s].replicas.size() > 1) name.append(".r").append(std::to_string(j)).append("to").append(std::to_string(k));
      const CommStream stream = st.pass == PassKind::kForward ? CommStream::kPipeline : CommStream::kPipelineBack;
      if (plan_.resharding.overlap) {
        reshard(from, into, {last}, name, stream, slot[k]);
      } else {
        slot[k].pending.push_back({from, std::move(into), last, std::move(name), stream});
      }
    }
  }

  // The tasks moving `from` into `into` by the plan's method and load balancing, after `deps`,
  // recorded in what the receiving copy waits for (its local all-gathers left for it to run).
  void reshard(const MeshLayout& from, const MeshLayout& into, const std::vector<int>& deps, const std::string& label,
               CommStream stream, Received& in) {
    const BoundaryResharder::Moves& m = resharder_.moves(from, into);
    const ReshardWorks& w = m.works;
    const ReshardSchedule& sched = m.schedule;
    const bool lockstep = plan_.resharding.load_balance != LoadBalance::kOrder;
    const ReshardTasks t = emit_reshard(out_.program, w, sched, deps, label, lockstep, false, stream);
    for (const auto& [device, tasks] : t.ready) in.tasks.insert(in.tasks.end(), tasks.begin(), tasks.end());
    std::sort(in.tasks.begin(), in.tasks.end());
    in.tasks.erase(std::unique(in.tasks.begin(), in.tasks.end()), in.tasks.end());
    // One gather per receiving tile, however many sending copies fed it.
    for (const LocalGather& g : w.gathers) {
      const bool seen = std::any_of(in.gathers.begin(), in.gathers.end(), [&](const LocalGather& x) { return x.group == g.group; });
      if (!seen) in.gathers.push_back(g);
    }
  }

  const HybridPlan& plan_;
  const Cluster& cluster_;
  const StageWorkFn& work_;
  const PipelineContext& ctx_;
  PipelineProgram out_;
  PipelineLayout layout_;
  ComputeStreams streams_{out_.program, layout_, cluster_.gpu_count()};
  std::map<int, std::vector<int>> block_vs_;      // [pipeline][block]: its virtual stage
  BoundaryResharder resharder_;                    // boundary tensors' works and schedules
  std::vector<Inbox> inbox_;                       // [pipeline]: what copies of stages are yet to receive
  PipelineMirrors mirrors_;                        // alike pipelines written once
  std::vector<std::vector<std::vector<int>>> param_waits_;  // [device][block]: parameter gathers its first forward waits for
  double held_passes_ = 0;                         // passes of stage copies the program holds
  double passes_ = 0;                              // passes of stage copies the plan runs
};

}  // namespace

PipelineProgram build_pipeline_program(const HybridPlan& plan, const Cluster& cluster, const StageWorkFn& work,
                                       const PipelineContext& ctx) {
  return Emitter(plan, cluster, work, ctx).run();
}

}  // namespace hetsim
