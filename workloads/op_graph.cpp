// File: workloads/op_graph.cpp
// Per-operator FLOPs and bytes of GPT, Llama and BERT layers. Conventions: a multiply-add is 2
// FLOPs; backward of a matrix product costs twice its forward (input and weight gradients);
// bytes count each tensor read or written once per kernel, as Megatron's fused kernels move them
// (fused layernorm, scale-mask-softmax, bias+GeLU, bias+dropout+add); saved activations follow
// the accounting of Korthikanti et al. 2022, Section 4 (dropout masks 1 byte per element).
#include "workloads/op_graph.hpp"

#include "workloads/gemm_precision.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "workloads/layer_ops.hpp"
#include "workloads/op_formulas.hpp"
#include "workloads/unet_graph.hpp"

namespace hetsim {

std::string_view op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kEmbedding: return "embedding";
    case OpKind::kLayerNorm: return "layernorm";
    case OpKind::kRmsNorm: return "rmsnorm";
    case OpKind::kLinear: return "linear";
    case OpKind::kAttnScores: return "attn_scores";
    case OpKind::kSoftmax: return "softmax";
    case OpKind::kAttnContext: return "attn_context";
    case OpKind::kActivation: return "activation";
    case OpKind::kResidual: return "residual";
    case OpKind::kLmHead: return "lm_head";
    case OpKind::kLoss: return "loss";
    case OpKind::kConv2d: return "conv2d";
    case OpKind::kPool: return "pool";
    case OpKind::kMoeDispatch: return "moe_dispatch";
    case OpKind::kMoeExpert: return "moe_expert";
    case OpKind::kMoeCombine: return "moe_combine";
    case OpKind::kDropout: return "dropout";
    case OpKind::kFlashAttention: return "flash_attention";
    case OpKind::kSsmScan: return "ssm_scan";
  }
  return "?";
}

bool is_matmul(OpKind k) {
  return k == OpKind::kLinear || k == OpKind::kAttnScores || k == OpKind::kAttnContext || k == OpKind::kLmHead ||
         k == OpKind::kConv2d || k == OpKind::kMoeExpert || k == OpKind::kFlashAttention;
}

double OpGraph::params() const {
  double p = 0;
  for (const Op& op : ops) p += op.params;
  return p;
}

double OpGraph::active_params() const {
  double p = 0;
  for (const Op& op : ops) p += op.expert ? routed_share * op.params : op.params;
  return p;
}

double OpGraph::model_flops() const {
  double f = 0;
  for (const Op& op : ops) f += op.fwd_flops + op.bwd_flops;
  return f;
}

double OpGraph::saved_bytes() const {
  double b = 0;
  for (const Op& op : ops) b += op.saved_bytes;
  return b;
}

namespace {

// Appends ops while tracking the previous op as the default input.
class Builder {
 public:
  Builder(const ModelSpec& m, long b, DType dtype, bool flash)
      : m_(m), b_(static_cast<double>(b)), s_(static_cast<double>(m.seq_len)), h_(static_cast<double>(m.hidden)),
        e_(dtype_bytes(dtype)), flash_(flash), dropout_(m.training.dropout > 0),
        eager_(m.training.kernels == TrainingKernels::kEager) {
    g_.model = m.name;
    g_.micro_batch = b;
    g_.seq_len = m.seq_len;
    g_.layers = m.layers;
    g_.dtype = dtype;
    if (m.moe) g_.routed_share = static_cast<double>(m.moe->top_k) / static_cast<double>(m.moe->experts);
  }

  // What the builders of layer_ops.hpp need: the model, its sizes and the ops so far.
  LayerScope scope() { return LayerScope{m_, b_, s_, h_, e_, flash_, dropout_, g_.ops}; }

  double tokens() const { return b_ * s_; }
  double elem() const { return e_; }

  int add(Op op, std::vector<int> inputs = {}) {
    if (inputs.empty() && !g_.ops.empty()) inputs.push_back(static_cast<int>(g_.ops.size()) - 1);
    op.inputs = std::move(inputs);
    g_.ops.push_back(std::move(op));
    return static_cast<int>(g_.ops.size()) - 1;
  }

  // y[tokens, out] = x[tokens, in] · W[in, out] (+ bias)
  int linear(const std::string& name, int layer, double in, double out, bool bias, bool save_input = true) {
    return linear_rows(name, layer, tokens(), in, out, bias, {static_cast<long>(b_), m_.seq_len, static_cast<long>(out)},
                       OpKind::kLinear, save_input);
  }

  // y[rows, out] = x[rows, in] · W[in, out] (+ bias), output shaped `shape`.
  int linear_rows(const std::string& name, int layer, double rows, double in, double out, bool bias,
                  std::vector<long> shape, OpKind kind = OpKind::kLinear, bool save_input = true) {
    Op op = linear_op(name, layer, rows, in, out, bias, std::move(shape), e_, kind, save_input);
    op.eager_bias_grad = eager_ && bias;  // training.kernels: eager sums the bias gradient in a kernel of its own
    return add(std::move(op));
  }

  int vector_op(const std::string& name, OpKind kind, int layer, double elements, double flops_per,
                double tensors_moved, double params, double saved_elements, std::vector<long> shape,
                std::vector<int> inputs = {}) {
    return add(hetsim::vector_op(name, kind, layer, elements, flops_per, tensors_moved, params, saved_elements,
                                 std::move(shape), e_),
               std::move(inputs));
  }

  std::vector<long> act_shape(double width) const {
    return {static_cast<long>(b_), m_.seq_len, static_cast<long>(width)};
  }

  // The family's norm (llama: RMSNorm, else layernorm) over `rows` rows of the hidden width.
  int norm(const std::string& name, int layer, double rows, std::vector<long> shape) {
    return add(norm_op(name, layer, rows, h_, m_.family == Family::kLlama, std::move(shape), e_));
  }
  int norm(const std::string& name, int layer) { return norm(name, layer, tokens(), act_shape(h_)); }

  // x + y (+ z: a MoE layer's shared experts); with dropout Megatron's fused bias+dropout+add
  // (op_formulas.hpp: residual_op, with the gradient sums where the stream forked).
  int residual(const std::string& name, int layer, std::vector<int> inputs) {
    const int branches = static_cast<int>(inputs.size());
    return add(residual_op(name, layer, tokens() * h_, branches, dropout_, act_shape(h_), e_), std::move(inputs));
  }
  int residual(const std::string& name, int layer, int a, int b) { return residual(name, layer, std::vector<int>{a, b}); }

  // A dropout kernel over `n` elements (op_formulas.hpp).
  int dropout(const std::string& name, int layer, double n, std::vector<long> shape, bool keep_output) {
    return add(dropout_op(name, layer, n, std::move(shape), keep_output, e_));
  }

  // QKV projection (grouped-query: kv_heads K and V heads), the attention core, the output
  // projection; or DeepSeek's latent attention (mla:).
  void attention(const std::string& p, int layer) {
    if (m_.mla) {
      mla_attention(scope(), p, layer);
      return;
    }
    const double a = static_cast<double>(m_.heads);
    const double d = static_cast<double>(attention_head_dim(m_));
    const double kv = static_cast<double>(m_.kv_heads) * d;
    const bool bias = m_.family != Family::kLlama;
    const int qkv = linear(p + "qkv", layer, h_, a * d + 2 * kv, bias);
    // Eager code indexes q, k, v out of one packed projection of three equal parts (timm's ViT,
    // minGPT); Llama-style code (grouped K/V) projects them separately.
    if (eager_ && m_.family != Family::kLlama && kv == a * d) g_.ops[static_cast<size_t>(qkv)].eager_views = 3;
    attention_core(scope(), p, layer, {a, static_cast<double>(m_.kv_heads), d, d});
    linear(p + "attn_out", layer, a * d, h_, bias);
  }

  // The dense MLP in the model's activation: SwiGLU (llama's default: gate and up projections, then
  // down), GeLU (gpt's, Megatron's fused bias+GeLU) or squared ReLU (ungated).
  void mlp(const std::string& p, int layer) {
    const double f = static_cast<double>(m_.ffn_hidden);
    const bool bias = m_.family != Family::kLlama;
    const MlpActivation act = mlp_activation_of(m_);
    if (act == MlpActivation::kSwiglu) {
      linear(p + "mlp_gate_up", layer, h_, 2 * f, bias);
      add(swiglu_op(p + "swiglu", layer, tokens() * f, act_shape(f), e_));
    } else {
      linear(p + "mlp_up", layer, h_, f, bias);
      if (act == MlpActivation::kRelu2) add(relu2_op(p + "relu2", layer, tokens() * f, act_shape(f), e_));
      else gelu(p + "gelu", layer, tokens() * f, act_shape(f));
    }
    linear(p + "mlp_down", layer, f, h_, bias);
  }

  // Megatron's fused bias+GeLU (op_formulas.hpp).
  int gelu(const std::string& name, int layer, double n, std::vector<long> shape) {
    return add(gelu_op(name, layer, n, std::move(shape), e_));
  }

  // Top-k mixture of experts in place of the dense MLP: gate, dispatch (an all-to-all when experts
  // are spread over devices), every expert's MLP on its capacity of tokens, combine.
  void moe_mlp(const std::string& p, int layer) {
    const double experts = static_cast<double>(std::max<long>(1, m_.experts));
    const double f = static_cast<double>(m_.ffn_hidden);
    const double capacity = std::ceil(tokens() * static_cast<double>(m_.top_k) * m_.capacity_factor / experts);
    const long E = static_cast<long>(experts), C = static_cast<long>(capacity);
    // The gate and the dispatch both read the norm's output: their gradients summed into its.
    add_fork_gradient_sums(g_.ops.back(), tokens() * h_, 2, e_);
    linear(p + "moe_gate", layer, h_, experts, false);
    const double routed = experts * capacity;  // token slots over all experts
    Op dispatch = Op::make(p + "moe_dispatch", OpKind::kMoeDispatch, layer);
    dispatch.shape = {E, C, m_.hidden};
    dispatch.fwd_bytes = (tokens() * h_ + routed * h_) * e_;
    dispatch.bwd_bytes = dispatch.fwd_bytes;
    add(std::move(dispatch));
    auto expert = [&](const std::string& name, double in, double out) {
      Op op = Op::make(p + name, OpKind::kMoeExpert, layer);
      op.shape = {E, C, static_cast<long>(out)};
      op.gemm = {E, C, static_cast<long>(out), static_cast<long>(in)};
      op.fwd_flops = 2 * routed * in * out;
      op.bwd_flops = 2 * op.fwd_flops;
      op.fwd_bytes = (routed * in + experts * in * out + routed * out) * e_;
      op.bwd_bytes = 2 * op.fwd_bytes;
      op.params = experts * (in * out + out);
      op.saved_bytes = routed * in * e_;
      return add(std::move(op));
    };
    expert("expert_up", h_, f);
    vector_op(p + "expert_gelu", OpKind::kActivation, layer, routed * f, 8, 2, 0, routed * f, {E, C, static_cast<long>(f)});
    expert("expert_down", f, h_);
    Op combine = Op::make(p + "moe_combine", OpKind::kMoeCombine, layer);
    combine.shape = act_shape(h_);
    combine.fwd_flops = 2 * routed * h_;
    combine.bwd_flops = 2 * combine.fwd_flops;
    combine.fwd_bytes = (routed * h_ + tokens() * h_) * e_;
    combine.bwd_bytes = 2 * combine.fwd_bytes;
    combine.saved_bytes = routed * h_ * e_;
    add(std::move(combine));
  }

  // The layer's feed-forward block; returns the ops its residual adds (after the one it names).
  std::vector<int> feed_forward(const std::string& p, int i) {
    if (is_moe_layer(m_, i)) return moe_feed_forward(scope(), p, i);
    if (m_.family == Family::kMoe && m_.moe_every > 0 && i % m_.moe_every == m_.moe_every - 1) moe_mlp(p, i);
    else mlp(p, i);
    return {static_cast<int>(g_.ops.size()) - 1};
  }

  // Layer i; a layer of the second or a later MTP module under mtp_shared runs the first module's
  // weights again: its ops own none (their gradients add into the first module's).
  void layer(int i) {
    const size_t first = g_.ops.size();
    layer_ops(i);
    if (reuses_mtp_weights(m_, i)) drop_params(first);
  }

  void drop_params(size_t first) {
    for (size_t k = first; k < g_.ops.size(); ++k) g_.ops[k].params = 0;
  }

  void layer_ops(int i) {
    const std::string p = "layer" + std::to_string(i) + ".";
    const int in = static_cast<int>(g_.ops.size()) - 1;
    if (!m_.hybrid_pattern.empty()) {  // pre-norm, one block per layer: x = x + Block(N(x))
      const char kind = layer_kind(m_, i);
      if (kind == 'M') {
        norm(p + "mamba_norm", i);
        mamba_mixer(scope(), p, i);
        residual(p + "mamba_residual", i, in, static_cast<int>(g_.ops.size()) - 1);
      } else if (kind == '*') {
        norm(p + "attn_norm", i);
        attention(p, i);
        residual(p + "attn_residual", i, in, static_cast<int>(g_.ops.size()) - 1);
      } else {
        norm(p + "mlp_norm", i);
        std::vector<int> sum{in};
        for (int o : feed_forward(p, i)) sum.push_back(o);
        residual(p + "mlp_residual", i, std::move(sum));
      }
      return;
    }
    if (m_.family == Family::kBert || m_.family == Family::kMoe) {  // post-norm: x = LN(x + Attn(x)); x = LN(x + MLP(x))
      attention(p, i);
      const int r1 = residual(p + "attn_residual", i, in, static_cast<int>(g_.ops.size()) - 1);
      const int n1 = norm(p + "attn_norm", i);
      std::vector<int> sum{n1};
      for (int o : feed_forward(p, i)) sum.push_back(o);
      residual(p + "mlp_residual", i, std::move(sum));
      norm(p + "mlp_norm", i);
      (void)r1;
    } else {  // pre-norm: x = x + Attn(N(x)); x = x + MLP(N(x))
      norm(p + "attn_norm", i);
      attention(p, i);
      const int r1 = residual(p + "attn_residual", i, in, static_cast<int>(g_.ops.size()) - 1);
      norm(p + "mlp_norm", i);
      std::vector<int> sum{r1};
      for (int o : feed_forward(p, i)) sum.push_back(o);
      residual(p + "mlp_residual", i, std::move(sum));
    }
  }

  void embedding() {
    const double v = static_cast<double>(m_.vocab);
    const double positions = m_.family == Family::kLlama ? 0 : s_;  // Llama uses rotary positions
    const double type_rows = m_.family == Family::kBert || m_.family == Family::kMoe ? 2 : 0;  // BERT token types
    Op op = Op::make("embedding", OpKind::kEmbedding, -1);
    op.shape = act_shape(h_);
    op.fwd_bytes = 3 * tokens() * h_ * e_;  // gather rows (+ position rows) and write
    op.bwd_bytes = 3 * tokens() * h_ * e_;  // scatter-add into the table gradient
    op.fwd_flops = tokens() * h_;           // position add
    op.bwd_flops = tokens() * h_;
    op.params = (v + positions + type_rows) * h_;
    add(std::move(op), {});
    if (m_.family == Family::kBert || m_.family == Family::kMoe) norm("embedding_norm", -1);
    if (dropout_) dropout("embedding_dropout", -1, tokens() * h_, act_shape(h_), false);
  }

  // GPT/Llama: final norm, LM head and loss on every position. BERT (and BERT-MoE): the MLM head
  // (dense + GeLU + LayerNorm, decoder, loss) on the masked positions only, gathered first as
  // DeepLearningExamples' BertPreTrainingHeads does, then the NSP head (pooler on the first token,
  // tanh, a 2-way classifier and its loss).
  void head() {
    const int last = static_cast<int>(m_.layers);
    const bool bert = m_.family == Family::kBert || m_.family == Family::kMoe;
    const int body = static_cast<int>(g_.ops.size()) - 1;  // the last layer's output
    const long positions = bert ? std::min(m_.training.masked_positions, m_.seq_len) : m_.seq_len;
    const double rows = b_ * static_cast<double>(positions);
    const std::vector<long> row_shape{static_cast<long>(b_), positions, m_.hidden};
    if (bert) {
      linear_rows("mlm_dense", last, rows, h_, h_, true, row_shape);
      gelu("mlm_gelu", last, rows * h_, row_shape);
      norm("mlm_norm", last, rows, row_shape);
    } else {
      norm("final_norm", last);
    }
    lm_head_and_loss(last, rows, positions);
    for (long k = 1; k <= m_.mtp_layers && !bert; ++k) mtp_head(k, last, body, rows, positions);
    if (bert) {
      const double n = b_;
      linear_rows("pooler", last, n, h_, h_, true, {static_cast<long>(b_), m_.hidden}, OpKind::kLinear);
      g_.ops.back().inputs = {body};
      vector_op("pooler_tanh", OpKind::kActivation, last, n * h_, 8, 2, 0, n * h_, {static_cast<long>(b_), m_.hidden});
      linear_rows("nsp", last, n, h_, 2, true, {static_cast<long>(b_), 2});
      Op loss = Op::make("nsp_loss", OpKind::kLoss, last);
      loss.shape = {static_cast<long>(b_)};
      loss.fwd_flops = 5 * n * 2;
      loss.bwd_flops = 2 * n * 2;
      loss.fwd_bytes = n * 2 * (e_ + 4);
      loss.bwd_bytes = loss.fwd_bytes;
      loss.saved_bytes = n * 2 * 4;
      add(std::move(loss));
    }
  }

  // Multi-token prediction module k (DeepSeek-V3 Section 2.2; Megatron-Core's MultiTokenPredictionLayer):
  // the tokens k ahead embedded again (the shared table), that and the hidden state normalised, their
  // concatenation projected back to the hidden size, and (after the module's transformer layer, one of
  // the model's last mtp_layers) the shared output head and a loss again. Written beside the head: the
  // last pipeline stage runs them, as Megatron-Core places the MTP block before the loss.
  void mtp_head(long k, int last, int body, double rows, long positions) {
    const size_t first = g_.ops.size();
    mtp_head_ops(k, last, body, rows, positions);
    if (m_.mtp_shared && k > 1) drop_params(first);  // the first module's norms and eh_proj again
  }

  void mtp_head_ops(long k, int last, int body, double rows, long positions) {
    const std::string p = "mtp" + std::to_string(k) + ".";
    Op emb = Op::make(p + "embedding", OpKind::kEmbedding, last);
    emb.shape = act_shape(h_);
    emb.fwd_bytes = emb.bwd_bytes = 3 * tokens() * h_ * e_;
    // It reads token ids, as the model's own embedding does: no op's output.
    g_.ops[static_cast<size_t>(add(std::move(emb), {}))].inputs.clear();
    const int embedded = norm(p + "embedding_norm", last);
    const int hidden = add(norm_op(p + "hidden_norm", last, tokens(), h_, m_.family == Family::kLlama, act_shape(h_), e_), {body});
    const int proj = linear(p + "eh_proj", last, 2 * h_, h_, false);
    g_.ops[static_cast<size_t>(proj)].inputs = {embedded, hidden};
    norm(p + "final_norm", last);
    lm_head_and_loss(last, rows, positions, p, true);
  }

  void lm_head_and_loss(int last, double rows, long positions, const std::string& prefix = "", bool shared = false) {
    const double v = static_cast<double>(m_.vocab);
    Op lm = Op::make(prefix + "lm_head", OpKind::kLmHead, last);
    lm.shape = {static_cast<long>(b_), positions, m_.vocab};
    lm.gemm = {1, static_cast<long>(rows), m_.vocab, m_.hidden};
    lm.fwd_flops = 2 * rows * h_ * v;
    lm.bwd_flops = 2 * lm.fwd_flops;
    lm.fwd_bytes = (rows * h_ + h_ * v + rows * v) * e_;
    lm.bwd_bytes = (2 * rows * v + 2 * h_ * v + 2 * rows * h_) * e_;
    lm.params = m_.tied_embeddings || shared ? 0 : h_ * v;
    lm.saved_bytes = rows * h_ * e_;
    add(std::move(lm));
    // Cross-entropy in fp32 over the logits: keeps the fp32 softmax for backward. Below fp32 the
    // logits are cast to an fp32 copy (Megatron-Core tensor_parallel/cross_entropy.py:
    // `vocab_parallel_logits.float()`), and the 16-bit logits stay allocated while the loss runs
    // (the model's forward holds them); the backward writes a 16-bit gradient beside the fp32 one.
    // Both are counted with what the loss keeps: measured peaks of Megatron-LM's memory tests
    // (studies/validation/peak-memory.yaml) were 3-20 % above hetsim's without them.
    Op loss = Op::make(prefix + "loss", OpKind::kLoss, last);
    loss.shape = {static_cast<long>(b_), positions};
    loss.fwd_flops = 5 * rows * v;
    loss.bwd_flops = 2 * rows * v;
    loss.fwd_bytes = rows * v * (e_ + 4);
    loss.bwd_bytes = rows * v * (4 + e_);
    loss.saved_bytes = rows * v * (4 + (e_ < 4 ? e_ : 0));
    add(std::move(loss));
  }

  // ViT: patches (p x p x channels) projected to the hidden size, plus class token and positions.
  void patch_embedding() {
    const double patches = static_cast<double>(m_.seq_len - 1);
    const double patch_in = static_cast<double>(m_.patch_size * m_.patch_size * m_.channels);
    const int proj = linear_rows("patch_embedding", -1, b_ * patches, patch_in, h_, true, act_shape(h_));
    g_.ops[proj].params += (patches + 2) * h_;  // position embeddings and the class token
  }

  // ViT head: final norm, then a linear classifier on the class token only.
  void vit_head() {
    const int last = static_cast<int>(m_.layers);
    norm("final_norm", last);
    const double classes = static_cast<double>(m_.classes);
    linear_rows("classifier", last, b_, h_, classes, true, {static_cast<long>(b_), m_.classes}, OpKind::kLmHead);
    classification_loss(last);
  }

  void classification_loss(int layer) {
    const double classes = static_cast<double>(m_.classes);
    Op loss = Op::make("loss", OpKind::kLoss, layer);
    loss.shape = {static_cast<long>(b_)};
    loss.fwd_flops = 5 * b_ * classes;
    loss.bwd_flops = 2 * b_ * classes;
    loss.fwd_bytes = b_ * classes * (e_ + 4);
    loss.bwd_bytes = loss.fwd_bytes;
    loss.saved_bytes = b_ * classes * 4;
    add(std::move(loss));
  }

  // VGG (Simonyan & Zisserman 2015) on small images: 3x3 convolutions with ReLU, 2x2 max pools,
  // adaptive average pooling to 7x7 (as torchvision), classifier 25088 -> 4096 -> 4096 -> classes.
  void vgg() {
    static const std::map<long, std::vector<int>> kConfigs{
        {11, {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0}},
        {13, {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0}},
        {16, {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0}},
        {19, {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0, 512, 512, 512, 512, 0}}};
    long c = m_.channels, side = m_.image_size;
    int conv_index = 0;
    for (int width : kConfigs.at(m_.depth)) {
      const double hw = static_cast<double>(side * side);
      if (width == 0) {  // 2x2 max pool
        side /= 2;
        vector_op("pool" + std::to_string(conv_index), OpKind::kPool, conv_index - 1, b_ * c * hw, 1, 1.25, 0,
                  b_ * static_cast<double>(c * side * side), {static_cast<long>(b_), c, side, side});
        continue;
      }
      const double cin = static_cast<double>(c), cout = width;
      Op conv = Op::make("conv" + std::to_string(conv_index), OpKind::kConv2d, conv_index);
      conv.shape = {static_cast<long>(b_), width, side, side};
      conv.gemm = {1, static_cast<long>(b_ * hw), width, static_cast<long>(cin * 9)};
      conv.fwd_flops = 2 * b_ * hw * cout * cin * 9;
      conv.bwd_flops = 2 * conv.fwd_flops;
      conv.fwd_bytes = (b_ * hw * (cin + cout) + cin * cout * 9) * e_;
      conv.bwd_bytes = 2 * conv.fwd_bytes;
      conv.params = cin * cout * 9 + cout;
      conv.saved_bytes = b_ * hw * cin * e_;
      add(std::move(conv));
      vector_op("relu" + std::to_string(conv_index), OpKind::kActivation, conv_index, b_ * hw * cout, 1, 2, 0,
                b_ * hw * cout, {static_cast<long>(b_), width, side, side});
      c = width;
      ++conv_index;
    }
    vector_op("avgpool", OpKind::kPool, conv_index - 1, b_ * static_cast<double>(c * 49), 1, 2, 0, 0,
              {static_cast<long>(b_), c, 7, 7});
    const double features = static_cast<double>(c * 49);
    int fc = conv_index;
    for (const double out : {4096.0, 4096.0}) {
      linear_rows("fc" + std::to_string(fc), fc, b_, fc == conv_index ? features : 4096.0, out, true, {static_cast<long>(b_), 4096});
      vector_op("fc_relu" + std::to_string(fc), OpKind::kActivation, fc, b_ * out, 1, 2, 0, b_ * out, {static_cast<long>(b_), 4096});
      ++fc;
    }
    linear_rows("classifier", fc, b_, 4096, static_cast<double>(m_.classes), true, {static_cast<long>(b_), m_.classes});
    classification_loss(static_cast<int>(m_.layers));
  }

  OpGraph finish() {
    if (m_.training.recompute == Recompute::kFull) {
      // Only each layer's input is kept; the layer's forward runs again inside its backward.
      for (Op& op : g_.ops) {
        if (op.layer < 0 || op.layer >= m_.layers) continue;
        op.recompute_flops = op.fwd_flops;
        op.saved_bytes = 0;
      }
      for (size_t i = 0; i < g_.ops.size(); ++i) {
        Op& op = g_.ops[i];
        if (op.layer >= 0 && op.layer < m_.layers && (i == 0 || g_.ops[i - 1].layer != op.layer)) {
          op.saved_bytes = tokens() * h_ * e_;
        }
      }
    }
    return std::move(g_);
  }

 private:
  const ModelSpec& m_;
  double b_, s_, h_, e_;
  bool flash_;    // fused attention kernel
  bool dropout_;  // dropout ops and masks
  bool eager_;    // training.kernels: eager (PyTorch autograd kernels around linear layers and the QKV views)
  OpGraph g_;
};

}  // namespace

double model_flops_per_sample(const ModelSpec& model, DType dtype) {
  ModelSpec one = model;
  one.training.recompute = Recompute::kNone;
  return build_op_graph(one, 1, dtype).model_flops();
}

OpGraph build_op_graph(const ModelSpec& model, long micro_batch, DType dtype, const KernelSupport& support) {
  const bool flash = uses_flash_attention(model.training, support.flash_attention);
  if (model.family == Family::kUnet) return build_unet_graph(model, micro_batch, dtype, flash);
  Builder b(model, micro_batch, dtype, flash);
  switch (model.family) {
    case Family::kVgg: b.vgg(); break;
    case Family::kVit:
      b.patch_embedding();
      for (int i = 0; i < model.layers; ++i) b.layer(i);
      b.vit_head();
      break;
    default:
      b.embedding();
      for (int i = 0; i < model.layers; ++i) b.layer(i);
      b.head();
  }
  OpGraph g = b.finish();
  apply_gemm_precision(g, model, dtype_bytes(dtype));
  return g;
}

std::vector<LayerEdge> layer_edges(const OpGraph& graph) {
  const double e = dtype_bytes(graph.dtype);
  std::vector<LayerEdge> out;
  for (const Op& consumer : graph.ops) {
    for (int p : consumer.inputs) {
      const Op& producer = graph.ops[static_cast<size_t>(p)];
      if (producer.layer >= consumer.layer) continue;
      double elems = 1;
      for (long d : producer.shape) elems *= static_cast<double>(d);
      out.push_back({producer.layer, consumer.layer, elems * e, p});
    }
  }
  std::sort(out.begin(), out.end(), [](const LayerEdge& a, const LayerEdge& b) {
    return std::tie(a.from_layer, a.to_layer, a.producer) < std::tie(b.from_layer, b.to_layer, b.producer);
  });
  // One entry per (producer, consuming layer): several ops of a layer may read the same tensor.
  const auto same = [](const LayerEdge& a, const LayerEdge& b) {
    return a.to_layer == b.to_layer && a.producer == b.producer;
  };
  out.erase(std::unique(out.begin(), out.end(), same), out.end());
  return out;
}

}  // namespace hetsim
