// File: planner/hybrid/pipeline_schedule.cpp
#include "planner/hybrid/pipeline_schedule.hpp"

#include <algorithm>

namespace hetsim {

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

// ZB-H1-style: the 1F1B order with each backward split into B and W, W right after its B. A
// stage sends the gradient of its input as soon as B is done, so the backward chain through the
// stages costs B per stage instead of B + W: with equal passes the bubble is (P - 1)(F + B)
// instead of 1F1B's (P - 1)(F + B + W), at 1F1B's activation memory. (ZB-H1's hand-tuned W
// placement reaches (P - 1)(F + B - W); that placement is not reproduced.)
std::vector<PipelineStep> zero_bubble(int stage, int stages, int micro_batches) {
  std::vector<PipelineStep> out;
  for (const PipelineStep& s : one_f_one_b(stages - stage - 1, micro_batches, stages, 1)) {
    out.push_back(s);
    if (s.pass == PassKind::kBackward) out.push_back({PassKind::kWeight, s.micro_batch, 0});
  }
  return out;
}

}  // namespace

std::vector<PipelineStep> stage_order(PipelineSchedule s, int stage, int stages, int micro_batches, int chunks) {
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
    case PipelineSchedule::kOneFOneB: return one_f_one_b(stages - stage - 1, micro_batches, stages, 1);
    case PipelineSchedule::kEager: return one_f_one_b(2 * (stages - stage) - 2, micro_batches, stages, 1);
    case PipelineSchedule::kInterleaved:
      if (chunks == 1) return one_f_one_b(stages - stage - 1, micro_batches, stages, 1);
      return one_f_one_b(2 * (stages - stage - 1) + (chunks - 1) * stages, micro_batches, stages, chunks);
    case PipelineSchedule::kZeroBubble: return zero_bubble(stage, stages, micro_batches);
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

}  // namespace hetsim
