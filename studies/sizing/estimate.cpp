// File: studies/sizing/estimate.cpp
#include "studies/sizing/estimate.hpp"

#include "base/text.hpp"
#include "planner/block_costs.hpp"
#include "workloads/op_graph.hpp"

namespace hetsim {
namespace {

constexpr double kActivationHeadroom = 1.25;  // reference clusters: state x this fits
constexpr double kAssumedMfu = 0.40;          // no reference ran: a typical large-model MFU (assumed)

double usable_bytes(const Offer& o) { return o.gpus_per_node * std::max(0.0, o.gpu.memory_bytes - kRuntimeReserveBytes); }

// The dtype the offer's GPUs train in: the model's, else its fallback.
DType dtype_on(const ModelSpec& model, const Device& d) {
  if (d.supports(model.training.dtype) || !model.training.dtype_fallback) return model.training.dtype;
  return *model.training.dtype_fallback;
}

}  // namespace

ModelNeeds model_needs(const ModelSpec& model) {
  const OpGraph g = build_op_graph(model, 1, model.training.dtype);
  ModelNeeds n;
  // Before any GPU is chosen: per-tensor FP8's two weight copies, as GPUs whose FP8 GEMMs take TN
  // operands alone keep them (an upper bound where they take any layout: weight_copy_bytes).
  const double state = state_bytes_per_param(model, model.training.dtype, false);
  n.state_bytes = g.params() * state;
  n.checkpoint_bytes = g.params() * (state - grad_bytes_per_param(model, model.training.dtype));
  n.flops_per_sample = g.model_flops();
  n.tokens_per_sample = static_cast<double>(model.seq_len);
  return n;
}

bool can_hold(const Sizing& s, const Mix& m, const ModelNeeds& needs) {
  double bytes = 0;
  for (size_t i = 0; i < s.offers.size(); ++i) bytes += static_cast<double>(m.counts[i]) * usable_bytes(s.offers[i]);
  return bytes >= needs.state_bytes;
}

long reference_count(const Sizing& s, size_t i, const ModelNeeds& needs) {
  const Offer& o = s.offers[i];
  for (long n = std::max(o.count_step, o.first_count()); n <= o.max_count; n += o.count_step) {
    if (static_cast<double>(n) * usable_bytes(o) >= kActivationHeadroom * needs.state_bytes) return n;
  }
  return -1;
}

std::vector<OfferRate> offer_rates(const Sizing& s, const ModelSpec& model, const ModelNeeds& needs,
                                   const std::vector<double>& reference_samples_per_s,
                                   const std::vector<double>& reference_mfu, const std::vector<long>& reference_nodes) {
  double mfu_sum = 0;
  int ran = 0;
  for (size_t i = 0; i < s.offers.size(); ++i) {
    if (reference_samples_per_s[i] > 0) {
      mfu_sum += reference_mfu[i];
      ++ran;
    }
  }
  const double mfu = ran > 0 ? mfu_sum / ran : kAssumedMfu;
  std::vector<OfferRate> out;
  for (size_t i = 0; i < s.offers.size(); ++i) {
    const Offer& o = s.offers[i];
    OfferRate r;
    if (reference_samples_per_s[i] > 0) {
      r.samples_per_s_per_gpu = reference_samples_per_s[i] / static_cast<double>(reference_nodes[i] * o.gpus_per_node);
      r.source = "planned alone on " + std::to_string(reference_nodes[i]) + " node(s): " +
                 format_double("%.4g", reference_samples_per_s[i]) + " samples/s";
    } else {
      const DType t = dtype_on(model, o.gpu);
      const double peak = o.gpu.supports(t) ? o.gpu.peak(t) : 0;
      r.samples_per_s_per_gpu = mfu * peak / needs.flops_per_sample;
      r.source = (ran > 0 ? "the references' mean MFU " : "an assumed MFU ") + format_double("%.0f %%", 100 * mfu) +
                 " at its GPU's peak (no reference of its own ran)";
    }
    out.push_back(r);
  }
  return out;
}

double estimate_samples_per_s(const Sizing& s, const Mix& m, const std::vector<OfferRate>& rates) {
  double total = 0;
  for (size_t i = 0; i < s.offers.size(); ++i) {
    total += static_cast<double>(m.counts[i] * s.offers[i].gpus_per_node) * rates[i].samples_per_s_per_gpu;
  }
  return total;
}

}  // namespace hetsim
