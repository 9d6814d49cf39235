// File: planner/hybrid/pass_emitter.cpp
#include "planner/hybrid/pass_emitter.hpp"

#include <algorithm>
#include <utility>

#include "planner/hybrid/moe_dispatch.hpp"
#include "planner/hybrid/tp_collectives.hpp"

namespace hetsim {

ComputeStreams::ComputeStreams(Program& program, PipelineLayout& layout, int devices)
    : program_(program), layout_(layout), mem_now_(devices, 0), mem_peak_(devices, 0), last_compute_(devices, -1), gather_dep_(devices, -1) {}

void ComputeStreams::mirror(int from, int to) {
  mem_now_[to] = mem_now_[from];
  mem_peak_[to] = mem_peak_[from];
  last_compute_[to] = last_compute_[from];
  gather_dep_[to] = gather_dep_[from];
}

int ComputeStreams::add(const std::vector<int>& group, double seconds, double flops, double memory, std::vector<int> deps,
                        std::string label) {
  for (int d : group) {
    if (gather_dep_[d] >= 0) {
      deps.push_back(gather_dep_[d]);
      gather_dep_[d] = -1;
    }
    if (layout_.tp_tail[d] >= 0) {
      deps.push_back(layout_.tp_tail[d]);
      layout_.tp_tail[d] = -1;
    }
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  ComputeTask c{group[0], seconds, flops * static_cast<double>(group.size()), memory, {group.begin() + 1, group.end()}};
  const int t = program_.add({std::move(label), std::move(c), std::move(deps)});
  for (int d : group) {
    if (memory != 0) {
      mem_now_[d] += memory;
      mem_peak_[d] = std::max(mem_peak_[d], mem_now_[d]);
    }
    last_compute_[d] = t;
  }
  return t;
}

namespace {

class PassWriter {
 public:
  PassWriter(ComputeStreams& streams, const PassSpec& spec, std::vector<int> deps)
      : streams_(streams), spec_(spec), devices_(spec.replica->devices), w_(*spec.work), deps_(std::move(deps)) {
    tp_ = std::max(1, spec.tp);
    const int cp = std::max(1, spec.cp), n = static_cast<int>(devices_.size());
    const auto add = [&](std::vector<std::vector<int>>& to, std::vector<int> g) {
      std::sort(g.begin(), g.end());
      to.push_back(std::move(g));
    };
    for (int c = 0; c + tp_ <= n; c += tp_) add(tp_groups_, {devices_.begin() + c, devices_.begin() + c + tp_});  // TP groups
    for (int copy = 0; cp > 1 && copy + tp_ * cp <= n; copy += tp_ * cp) {  // CP groups: a TP rank of every TP group of a copy
      for (int r = 0; r < tp_; ++r) {
        std::vector<int> g;
        for (int c = 0; c < cp; ++c) g.push_back(devices_[copy + c * tp_ + r]);
        add(cp_groups_, std::move(g));
      }
    }
    const int ep = std::max(1, spec.ep), etp = std::max(1, spec.expert_tp);
    for (int blk = 0; blk + ep * etp <= n; blk += ep * etp) {  // expert groups: ep x expert_tp consecutive devices
      for (int r = 0; ep > 1 && r < etp; ++r) {  // EP groups: an expert-TP rank of each
        std::vector<int> g;
        for (int i = 0; i < ep; ++i) g.push_back(devices_[blk + r + i * etp]);
        add(ep_groups_, std::move(g));
      }
      for (int i = 0; etp > 1 && i < ep; ++i) add(etp_groups_, {devices_.begin() + blk + i * etp, devices_.begin() + blk + (i + 1) * etp});
    }
    // The flex dispatcher: each EP group's GPUs on each node (its in-node all-to-all), and its rails.
    ep_node_groups_ = ep_groups_;
    if (spec.dispatcher == MoeDispatcher::kFlex && spec.cluster != nullptr) {
      ep_node_groups_.clear();
      for (const std::vector<int>& g : ep_groups_) {
        FlexGroups f = flex_groups(g, *spec.cluster);
        for (std::vector<int>& n : f.nodes) {
          if (n.size() > 1) ep_node_groups_.push_back(std::move(n));
        }
        for (std::vector<int>& r : f.rails) rail_groups_.push_back(std::move(r));
      }
    }
  }

  // The framework's host time at the start of the pass (the calibration profile's pass_host; the
  // slowest GPU type of the pass's devices): after the pass's inputs, before its first kernel.
  void host() {
    if (spec_.cluster == nullptr) return;
    double s = 0;
    for (int d : devices_) s = std::max(s, spec_.cluster->device_of(d).fitted.pass_host_s);
    if (s > 0) compute(s, 0, 0, spec_.tag + ".host");
  }

  int run() {
    host();
    if (spec_.per_part) {
      for (const Unit& u : units()) run_unit(u);
      return finish();
    }
    const std::vector<int>& blocks = *spec_.blocks;
    if (spec_.pass == PassKind::kForward) {
      forward(blocks);
      return finish();
    }
    // Backward passes run the blocks last to first.
    const std::vector<int> reversed(blocks.rbegin(), blocks.rend());
    if (!spec_.per_block) {
      spec_.pass == PassKind::kBackward ? backward(reversed, "") : weight(reversed, "");
      return finish();
    }
    for (int b : reversed) spec_.pass == PassKind::kBackward ? backward({b}, "." + w_[b].name) : weight({b}, "." + w_[b].name);
    return finish();
  }

  // Every part separately: the pass as units in the order they run. Forward: (block, part);
  // backward: (block, part), last part first, the block's recompute run with its first unit (so that
  // overlapped passes pair a forward's parts with a backward's one for one, as Megatron-Core runs a
  // module's recompute inside its backward); weight: (block, 0).
  struct Unit {
    int block = 0;
    int part = 0;
  };
  [[nodiscard]] std::vector<Unit> units() const {
    std::vector<Unit> out;
    const std::vector<int>& blocks = *spec_.blocks;
    if (spec_.pass == PassKind::kForward) {
      for (int b : blocks) {
        for (size_t pp = 0; pp < w_[b].parts.size(); ++pp) out.push_back({b, static_cast<int>(pp)});
      }
      return out;
    }
    for (auto bi = blocks.rbegin(); bi != blocks.rend(); ++bi) {
      if (spec_.pass == PassKind::kWeight) {
        out.push_back({*bi, 0});
        continue;
      }
      for (size_t pp = w_[*bi].parts.size(); pp-- > 0;) out.push_back({*bi, static_cast<int>(pp)});
    }
    return out;
  }
  void run_unit(const Unit& u) {
    if (spec_.pass == PassKind::kForward) return forward_part(u.block, u.part);
    if (spec_.pass == PassKind::kWeight) return weight({u.block}, "." + w_[u.block].name);
    const BlockWork& bw = w_[u.block];
    if (u.part + 1 == static_cast<int>(bw.parts.size())) host_wait(bw.host_wait_bwd_s, spec_.tag + "." + bw.name + ".bwd");
    if (bw.recompute_s > 0 && u.part + 1 == static_cast<int>(bw.parts.size())) backward_recompute(u.block);
    backward_part(u.block, u.part);
  }
  // The pass's last task: the expert collectives still pending (overlapped mode) are joined first.
  int finish() {
    if (!pending_.empty()) compute(0, 0, 0, spec_.tag + ".ep_join");
    return last_;
  }

 private:
  int compute(double secs, double flops, double mem, std::string label) {
    deps_.insert(deps_.end(), pending_.begin(), pending_.end());
    pending_.clear();
    last_ = streams_.add(devices_, secs, flops, mem, std::move(deps_), std::move(label));
    deps_.clear();
    return last_;
  }

  void tp_sync(const TpBytes& bytes, const std::string& label) {
    if (tp_ == 1 || !bytes.any()) return;  // a compute task always comes first: `last_` is set
    join(collectives(tp_groups_, bytes, spec_.sequence_parallel, last_, label), label);
  }

  // A forward span's trailing TP collectives; under userbuffers (hide > 0) chunked with the GEMM
  // beside them: one chunk (`exposed`) alone, then the rest (`rest`) under the span's last `hide`
  // seconds, which the caller has left out of the span.
  void forward_tp_sync(const TpBytes& exposed, const TpBytes& rest, double hide, const std::string& label) {
    if (hide <= 0) return tp_sync(rest, label);  // no userbuffers: nothing chunked (`exposed` is empty)
    tp_sync(exposed, label + ".chunk");
    std::vector<int> ends = collectives(tp_groups_, rest, spec_.sequence_parallel, last_, label);
    ends.push_back(compute(hide, 0, 0, label + "_gemm"));
    join(ends, label);
  }

  // The collectives of `bytes` over each of `groups` after `dep` (one group: its tasks; several: run
  // side by side, each group's after `dep`). Returns each group's last task.
  std::vector<int> collectives(const std::vector<std::vector<int>>& groups, const TpBytes& bytes, bool sequence_parallel,
                               int dep, const std::string& label, CommStream stream = CommStream::kTensor) {
    std::vector<int> deps = pending_;
    if (dep >= 0) deps.push_back(dep);
    std::vector<int> ends;
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::string name = groups.size() > 1 ? label + ".g" + std::to_string(g) : label;
      ends.push_back(add_tp_collectives(streams_.program(), groups[g], bytes, sequence_parallel, deps, name, stream));
    }
    return ends;
  }

  // The next kernel waits for `ends` (collectives of this copy's groups): one task is `last_`
  // itself; several are joined by an empty kernel on every device of the copy, so that what follows
  // (the next kernel, the pass's outputs) waits for one task.
  void join(const std::vector<int>& ends, const std::string& label) {
    if (ends.size() == 1) {
      last_ = ends.front();
      deps_ = {last_};
      for (int d : devices_) streams_.layout().tp_tail[d] = last_;
      return;
    }
    deps_.insert(deps_.end(), ends.begin(), ends.end());
    compute(0, 0, 0, label + ".join");
  }

  // Collectives over every group of another axis after a span (blocking): Ulysses' all-to-alls over
  // the CP groups, the experts' dispatch and combine over the EP groups, their gathers over expert TP.
  void axis_sync(const std::vector<std::vector<int>>& groups, const TpBytes& bytes, const std::string& label) {
    if (groups.empty() || !bytes.any()) return;
    join(collectives(groups, bytes, false, last_, label), label);
  }
  void cp_sync(const TpBytes& bytes, const std::string& label) { axis_sync(cp_groups_, bytes, label + ".cp"); }
  // Expert parallelism after a span, on the expert stream: forward, the all-to-all then expert TP's
  // collective (dispatch: all-gather; combine: reduce-scatter after it); their backward duals in the
  // reverse order. Blocking, or (defer_expert) pending: only this pass's next kernel waits for them.
  // The flex dispatcher's in-node all-to-all (over each node's GPUs of the EP group, in `ep`) and
  // its inter-node one (`rail` over each rail) run side by side.
  void ep_sync(const TpBytes& ep, const TpBytes& etp, double rail, bool backward, const std::string& label) {
    const auto issue = [&](const std::vector<std::vector<int>>& groups, const TpBytes& bytes, const std::string& name,
                           CommStream stream = CommStream::kExpert) {
      return groups.empty() || !bytes.any() ? std::vector<int>{} : collectives(groups, bytes, false, last_, name, stream);
    };
    const auto wait = [&](std::vector<int> ends, const std::string& name) {
      if (ends.empty()) return;
      if (spec_.defer_expert) {
        pending_ = std::move(ends);
      } else {
        join(ends, name);
      }
    };
    if (backward) wait(issue(etp_groups_, etp, label + ".etp"), label + ".etp");
    std::vector<int> ends = issue(ep_node_groups_, ep, label + ".ep");
    TpBytes rails;
    rails.all_to_all = rail;
    const std::vector<int> rail_ends = issue(rail_groups_, rails, label + ".ep_rail", CommStream::kExpertRail);
    ends.insert(ends.end(), rail_ends.begin(), rail_ends.end());
    wait(std::move(ends), label + ".ep");
    if (!backward) wait(issue(etp_groups_, etp, label + ".etp"), label + ".etp");
  }

  // A span of `secs` whose last `hide` seconds (the attention) run beside ring attention's exchange
  // of `ring` bytes over every CP group (issued when the attention starts); the next kernel waits for
  // both. Without a ring, one kernel.
  int ring_span(double secs, double hide, double ring, double flops, double mem, const std::string& label) {
    if (cp_groups_.empty() || ring <= 0) return compute(secs, flops, mem, label);
    hide = std::clamp(hide, 0.0, secs);
    const int before = compute(secs - hide, 0, mem, label);
    TpBytes ag;
    ag.all_gather = ring;
    std::vector<int> ends = collectives(cp_groups_, ag, false, before, label + ".cp_ring");
    const int attention = compute(hide, flops, 0, label + "_attention");
    ends.push_back(attention);
    deps_.insert(deps_.end(), ends.begin(), ends.end());
    compute(0, 0, 0, label + ".cp_join");
    return attention;
  }

  // A backward span and its TP collectives, which may run under its last `hidden` seconds (the
  // weight gradients, tp_comm_overlap): then they start after the rest and the next kernel waits
  // for both. Returns the task finishing the weight gradients; `last_` ends as the task the
  // gradient sent back waits for.
  int backward_span(double secs, double hidden, double flops, double mem, const TpBytes& bytes, const std::string& label) {
    const bool overlap = spec_.tp_comm_overlap && !spec_.split_weight && tp_ > 1;
    hidden = overlap && bytes.any() ? std::clamp(hidden, 0.0, secs) : 0;
    if (hidden <= 0) {
      const int c = compute(secs, flops, mem, label);
      tp_sync(bytes, label);
      return c;
    }
    const int first = compute(secs - hidden, 0, mem, label);
    const std::vector<int> syncs = collectives(tp_groups_, bytes, spec_.sequence_parallel, first, label);
    const int c = compute(hidden, flops, 0, label + "_weight");
    join(syncs, label);
    return c;
  }

  void set_last_grad(const std::vector<int>& blocks, int task) {
    for (int b : blocks) {
      for (int d : devices_) streams_.layout().last_grad[d][b] = task;
    }
  }

  // --- every part separately --------------------------------------------------------------------

  void forward_part(int b, int pp) {
    const BlockWork& bw = w_[b];
    if (const auto it = spec_.block_waits.find(b); pp == 0 && it != spec_.block_waits.end()) {
      deps_.insert(deps_.end(), it->second.begin(), it->second.end());
    }
    const WorkPart& part = bw.parts[pp];
    const std::string label = spec_.tag + "." + bw.name + ".fwd";
    if (pp == 0) host_wait(bw.host_wait_fwd_s, label);
    ring_span(part.fwd_s - part.tp_fwd_hide_s, part.cp_hide_fwd_s, part.cp_ring_fwd, 0, pp == 0 ? bw.saved_bytes : 0,
              label + (bw.parts.size() > 1 ? std::to_string(pp) : ""));
    forward_tp_sync(part.tp_fwd_exposed, part.tp_fwd, part.tp_fwd_hide_s, label + std::to_string(pp));
    cp_sync(part.cp_fwd, label + std::to_string(pp));
    ep_sync(part.ep_fwd, part.etp_fwd, part.ep_rail_fwd, false, label + std::to_string(pp));
  }

  // Activation offloading: the compute stream idle while the host link copies (`label`.host_wait).
  void host_wait(double secs, const std::string& label) {
    if (secs > 0) compute(secs, 0, 0, label + ".host_wait");
  }

  // The forward repeated before a backward, with the TP and CP collectives it repeats.
  void recompute(const BlockWork& bw, const std::string& label) {
    ring_span(bw.recompute_s, bw.recompute_cp_hide_s, bw.recompute_cp_ring, 0, bw.recompute_bytes, label);
    tp_sync(bw.recompute_tp, label);
    cp_sync(bw.recompute_cp, label);
    ep_sync(bw.recompute_ep, bw.recompute_etp, bw.recompute_ep_rail, false, label);
  }

  void backward_recompute(int b) { recompute(w_[b], spec_.tag + "." + w_[b].name + ".recompute"); }

  void backward_part(int b, int pp) {
    const BlockWork& bw = w_[b];
    const bool split_w = spec_.split_weight;
    const double block_freed = bw.saved_bytes + bw.recompute_bytes - (split_w ? bw.weight_input_bytes : 0);
    const WorkPart& part = bw.parts[pp];
    const std::string label =
        spec_.tag + "." + bw.name + (split_w ? ".bwd_input" : ".bwd") + (bw.parts.size() > 1 ? std::to_string(pp) : "");
    const double ring_s = cp_groups_.empty() || part.cp_ring_bwd <= 0 ? 0 : std::min(part.cp_hide_bwd_s, part.bwd_input_s);
    if (ring_s > 0 && part.cp_ring_bwd > 0) ring_span(ring_s, ring_s, part.cp_ring_bwd, 0, 0, label);
    const int c = backward_span(part.bwd_input_s - ring_s + (split_w ? 0 : part.bwd_weight_s), part.bwd_overlap_s,
                                pp == 0 && !split_w ? bw.model_flops : 0, pp == 0 ? -block_freed : 0, part.tp_bwd, label);
    cp_sync(part.cp_bwd, label);
    ep_sync(part.ep_bwd, part.etp_bwd, part.ep_rail_bwd, true, label);
    if (!split_w) set_last_grad({b}, c);
  }

  // --- merged: one span and one collective for a set of blocks ---------------------------------

  double merged_latency(int collectives, const TpBytes& bytes) const {
    return tp_ > 1 ? spec_.alpha_s * std::max(0, collectives - bytes.count()) : 0;
  }

  // The blocks of a forward pass, cut into spans where the blocks' extra waits change.
  void forward(const std::vector<int>& blocks) {
    if (spec_.block_waits.empty()) return forward_span(blocks, "");
    const auto waits_of = [&](int b) {
      const auto it = spec_.block_waits.find(b);
      return it == spec_.block_waits.end() ? std::vector<int>{} : it->second;
    };
    std::vector<int> span;
    std::vector<int> waits = waits_of(blocks.front());
    const auto flush = [&] {
      deps_.insert(deps_.end(), waits.begin(), waits.end());
      std::string suffix;
      if (span.size() != blocks.size()) suffix.append(".").append(streams_.layout().block_name(span));
      forward_span(span, suffix);
      span.clear();
    };
    for (int b : blocks) {
      std::vector<int> w = waits_of(b);
      if (!span.empty() && w != waits) {
        flush();
        waits = std::move(w);
      }
      span.push_back(b);
    }
    flush();
  }

  void forward_span(const std::vector<int>& blocks, const std::string& suffix) {
    double secs = 0, saved = 0, ring = 0, hide = 0, tp_hide = 0, rail = 0, wait = 0;
    TpBytes bytes, exposed, cp_bytes, ep_bytes, etp_bytes;
    int collectives = 0;
    for (int b : blocks) {
      const BlockWork& bw = w_[b];
      wait += bw.host_wait_fwd_s;
      for (size_t pp = 0; pp < bw.parts.size(); ++pp) {
        const WorkPart& part = bw.parts[pp];
        secs += part.fwd_s;
        saved += pp == 0 ? bw.saved_bytes : 0;
        bytes += part.tp_fwd;
        exposed += part.tp_fwd_exposed;
        tp_hide += part.tp_fwd_hide_s;
        collectives += part.tp_fwd.count();
        ring += part.cp_ring_fwd;
        hide += part.cp_hide_fwd_s;
        cp_bytes += part.cp_fwd;
        ep_bytes += part.ep_fwd;
        rail += part.ep_rail_fwd;
        etp_bytes += part.etp_fwd;
      }
    }
    host_wait(wait, spec_.tag + suffix + ".fwd");
    ring_span(secs - tp_hide + merged_latency(collectives, bytes), hide, ring, 0, saved, spec_.tag + suffix + ".fwd");
    forward_tp_sync(exposed, bytes, tp_hide, spec_.tag + suffix + ".fwd");
    cp_sync(cp_bytes, spec_.tag + suffix + ".fwd");
    ep_sync(ep_bytes, etp_bytes, rail, false, spec_.tag + suffix + ".fwd");
  }

  // `blocks` in backward order; `suffix` names them when the pass is split per block.
  void backward(const std::vector<int>& blocks, const std::string& suffix) {
    const bool split_w = spec_.split_weight;
    double secs = 0, freed = 0, flops = 0, hidden = 0, ring = 0, ring_s = 0, rail = 0, wait = 0;
    BlockWork redo;  // the blocks' recomputes as one: their times and bytes summed, one block rebuilt at a time
    TpBytes bytes, cp_bytes, ep_bytes, etp_bytes;
    int collectives = 0;
    for (int b : blocks) {
      const BlockWork& bw = w_[b];
      wait += bw.host_wait_bwd_s;
      redo.recompute_s += bw.recompute_s;
      redo.recompute_tp += bw.recompute_tp;
      redo.recompute_cp_ring += bw.recompute_cp_ring;
      redo.recompute_cp_hide_s += bw.recompute_cp_hide_s;
      redo.recompute_cp += bw.recompute_cp;
      redo.recompute_ep += bw.recompute_ep;
      redo.recompute_etp += bw.recompute_etp;
      redo.recompute_ep_rail += bw.recompute_ep_rail;
      redo.recompute_bytes = std::max(redo.recompute_bytes, bw.recompute_bytes);
      freed += bw.saved_bytes - (split_w ? bw.weight_input_bytes : 0);
      if (!split_w) flops += bw.model_flops;
      for (const WorkPart& part : bw.parts) {
        secs += part.bwd_input_s + (split_w ? 0 : part.bwd_weight_s);
        hidden += part.bwd_overlap_s;
        bytes += part.tp_bwd;
        collectives += part.tp_bwd.count();
        ring += part.cp_ring_bwd;
        if (!cp_groups_.empty() && part.cp_ring_bwd > 0) ring_s += std::min(part.cp_hide_bwd_s, part.bwd_input_s);
        cp_bytes += part.cp_bwd;
        ep_bytes += part.ep_bwd;
        rail += part.ep_rail_bwd;
        etp_bytes += part.etp_bwd;
      }
    }
    const std::string label = spec_.tag + suffix;
    host_wait(wait, label + ".bwd");
    if (redo.recompute_s > 0) recompute(redo, label + ".recompute");
    const std::string name = label + (split_w ? ".bwd_input" : ".bwd");
    if (ring_s > 0 && ring > 0) ring_span(ring_s, ring_s, ring, 0, 0, name);
    const int c = backward_span(secs - ring_s + merged_latency(collectives, bytes), hidden, flops, -(freed + redo.recompute_bytes),
                                bytes, name);
    cp_sync(cp_bytes, name);
    ep_sync(ep_bytes, etp_bytes, rail, true, name);
    if (!split_w) set_last_grad(blocks, c);
  }

  void weight(const std::vector<int>& blocks, const std::string& suffix) {
    double secs = 0, freed = 0, flops = 0;
    for (int b : blocks) {
      const BlockWork& bw = w_[b];
      for (const WorkPart& part : bw.parts) secs += part.bwd_weight_s;
      freed += bw.weight_input_bytes;
      flops += bw.model_flops;
    }
    set_last_grad(blocks, compute(secs, flops, -freed, spec_.tag + suffix + ".bwd_weight"));
  }

  ComputeStreams& streams_;
  const PassSpec& spec_;
  const std::vector<int>& devices_;  // TP ranks in order, TP group after TP group (cp of them)
  std::vector<std::vector<int>> tp_groups_;  // each sorted (collectives)
  std::vector<std::vector<int>> cp_groups_;  // cp > 1: one per TP rank of each copy, sorted
  std::vector<std::vector<int>> ep_groups_;
  std::vector<std::vector<int>> ep_node_groups_;  // where the EP all-to-alls run: ep_groups_, or flex's node parts of them
  std::vector<std::vector<int>> rail_groups_;     // flex over several nodes: each EP group's rails  // ep > 1: one per expert-TP rank of each expert group, sorted
  std::vector<std::vector<int>> etp_groups_; // expert_tp > 1: consecutive runs of expert_tp, sorted
  const std::vector<BlockWork>& w_;
  std::vector<int> deps_;            // what the next task waits for
  std::vector<int> pending_;         // defer_expert: expert collectives the next kernel waits for
  int tp_ = 1;
  int last_ = -1;
};

}  // namespace

int emit_pass(ComputeStreams& streams, const PassSpec& spec, std::vector<int> deps) {
  return PassWriter(streams, spec, std::move(deps)).run();
}

std::pair<int, int> emit_overlapped_passes(ComputeStreams& streams, PassSpec a, std::vector<int> a_deps, PassSpec b,
                                           std::vector<int> b_deps) {
  for (PassSpec* s : {&a, &b}) {
    s->per_part = true;
    s->per_block = false;
    s->defer_expert = true;
  }
  PassWriter wa(streams, a, std::move(a_deps)), wb(streams, b, std::move(b_deps));
  wa.host();
  wb.host();
  // The backward's part first, then the forward's, as Megatron-Core orders a layer of the two
  // (TransformerLayerSchedulePlan.run in megatron/core/models/common/model_chunk_schedule_plan.py):
  // the backward's combine under the forward's attention, the forward's dispatch under the
  // backward's experts, the backward's dispatch under the forward's experts, the forward's combine
  // under the backward's attention. The forward's part first left the expert stream idle under the
  // backward's attention and the next forward's attention queued behind it.
  const bool backward_first = a.pass == PassKind::kForward && b.pass != PassKind::kForward;
  PassWriter& first = backward_first ? wb : wa;
  PassWriter& second = backward_first ? wa : wb;
  const auto u1 = first.units(), u2 = second.units();
  for (size_t i = 0; i < std::max(u1.size(), u2.size()); ++i) {
    if (i < u1.size()) first.run_unit(u1[i]);
    if (i < u2.size()) second.run_unit(u2[i]);
  }
  const int last_a = wa.finish();
  return {last_a, wb.finish()};
}

}  // namespace hetsim
