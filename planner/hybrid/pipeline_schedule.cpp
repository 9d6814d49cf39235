// File: planner/hybrid/pipeline_schedule.cpp
#include "planner/hybrid/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hetsim {

bool run_together(const PipelineStep& a, const PipelineStep& b) {
  const bool fb = (a.pass == PassKind::kForward && b.pass == PassKind::kBackward) ||
                  (a.pass == PassKind::kBackward && b.pass == PassKind::kForward);
  return fb && a.micro_batch != b.micro_batch;
}

bool splits_weight_gradient(PipelineSchedule s) { return s == PipelineSchedule::kZeroBubble; }

namespace {

// Megatron's interleaved order: the k-th forward (or backward) of a stage takes micro-batches in
// groups of `stages`, cycling through the chunks (backwards in reverse chunk order).
PipelineStep interleaved_step(PassKind pass, int k, int stages, int chunks) {
  const int group = k / stages;
  int chunk = group % chunks;
  if (pass == PassKind::kBackward) chunk = chunks - 1 - chunk;
  const int mb = (k / (stages * chunks)) * stages + k % stages;
  return {pass, mb, chunk};
}

// Warm-up forwards, then one forward and one backward, then the remaining backwards.
std::vector<PipelineStep> one_f_one_b(int warmup, int micro_batches, int stages, int chunks) {
  const int total = micro_batches * chunks;
  warmup = std::min(warmup, total);
  std::vector<PipelineStep> out;
  auto fwd = [&](int k) { out.push_back(interleaved_step(PassKind::kForward, k, stages, chunks)); };
  auto bwd = [&](int k) { out.push_back(interleaved_step(PassKind::kBackward, k, stages, chunks)); };
  for (int k = 0; k < warmup; ++k) fwd(k);
  for (int k = 0; k < total - warmup; ++k) {
    fwd(warmup + k);
    bwd(k);
  }
  for (int k = total - warmup; k < total; ++k) bwd(k);
  return out;
}

}  // namespace

std::vector<PipelineStep> stage_order(PipelineSchedule s, int stage, int stages, int micro_batches, int chunks,
                                      int extra_warmup) {
  switch (s) {
    case PipelineSchedule::kGpipe: {
      std::vector<PipelineStep> out;
      for (int c = 0; c < chunks; ++c) {
        for (int mb = 0; mb < micro_batches; ++mb) out.push_back({PassKind::kForward, mb, c});
      }
      for (int c = chunks; c-- > 0;) {
        for (int mb = 0; mb < micro_batches; ++mb) out.push_back({PassKind::kBackward, mb, c});
      }
      return out;
    }
    case PipelineSchedule::kOneFOneB: return one_f_one_b(stages - stage - 1 + extra_warmup, micro_batches, stages, 1);
    case PipelineSchedule::kEager: return one_f_one_b(2 * (stages - stage) - 2 + extra_warmup, micro_batches, stages, 1);
    case PipelineSchedule::kInterleaved:
      if (chunks == 1) return one_f_one_b(stages - stage - 1 + extra_warmup, micro_batches, stages, 1);
      return one_f_one_b(2 * (stages - stage - 1) + (chunks - 1) * stages + extra_warmup, micro_batches, stages, chunks);
    case PipelineSchedule::kZeroBubble: {
      const std::vector<double> one(stages, 1.0);
      return zero_bubble_orders(stages, micro_batches, one, one, one, 0)[stage];
    }
  }
  return {};
}

int max_in_flight(const std::vector<PipelineStep>& order) {
  int now = 0, peak = 0;
  for (const PipelineStep& s : order) {
    if (s.pass == PassKind::kForward) peak = std::max(peak, ++now);
    else if (s.pass == PassKind::kBackward) --now;
  }
  return peak;
}

std::vector<std::vector<PipelineStep>> zero_bubble_orders(int stages, int micro_batches, const std::vector<double>& f,
                                                         const std::vector<double>& b, const std::vector<double>& w,
                                                         double comm_s) {
  const int P = stages, m = micro_batches;
  std::vector<std::vector<PipelineStep>> order(P);
  std::vector<double> free_at(P, 0);
  std::vector<char> busy(P, 0);  // free_at is the end of a running pass (not a wake-up time)
  std::vector<int> next_f(P, 0), done_b(P, 0);
  std::vector<std::vector<double>> f_end(P, std::vector<double>(m, -1)), b_end(P, std::vector<double>(m, -1));
  std::vector<std::vector<int>> pending_w(P);  // micro-batches whose W is still to run, oldest first
  constexpr double kNever = 1e300;
  // When the next backward / forward of stage s may start (kNever: not yet known or not allowed).
  auto b_ready = [&](int s) {
    if (done_b[s] >= m) return kNever;
    const int mb = done_b[s];
    if (s == P - 1) return f_end[s][mb] >= 0 ? f_end[s][mb] : kNever;
    return b_end[s + 1][mb] >= 0 ? b_end[s + 1][mb] + comm_s : kNever;
  };
  auto f_ready = [&](int s) {
    // 1F1B's activation limit, and at most P weight gradients held back (their inputs stay)
    if (next_f[s] >= m || next_f[s] - done_b[s] >= P - s || static_cast<int>(pending_w[s].size()) >= P) return kNever;
    const int mb = next_f[s];
    if (s == 0) return 0.0;
    return f_end[s - 1][mb] >= 0 ? f_end[s - 1][mb] + comm_s : kNever;
  };
  for (int left = 3 * P * m; left > 0;) {
    // The stage that is free first acts: a ready backward, else a ready forward, else a pending
    // weight gradient, else it waits for the earliest backward or forward it can take.
    // (On ties a stage finishing a pass goes before one waking up: it may make work ready.)
    int s = 0;
    for (int k = 1; k < P; ++k) {
      if (free_at[k] < free_at[s] || (free_at[k] == free_at[s] && busy[k] && !busy[s])) s = k;
    }
    const double t = free_at[s];
    const double rb = b_ready(s), rf = f_ready(s);
    if (rb <= t) {
      const int mb = done_b[s]++;
      b_end[s][mb] = free_at[s] = t + b[s];
      order[s].push_back({PassKind::kBackward, mb, 0});
      pending_w[s].push_back(mb);
    } else if (rf <= t) {
      const int mb = next_f[s]++;
      f_end[s][mb] = free_at[s] = t + f[s];
      order[s].push_back({PassKind::kForward, mb, 0});
    } else if (!pending_w[s].empty()) {
      free_at[s] = t + w[s];
      order[s].push_back({PassKind::kWeight, pending_w[s].front(), 0});
      pending_w[s].erase(pending_w[s].begin());
    } else {
      // Wait for the earliest pass it knows of, or until a pass running elsewhere ends (that may
      // make an earlier one ready).
      double next = std::min(rb, rf);
      for (int k = 0; k < P; ++k) {
        if (k != s && busy[k] && free_at[k] >= t) next = std::min(next, free_at[k]);
      }
      // Nothing it knows of (with few micro-batches a stage can have no pass ready and none
      // running elsewhere while another stage, idle at this same moment, is about to start
      // one): it parks until the next pass anywhere begins, which wakes it at that pass's end.
      free_at[s] = next;
      busy[s] = false;
      if (std::all_of(free_at.begin(), free_at.end(), [](double x) { return x >= kNever; })) break;  // checked below
      continue;
    }
    busy[s] = true;
    --left;
    for (int k = 0; k < P; ++k) {  // parked stages wake when this pass ends
      if (k != s && free_at[k] >= kNever) free_at[k] = free_at[s];
    }
  }
  for (int s = 0; s < P; ++s) {
    if (order[s].size() != static_cast<size_t>(3 * m)) {
      throw std::logic_error("zero_bubble_orders: stage " + std::to_string(s) + " got " + std::to_string(order[s].size()) +
                             " of its " + std::to_string(3 * m) + " passes");
    }
  }
  return order;
}

long in_flight_bound(PipelineSchedule s, int stage, int stages, long micro_batches, int chunks, int extra_warmup) {
  const long total = micro_batches * chunks;
  switch (s) {
    case PipelineSchedule::kGpipe: return total;
    case PipelineSchedule::kEager: return std::min(total, 2L * (stages - stage) - 1 + extra_warmup);
    case PipelineSchedule::kInterleaved:
      if (chunks > 1) return std::min(total, 2L * (stages - stage - 1) + static_cast<long>(chunks - 1) * stages + 1 + extra_warmup);
      return std::min(total, static_cast<long>(stages - stage + extra_warmup));
    case PipelineSchedule::kOneFOneB: return std::min(total, static_cast<long>(stages - stage + extra_warmup));
    case PipelineSchedule::kZeroBubble: return std::min(total, static_cast<long>(stages - stage));
  }
  return total;
}

}  // namespace hetsim
