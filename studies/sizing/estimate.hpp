// File: studies/sizing/estimate.hpp
// The fast estimate that decides which mixes are worth planning: a mix that cannot hold the
// model's training state even fully sharded is out; the others are estimated at the per-GPU
// throughput each offer's GPUs reached when planned alone (a reference cluster of that offer),
// summed over the mix. The sum ignores what mixing vendors and a larger scale cost, so it is an
// optimistic estimate, never a prediction: only planned and simulated mixes are reported.
#pragma once

#include <string>
#include <vector>

#include "studies/sizing/mixes.hpp"
#include "workloads/model.hpp"

namespace hetsim {

struct ModelNeeds {
  double state_bytes = 0;        // weights + gradients + optimizer state, whole model
  double checkpoint_bytes = 0;   // what a checkpoint writes: weights + optimizer state (no gradients)
  double flops_per_sample = 0;   // forward + backward, without recompute
  double tokens_per_sample = 0;
};

[[nodiscard]] ModelNeeds model_needs(const ModelSpec& model);

// Whether the mix's GPU memory (less the runtime reserve) holds the whole training state once.
[[nodiscard]] bool can_hold(const Sizing& s, const Mix& m, const ModelNeeds& needs);

// The reference cluster of offer `i`: its smallest count (within min_count..max_count) whose GPUs
// hold the state with 25 % to spare for activations; -1 when none does.
[[nodiscard]] long reference_count(const Sizing& s, size_t i, const ModelNeeds& needs);

// Per-GPU samples/s of each offer, and where it comes from.
struct OfferRate {
  double samples_per_s_per_gpu = 0;
  std::string source;  // "planned: 4 nodes, 12.3 samples/s", "from the references' MFU 41 %", ...
};

// Rates from the references that ran (`reference_samples_per_s[i]` > 0, with its `reference_mfu`
// and node count); an offer without one gets the mean MFU of the others at its GPU's peak, or,
// when none ran, an assumed MFU of 40 % (said in its source).
[[nodiscard]] std::vector<OfferRate> offer_rates(const Sizing& s, const ModelSpec& model, const ModelNeeds& needs,
                                                 const std::vector<double>& reference_samples_per_s,
                                                 const std::vector<double>& reference_mfu, const std::vector<long>& reference_nodes);

[[nodiscard]] double estimate_samples_per_s(const Sizing& s, const Mix& m, const std::vector<OfferRate>& rates);

}  // namespace hetsim
