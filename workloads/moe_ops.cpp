// File: workloads/moe_ops.cpp
// The mixture-of-experts feed-forward block of gpt, llama and bert models with a moe: block, as
// Megatron-Core's MoELayer runs it: router, top-k with the load-balancing loss, token permutation
// into expert order, grouped expert GEMMs, unpermutation weighted by the routing probabilities,
// and the shared experts every token goes through; under latent MoE (moe.latent_size) the routed
// path runs at the latent width between a down- and an up-projection. All E experts on one device:
// expert parallelism is the planner's (Op::expert marks the ops whose parameters live per expert).
#include <algorithm>

#include "workloads/layer_ops.hpp"
#include "workloads/op_formulas.hpp"

namespace hetsim {

namespace {

// Who gets which rows. T tokens each go to top_k experts: T·k token copies ("routed").
struct Routing {
  double experts = 0;
  double routed = 0;    // T·k token copies
  double per_expert = 0;  // rows of each expert's GEMM: ceil(T·k / E) dropless, the capacity otherwise
  double executed = 0;  // rows the grouped GEMM runs: T·k dropless (ragged groups), E x capacity padded
  double useful = 0;    // rows holding a token: T·k, or E x capacity when that is less (tokens dropped)
};

Routing routing(const MoeSpec& moe, double tokens) {
  Routing r;
  r.experts = static_cast<double>(moe.experts);
  r.routed = tokens * static_cast<double>(moe.top_k);
  r.per_expert = static_cast<double>(expert_rows(moe, r.routed));
  r.executed = moe.capacity_factor ? r.experts * r.per_expert : r.routed;
  r.useful = std::min(r.routed, r.executed);
  return r;
}

// One linear layer of every expert as a grouped GEMM: [E, rows, in] -> [E, rows, out]. Model FLOPs
// count the rows holding a token (2·useful·in·out, what MFU counts); the kernel runs every executed
// row, padding included (tile_fraction = executed / useful scales its time). Bytes: the executed
// rows in and out, every expert's weights (backward: as a linear layer, twice the weights). Keeps
// its input rows.
Op expert_gemm(const std::string& name, int layer, const Routing& r, double in, double out, bool bias, double e) {
  Op op = Op::make(name, OpKind::kMoeExpert, layer);
  op.expert = true;
  const long experts = static_cast<long>(r.experts), rows = static_cast<long>(r.per_expert);
  op.shape = {experts, rows, static_cast<long>(out)};
  op.gemm = {experts, rows, static_cast<long>(out), static_cast<long>(in)};
  op.fwd_flops = 2 * r.useful * in * out;
  op.bwd_flops = 2 * op.fwd_flops;
  op.tile_fraction = r.useful > 0 ? r.executed / r.useful : 1;
  const double weights = r.experts * in * out;
  op.fwd_bytes = (r.executed * in + weights + r.executed * out) * e;
  op.bwd_bytes = (2 * r.executed * out + 2 * weights + 2 * r.executed * in) * e;
  op.params = r.experts * (in * out + (bias ? out : 0));
  op.saved_bytes = r.executed * in * e;
  return op;
}

}  // namespace

std::vector<int> moe_feed_forward(const LayerScope& sc, const std::string& p, int layer) {
  const MoeSpec& moe = *sc.model.moe;
  // The experts' activation is the model's (llama: SwiGLU unless stated); llama experts carry biases
  // where moe.expert_bias says, gpt and bert experts always.
  const bool llama = sc.model.family == Family::kLlama;
  const bool swiglu = mlp_activation_of(sc.model) == MlpActivation::kSwiglu;
  const bool relu2 = mlp_activation_of(sc.model) == MlpActivation::kRelu2;
  const bool bias = !llama || moe.expert_bias;
  const double t = sc.tokens(), h = sc.h, e = sc.e;
  const double w = static_cast<double>(moe_token_width(sc.model));  // the routed rows' width: h, or the latent's
  const bool latent = moe.latent_size > 0;
  const double f = static_cast<double>(moe.expert_ffn_hidden);
  const double gate = swiglu ? 2 : 1;  // SwiGLU's fc1 computes gate and up
  const Routing r = routing(moe, t);
  const long experts = static_cast<long>(r.experts), rows = static_cast<long>(r.per_expert);
  const int x = sc.last();  // the MLP norm's output, read by the router, the permutation and the shared experts
  // Their gradients summed into x's before the norm's backward.
  add_fork_gradient_sums(sc.ops[static_cast<size_t>(x)], t * h, moe.shared_ffn_hidden > 0 ? 3 : 2, e);

  // Router: logits = x · W_r (h -> E, no bias), kept input x.
  sc.linear(p + "router", layer, h, r.experts, false);
  // Softmax (or sigmoid) over E logits, top-k selection and the auxiliary load-balancing loss
  // (per-expert sums of probabilities and of routed tokens): ~5 + 1 + 2 FLOPs per logit. Reads the
  // logits, writes the probabilities and the top-k weights (dtype) and indices (int32); backward
  // reads the weights' gradient and the probabilities, writes the logits' gradient. Keeps the
  // probabilities and the indices (which the permutations reuse).
  Op topk = vector_op(p + "router_topk", OpKind::kSoftmax, layer, t * r.experts, 8, 2, 0, t * r.experts,
                      sc.act_shape(r.experts), e);
  topk.fwd_bytes = 2 * t * r.experts * e + r.routed * (e + 4);
  topk.bwd_bytes = topk.fwd_bytes;
  topk.saved_bytes = t * r.experts * e + r.routed * 4;
  const int probs = sc.add(std::move(topk));
  // Latent MoE: x projected down to the latent width before the permutation (fc1_latent_proj, a
  // linear layer without bias every token runs, its weights whole on every GPU); its input x is the
  // one the router keeps.
  const int routed_in = latent ? sc.linear(p + "moe_latent_in", layer, h, w, false, false, {x}) : x;
  // Permutation: gathers each token's row (h, or the latent's w) into its k expert slots (reads T·w
  // and the indices, writes the executed rows; padded slots are written as zeros). Backward
  // scatter-adds the rows' gradients back to T·w.
  Op permute = Op::make(p + "moe_permute", OpKind::kMoeDispatch, layer);
  permute.shape = {experts, rows, static_cast<long>(w)};
  permute.fwd_bytes = (t * w + r.executed * w) * e + r.routed * 4;
  permute.bwd_bytes = permute.fwd_bytes;
  permute.bwd_flops = r.useful * w;  // the scatter-add
  sc.add(std::move(permute), {routed_in, probs});

  const int fc1 = sc.add(expert_gemm(p + "expert_fc1", layer, r, w, gate * f, bias, e));
  // The activation weighted by each row's routing probability, as Megatron-Core's grouped experts
  // apply it (weighted_bias_swiglu_impl with the permuted probabilities, or a product after the
  // activation): one more FLOP per element forward; backward scales dy and takes each row's dot
  // product for its probability's gradient (2 FLOPs per element). Keeps the probabilities (fp32),
  // and where the product is a separate step (GeLU) the activation's output for that dot product.
  const std::vector<long> act_shape{experts, rows, static_cast<long>(f)};
  const double n = r.executed * f;
  Op act = swiglu  ? swiglu_op(p + "expert_act", layer, n, act_shape, e)
           : relu2 ? relu2_op(p + "expert_act", layer, n, act_shape, e)
                   : gelu_op(p + "expert_act", layer, n, act_shape, e);
  act.expert = true;
  act.fwd_flops += n;
  act.bwd_flops += 2 * n;
  act.fwd_bytes += r.routed * 4;
  act.bwd_bytes += r.routed * 8;
  act.saved_bytes += r.routed * 4 + (swiglu ? 0 : n * e);
  if (swiglu && moe.glu_clamp > 0) {
    // GPT-OSS's clamped GLU as Megatron-Core runs it before its fused kernel (weighted_bias_quick_geglu_impl):
    // each half of the 2n inputs clamped into a tensor of its own and the two concatenated (reading and
    // writing 2n each); backward, each clamp's gradient (the output gradient and the input read, the input
    // gradient written: 6n over both halves) and the halves' gradients concatenated (4n).
    act.fwd_bytes += 8 * n * e;
    act.bwd_bytes += 10 * n * e;
  }
  const double useful_share = r.executed > 0 ? r.useful / r.executed : 1;  // FLOPs on padding are not model FLOPs
  act.fwd_flops *= useful_share;
  act.bwd_flops *= useful_share;
  sc.add(std::move(act), {fc1, probs});
  Op fc2_op = expert_gemm(p + "expert_fc2", layer, r, f, w, bias, e);
  fc2_op.eager_expert_bias = bias;  // TEGroupedMLP: fc1's bias in its GEMM, fc2's added after it per expert
  const int fc2 = sc.add(std::move(fc2_op));

  // Unpermutation: each token's k (already weighted) expert outputs summed back to T·w, one add per
  // routed element; backward hands each row its token's gradient (a gather: no FLOPs, nothing kept).
  Op unpermute = Op::make(p + "moe_unpermute", OpKind::kMoeCombine, layer);
  unpermute.shape = sc.act_shape(w);
  unpermute.fwd_flops = r.useful * w;
  unpermute.fwd_bytes = (r.executed * w + t * w) * e + r.routed * 4;
  unpermute.bwd_bytes = unpermute.fwd_bytes;
  int out = sc.add(std::move(unpermute), {fc2});
  // Latent MoE: the combined rows projected back up to h (fc2_latent_proj), kept input T·w.
  if (latent) out = sc.linear(p + "moe_latent_out", layer, w, h, false);
  if (moe.shared_ffn_hidden <= 0) return {out};

  // Shared experts: one MLP of shared_ffn_hidden (shared_experts x expert_ffn_hidden unless stated)
  // over every token; its input is the tensor the router keeps.
  const double fs = static_cast<double>(moe.shared_ffn_hidden);
  sc.linear(p + "shared_fc1", layer, h, gate * fs, bias, false, {x});
  sc.add(swiglu  ? swiglu_op(p + "shared_act", layer, t * fs, sc.act_shape(fs), e)
         : relu2 ? relu2_op(p + "shared_act", layer, t * fs, sc.act_shape(fs), e)
                 : gelu_op(p + "shared_act", layer, t * fs, sc.act_shape(fs), e));
  const int shared = sc.linear(p + "shared_fc2", layer, fs, h, bias);
  return {out, shared};
}

}  // namespace hetsim
