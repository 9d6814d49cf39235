// File: workloads/unet_graph.cpp
// diffusers' UNet2DConditionModel (and Alpa's port of it, alpa/model/unet_2d.py) as operators.
// Shapes: convolution tensors are [batch, channels, side, side]; inside a spatial transformer the
// tokens are [batch, side^2, channels]. Every level but the last has attention (diffusers' default
// CrossAttnDownBlock2D x (levels - 1) + DownBlock2D, mirrored on the way up); heads are the same
// on every level (diffusers' `attention_head_dim`, which its UNet2DConditionModel uses as the
// number of heads), head width = channels / heads. The timestep embedding is per sample.
// Inputs with no producer op, read from the data loader by whichever stage needs them: the noisy
// latents (conv_in), the timesteps (time_proj), the text context (every cross-attention's K/V
// projection) and the target noise (loss).
#include "workloads/unet_graph.hpp"

#include <stdexcept>

#include "workloads/op_formulas.hpp"

namespace hetsim {

namespace {

bool has_attention(const ModelSpec& m, size_t level) { return level + 1 < m.channel_mult.size(); }

// Up units of one level: diffusers' up blocks have layers_per_block + 1 ResNets; Alpa's
// FlaxCrossAttnUpBlock2D has layers_per_block (its FlaxUpBlock2D keeps + 1).
long up_units(const ModelSpec& m, size_t level) {
  return m.unet_variant == UnetVariant::kAlpa && has_attention(m, level) ? m.layers_per_block : m.layers_per_block + 1;
}

long mid_layers(const ModelSpec& m) { return m.unet_variant == UnetVariant::kAlpa ? 2 : 1; }

long down_units(const ModelSpec& m) { return static_cast<long>(m.channel_mult.size()) * m.layers_per_block; }

long total_up_units(const ModelSpec& m) {
  long n = 0;
  for (size_t l = 0; l < m.channel_mult.size(); ++l) n += up_units(m, l);
  return n;
}

// A tensor of the U-Net's trunk: the op that produced it (-1: the data loader) and its shape.
struct Act {
  int op = -1;
  long c = 0;
  long side = 0;
};

class UnetBuilder {
 public:
  UnetBuilder(const ModelSpec& m, long b, DType dtype, bool flash)
      : m_(m), b_(static_cast<double>(b)), bl_(b), e_(dtype_bytes(dtype)), c0_(m.base_channels), temb_dim_(4 * c0_),
        flash_(flash) {
    g_.model = m.name;
    g_.micro_batch = b;
    g_.seq_len = m.seq_len;
    g_.layers = m.layers;
    g_.dtype = dtype;
  }

  OpGraph build() {
    layer_ = -1;
    Act x = stem();
    std::vector<Act> skips{x};  // diffusers' down_block_res_samples
    const size_t levels = m_.channel_mult.size();
    for (size_t l = 0; l < levels; ++l) {
      const long c = c0_ * m_.channel_mult[l];
      for (long u = 0; u < m_.layers_per_block; ++u) {
        ++layer_;
        const std::string p = "down" + std::to_string(l) + ".";
        x = resnet(p + "res" + std::to_string(u) + ".", x, c);
        if (has_attention(m_, l)) x = transformer(p + "attn" + std::to_string(u) + ".", x);
        skips.push_back(x);
      }
      if (l + 1 < levels) {
        x = conv("down" + std::to_string(l) + ".downsample", x, x.c, 3, 2);
        skips.push_back(x);
      }
    }
    ++layer_;
    x = resnet("mid.res0.", x, x.c);
    x = transformer("mid.attn0.", x);
    if (mid_layers(m_) == 2) ++layer_;  // Alpa's marker after the mid block's attention
    x = resnet("mid.res1.", x, x.c);
    bool pending_upsample = false;
    for (size_t i = 0; i < levels; ++i) {  // up block i works on level levels-1-i
      const size_t l = levels - 1 - i;
      const long c = c0_ * m_.channel_mult[l];
      const std::string p = "up" + std::to_string(i) + ".";
      // This block's skips, the latest first; Alpa's attention blocks leave the earliest unused.
      std::vector<Act> mine(skips.end() - (m_.layers_per_block + 1), skips.end());
      skips.resize(skips.size() - mine.size());
      for (long u = 0; u < up_units(m_, l); ++u) {
        ++layer_;
        if (pending_upsample) {  // Alpa: the previous block's upsample runs after its last marker
          x = upsample("up" + std::to_string(i - 1) + ".", x);
          pending_upsample = false;
        }
        x = concat(p + "concat" + std::to_string(u), x, mine[mine.size() - 1 - static_cast<size_t>(u)]);
        x = resnet(p + "res" + std::to_string(u) + ".", x, c);
        if (has_attention(m_, l)) x = transformer(p + "attn" + std::to_string(u) + ".", x);
      }
      if (l > 0) {
        if (m_.unet_variant == UnetVariant::kAlpa) pending_upsample = true;
        else x = upsample(p, x);
      }
    }
    if (layer_ + 1 != m_.layers) {
      throw std::logic_error("unet: built " + std::to_string(layer_ + 1) + " layers, expected " +
                             std::to_string(m_.layers));
    }
    layer_ = static_cast<int>(m_.layers);
    head(x);
    return finish();
  }

 private:
  std::vector<long> img(long c, long side) const { return {bl_, c, side, side}; }
  std::vector<long> tok(long n, long c) const { return {bl_, n, c}; }

  int add(Op op, std::vector<int> inputs) {
    op.inputs = std::move(inputs);
    g_.ops.push_back(std::move(op));
    return static_cast<int>(g_.ops.size()) - 1;
  }
  static std::vector<int> from(int op) { return op < 0 ? std::vector<int>{} : std::vector<int>{op}; }

  // k x k convolution, stride 1 or 2 (padding k / 2), as an implicit GEMM over output pixels.
  Act conv(const std::string& name, const Act& x, long cout, long k, long stride) {
    const long side = x.side / stride;
    const double in_px = b_ * static_cast<double>(x.side * x.side), out_px = b_ * static_cast<double>(side * side);
    const double cin = static_cast<double>(x.c), co = static_cast<double>(cout), kk = static_cast<double>(k * k);
    Op op = Op::make(name, OpKind::kConv2d, layer_);
    op.shape = img(cout, side);
    op.gemm = {1, static_cast<long>(out_px), cout, x.c * k * k};
    op.fwd_flops = 2 * out_px * co * cin * kk;
    op.bwd_flops = 2 * op.fwd_flops;
    op.fwd_bytes = (in_px * cin + out_px * co + cin * co * kk) * e_;
    op.bwd_bytes = 2 * op.fwd_bytes;
    op.params = cin * co * kk + co;
    op.saved_bytes = in_px * cin * e_;  // the input, for the weight gradient
    return {add(std::move(op), from(x.op)), cout, side};
  }

  int linear(const std::string& name, double rows, double in, double out, bool bias, std::vector<long> shape,
             std::vector<int> inputs) {
    return add(linear_op(name, layer_, rows, in, out, bias, std::move(shape), e_), std::move(inputs));
  }

  int vec(const std::string& name, OpKind kind, double elements, double flops_per, double moved, double params,
          double saved_elements, std::vector<long> shape, std::vector<int> inputs) {
    return add(vector_op(name, kind, layer_, elements, flops_per, moved, params, saved_elements, std::move(shape), e_),
               std::move(inputs));
  }

  // out = a + b where b (or what made a) forked off the stream: op_formulas.hpp's residual_op.
  int residual(const std::string& name, double elements, std::vector<long> shape, std::vector<int> inputs) {
    const int branches = static_cast<int>(inputs.size());
    return add(residual_op(name, layer_, elements, branches, false, std::move(shape), e_), std::move(inputs));
  }

  double elements(const Act& x) const { return b_ * static_cast<double>(x.c * x.side * x.side); }

  Act group_norm(const std::string& name, const Act& x) {
    const double params = 2.0 * static_cast<double>(x.c);  // scale and shift per channel
    return {vec(name, OpKind::kLayerNorm, elements(x), 8, 2, params, elements(x), img(x.c, x.side), from(x.op)), x.c,
            x.side};
  }
  Act silu(const std::string& name, const Act& x) {
    return {vec(name, OpKind::kActivation, elements(x), 4, 2, 0, elements(x), img(x.c, x.side), from(x.op)), x.c, x.side};
  }

  // Timestep embedding (sinusoidal, linear, SiLU, linear to 4 x base_channels) and conv_in.
  Act stem() {
    const double c0 = static_cast<double>(c0_), t = static_cast<double>(temb_dim_);
    const int proj = vec("time_proj", OpKind::kActivation, b_ * c0, 10, 1, 0, 0, {bl_, c0_}, {});  // timesteps: data loader
    const int l1 = linear("time_linear1", b_, c0, t, true, {bl_, temb_dim_}, {proj});
    const int s1 = vec("time_silu", OpKind::kActivation, b_ * t, 4, 2, 0, b_ * t, {bl_, temb_dim_}, {l1});
    temb_ = linear("time_linear2", b_, t, t, true, {bl_, temb_dim_}, {s1});
    return conv("conv_in", Act{-1, m_.channels, m_.image_size}, c0_, 3, 1);  // latents: data loader
  }

  // ResnetBlock2D: GroupNorm, SiLU, conv3x3, + time_emb_proj(SiLU(temb)), GroupNorm, SiLU,
  // conv3x3, 1x1 shortcut when the width changes, residual add.
  Act resnet(const std::string& p, const Act& x, long cout) {
    const Act c1 = conv(p + "conv1", silu(p + "silu1", group_norm(p + "norm1", x)), cout, 3, 1);
    const double t = static_cast<double>(temb_dim_);
    const int ts = vec(p + "temb_silu", OpKind::kActivation, b_ * t, 4, 2, 0, b_ * t, {bl_, temb_dim_}, {temb_});
    const int tp = linear(p + "temb_proj", b_, t, static_cast<double>(cout), true, {bl_, cout}, {ts});
    // The projected embedding broadcast over the pixels. Backward: c1 takes the gradient as it is
    // (no kernel); the embedding's is its sum over the pixels (reads it, writes one value per channel).
    Op temb_add = vector_op(p + "temb_add", OpKind::kResidual, layer_, elements(c1), 1, 2, 0, 0, img(cout, c1.side), e_);
    temb_add.bwd_flops = elements(c1);
    temb_add.bwd_bytes = (elements(c1) + b_ * static_cast<double>(cout)) * e_;
    const Act added{add(std::move(temb_add), {c1.op, tp}), cout, c1.side};
    const Act c2 = conv(p + "conv2", silu(p + "silu2", group_norm(p + "norm2", added)), cout, 3, 1);
    if (x.c == cout) return {residual(p + "residual", elements(c2), img(cout, c2.side), {c2.op, x.op}), cout, c2.side};
    // With a 1x1 shortcut the stream forks at the block's input (norm1 and the shortcut read it):
    // the gradients summed there are of the input's size, not the output's.
    const Act shortcut = conv(p + "shortcut", x, cout, 1, 1);
    Op sum = residual_op(p + "residual", layer_, elements(c2), 2, false, img(cout, c2.side), e_);
    sum.bwd_flops = 0;
    sum.bwd_bytes = 0;
    add_fork_gradient_sums(sum, elements(x), 2, e_);
    return {add(std::move(sum), {c2.op, shortcut.op}), cout, c2.side};
  }

  // Scores, softmax and context of `heads`-head attention: n queries over lk keys, width c.
  int attention_core(const std::string& p, int q, int kv, double n, long lk, long c) {
    const long heads = m_.heads, nl = static_cast<long>(n);
    const double k = static_cast<double>(lk), w = static_cast<double>(c);
    const double score_elems = b_ * static_cast<double>(heads) * n * k;
    Op scores = Op::make(p + "attn_scores", OpKind::kAttnScores, layer_);
    scores.shape = {bl_, heads, nl, lk};
    scores.gemm = {bl_ * heads, nl, lk, c / heads};
    scores.fwd_flops = 2 * b_ * n * k * w;
    scores.bwd_flops = 2 * scores.fwd_flops;
    scores.fwd_bytes = (b_ * n * w + b_ * k * w + score_elems) * e_;
    scores.bwd_bytes = 2 * scores.fwd_bytes;
    scores.saved_bytes = (b_ * n * w + b_ * k * w) * e_;  // Q and K
    const int s = add(std::move(scores), q == kv ? std::vector<int>{q} : std::vector<int>{q, kv});
    const double kept = flash_ ? 0 : score_elems;  // probabilities, unless fused
    const int sm = vec(p + "softmax", OpKind::kSoftmax, score_elems, 5, 2, 0, kept, {bl_, heads, nl, lk}, {s});
    Op ctx = Op::make(p + "attn_context", OpKind::kAttnContext, layer_);
    ctx.shape = tok(nl, c);
    ctx.gemm = {bl_ * heads, nl, c / heads, lk};
    ctx.fwd_flops = 2 * b_ * n * k * w;
    ctx.bwd_flops = 2 * ctx.fwd_flops;
    ctx.fwd_bytes = (score_elems + b_ * k * w + b_ * n * w) * e_;
    ctx.bwd_bytes = 2 * ctx.fwd_bytes;
    ctx.saved_bytes = b_ * k * w * e_;  // V
    return add(std::move(ctx), {sm});  // V is an input only implicitly, as in the transformer families
  }

  int layer_norm(const std::string& name, int in, double n, long c) {
    const double el = b_ * n * static_cast<double>(c);
    return vec(name, OpKind::kLayerNorm, el, 8, 2, 2.0 * static_cast<double>(c), el, tok(static_cast<long>(n), c), {in});
  }
  int residual_tokens(const std::string& name, int a, int b, double n, long c) {
    return residual(name, b_ * n * static_cast<double>(c), tok(static_cast<long>(n), c), {a, b});
  }

  // Transformer2DModel with one BasicTransformerBlock: GroupNorm, proj_in, self-attention,
  // cross-attention on the text context, GEGLU feed-forward (4x), proj_out, residual.
  Act transformer(const std::string& p, const Act& x) {
    const long c = x.c, nl = x.side * x.side;
    const double n = static_cast<double>(nl), w = static_cast<double>(c), rows = b_ * n;
    const Act gn = group_norm(p + "norm", x);
    const int in = linear(p + "proj_in", rows, w, w, true, tok(nl, c), {gn.op});  // 1x1 conv = linear per pixel
    const int n1 = layer_norm(p + "norm1", in, n, c);
    const int qkv = linear(p + "attn1.qkv", rows, w, 3 * w, false, tok(nl, 3 * c), {n1});
    const int self_ctx = attention_core(p + "attn1.", qkv, qkv, n, nl, c);
    const int o1 = linear(p + "attn1.attn_out", rows, w, w, true, tok(nl, c), {self_ctx});
    const int r1 = residual_tokens(p + "attn1.residual", o1, in, n, c);
    const int q = linear(p + "attn2.q", rows, w, w, false, tok(nl, c), {layer_norm(p + "norm2", r1, n, c)});
    const double lc = static_cast<double>(m_.context_len);
    const double ctx_dim = static_cast<double>(m_.context_dim);
    const int kv = linear(p + "attn2.kv", b_ * lc, ctx_dim, 2 * w, false, tok(m_.context_len, 2 * c), {});  // context
    const int cross_ctx = attention_core(p + "attn2.", q, kv, n, m_.context_len, c);
    const int o2 = linear(p + "attn2.attn_out", rows, w, w, true, tok(nl, c), {cross_ctx});
    const int r2 = residual_tokens(p + "attn2.residual", o2, r1, n, c);
    const int up = linear(p + "ff.mlp_up", rows, w, 8 * w, true, tok(nl, 8 * c), {layer_norm(p + "norm3", r2, n, c)});
    const int gg = vec(p + "ff.geglu", OpKind::kActivation, rows * 4 * w, 8, 3, 0, 2 * rows * 4 * w, tok(nl, 4 * c), {up});
    const int down = linear(p + "ff.mlp_down", rows, 4 * w, w, true, tok(nl, c), {gg});
    const int r3 = residual_tokens(p + "ff.residual", down, r2, n, c);
    const int out = linear(p + "proj_out", rows, w, w, true, tok(nl, c), {r3});
    return {residual(p + "residual", elements(x), img(c, x.side), {out, x.op}), c, x.side};
  }

  // Channel concatenation of the trunk and one skip tensor (memory-bound: read both, write once).
  Act concat(const std::string& name, const Act& x, const Act& skip) {
    const long c = x.c + skip.c;
    const Act out{-1, c, x.side};
    return {vec(name, OpKind::kResidual, elements(out), 0, 2, 0, 0, img(c, x.side), {x.op, skip.op}), c, x.side};
  }

  // Upsample2D: nearest-neighbour x2 (reads the input, writes four times as much), conv3x3.
  Act upsample(const std::string& p, const Act& x) {
    const Act big{-1, x.c, 2 * x.side};
    const int up_op = vec(p + "upsample", OpKind::kPool, elements(big), 0, 1.25, 0, 0, img(x.c, big.side), {x.op});
    const Act up{up_op, x.c, big.side};
    return conv(p + "upsample_conv", up, x.c, 3, 1);
  }

  // conv_norm_out, SiLU, conv_out, then the mean squared error against the noise (data loader).
  void head(const Act& x) {
    const Act out = conv("conv_out", silu("conv_out_silu", group_norm("conv_norm_out", x)), m_.out_channels, 3, 1);
    const double el = elements(out);
    Op loss = Op::make("loss", OpKind::kLoss, layer_);
    loss.shape = {bl_};
    loss.fwd_flops = 3 * el;  // difference, square, sum
    loss.bwd_flops = 2 * el;
    loss.fwd_bytes = 2 * el * e_;  // prediction and target
    loss.bwd_bytes = 2 * el * e_;
    loss.saved_bytes = el * e_;  // the difference
    add(std::move(loss), {out.op});
  }

  // Under full recompute only each layer's inputs are kept: the tensors it reads from earlier
  // layers (layer_edges) and, where it has cross-attention, its copy of the text context.
  OpGraph finish() {
    if (m_.training.recompute != Recompute::kFull) return std::move(g_);
    const auto layers = static_cast<size_t>(m_.layers);
    std::vector<double> kept(layers, 0.0);
    std::vector<int> first(layers, -1);
    std::vector<bool> reads_context(layers, false);
    for (const LayerEdge& edge : layer_edges(g_)) {
      if (edge.to_layer >= 0 && edge.to_layer < m_.layers) kept[static_cast<size_t>(edge.to_layer)] += edge.bytes;
    }
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      Op& op = g_.ops[i];
      if (op.layer < 0 || op.layer >= m_.layers) continue;
      const auto l = static_cast<size_t>(op.layer);
      if (first[l] < 0) first[l] = static_cast<int>(i);
      if (op.inputs.empty() && !reads_context[l]) {  // the K/V projections of cross-attention
        reads_context[l] = true;
        kept[l] += b_ * static_cast<double>(m_.context_len * m_.context_dim) * e_;
      }
      op.recompute_flops = op.fwd_flops;
      op.saved_bytes = 0;
    }
    for (size_t l = 0; l < layers; ++l) {
      if (first[l] >= 0) g_.ops[static_cast<size_t>(first[l])].saved_bytes = kept[l];
    }
    return std::move(g_);
  }

  const ModelSpec& m_;
  double b_;
  long bl_;
  double e_;
  long c0_, temb_dim_;
  bool flash_;
  int layer_ = -1;
  int temb_ = -1;  // time_linear2: the embedding every ResNet block reads
  OpGraph g_;
};

}  // namespace

long unet_layer_count(const ModelSpec& m) { return down_units(m) + mid_layers(m) + total_up_units(m); }

std::string unet_layer_breakdown(const ModelSpec& m) {
  return "U-Net (" + std::to_string(down_units(m)) + " down units + " + std::to_string(mid_layers(m)) + " mid + " +
         std::to_string(total_up_units(m)) + " up units)";
}

OpGraph build_unet_graph(const ModelSpec& model, long micro_batch, DType dtype, bool flash) {
  return UnetBuilder(model, micro_batch, dtype, flash).build();
}

}  // namespace hetsim
