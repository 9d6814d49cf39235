// File: workloads/op_graph.hpp
// The operator graph of one forward/backward pass of a model at a given micro-batch size:
// every operator with its output shape, forward and backward FLOPs and bytes moved, the
// parameters it owns and the activations it keeps for backward.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workloads/model.hpp"

namespace hetsim {

enum class OpKind {
  kEmbedding,    // token (+ position) lookup
  kLayerNorm,    // also GroupNorm (the same row statistics and traffic)
  kRmsNorm,
  kLinear,       // QKV, output projection, MLP, pooler
  kAttnScores,   // Q·K^T
  kSoftmax,
  kAttnContext,  // P·V
  kActivation,   // GELU, SwiGLU, GEGLU, SiLU, the sinusoidal timestep embedding
  kResidual,     // elementwise add (also broadcast adds) and channel concatenation
  kLmHead,       // projection to the vocabulary
  kLoss,         // softmax cross-entropy over the vocabulary (or classes); the U-Net's mean squared error
  kConv2d,       // k x k convolution of any stride, as an implicit GEMM over output pixels
  kPool,         // max / adaptive average pooling, nearest-neighbour upsampling (memory-bound resampling)
  kMoeDispatch,  // routing tokens to experts: [batch, seq, h] -> [experts, capacity, h]
  kMoeExpert,    // one linear layer of every expert: [experts, capacity, in] -> [experts, capacity, out]
  kMoeCombine,   // weighted sum of the top-k experts' outputs back to [batch, seq, h]
  kDropout,      // a dropout kernel (attention probabilities, the embedding); writes a 1-byte mask
  kFlashAttention,  // fused attention (scores, softmax, dropout, context in one kernel, no s x s tensor)
  kSsmScan,      // a Mamba-2 mixer's convolution and chunked SSD scan (mamba_ssm's fused kernels; layer_ops.hpp)
};

[[nodiscard]] std::string_view op_kind_name(OpKind k);
// Matrix products run on tensor/matrix cores; everything else is vector work.
[[nodiscard]] bool is_matmul(OpKind k);

// The matrix product behind a matmul op: batch x [m x k] . [k x n] (forward pass).
struct GemmShape {
  long batch = 1;
  long m = 0;
  long n = 0;
  long k = 0;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// Share of the n x n score tiles (128 x 128, n = seq_len / 128 rounded up) a fused causal attention
// kernel computes: n(n + 1) / 2 of them, or under a sliding window of `window` keys (0: none) only
// the tiles each query tile's window reaches (FlashAttention-2's block skipping, which skips the tiles
// wholly outside the mask on both sides).
[[nodiscard]] double flash_tile_share(long seq_len, long window);

struct Op {
  std::string name;  // e.g. "layer3.qkv"
  OpKind kind = OpKind::kLinear;
  int layer = -1;    // pipeline layer index; -1 before the first, `layers` after the last
  std::vector<long> shape;     // output shape
  std::vector<int> inputs;     // indices of producer ops; none for data read from the data loader
  double fwd_flops = 0;        // model FLOPs of the forward pass
  double bwd_flops = 0;        // model FLOPs of the backward pass (input and weight gradients)
  double recompute_flops = 0;  // forward work repeated in backward under activation recompute
  double bwd_recompute_flops = 0;  // work the backward kernel itself repeats (flash attention's scores): not model FLOPs
  double fwd_bytes = 0;        // device-memory traffic of the forward kernel(s)
  double bwd_bytes = 0;        // device-memory traffic of the backward kernel(s)
  double params = 0;           // parameters owned (elements)
  double saved_bytes = 0;      // activation bytes kept from forward until backward
  GemmShape gemm;              // matmul ops only
  // Share of its FLOPs a fused attention kernel really executes: under a causal mask it skips the
  // score tiles wholly above the diagonal. Scales its time, never its model FLOPs (MFU counts the
  // full s x s scores, as Megatron-LM and PaLM do; under a sliding window s x window, each query's
  // keys, so a window's share can exceed 1: its tiles straddle the band). 1 for every other op.
  // A grouped expert GEMM padded to a capacity runs more rows than hold tokens: its share is above 1
  // (executed rows / routed rows); so do the unfused attention kernels of a windowed layer, which
  // compute every score and mask it (s / window).
  double tile_fraction = 1;
  bool causal = false;  // attention under a causal mask (measured tables have causal rows)
  long window = 0;      // causal attention under a sliding window of this many keys; 0: the whole context
  bool fused_attention = false;  // flash attention by cuDNN's fused kernels (training.attention: fused)
  // Low-precision GEMM recipes (workloads/gemm_precision.hpp): the format this matmul's inputs are
  // in when it is not the graph's dtype, and the bytes of the cast kernels around it (forward: its
  // input; backward: its output gradient), memory-bound work of their own.
  std::optional<DType> gemm_dtype;
  double cast_fwd_bytes = 0;
  double cast_bwd_bytes = 0;
  // Of those, the bytes of the transposed copy a per-tensor scaled FP8 recipe writes for the
  // backward's GEMMs, which a GPU whose FP8 GEMMs take any layout does without (Device::fp8_any_layout).
  double cast_fwd_transpose_bytes = 0;
  double cast_bwd_transpose_bytes = 0;
  // A routed expert's op (expert_fc1, expert_act, expert_fc2 of a moe: block): its parameters are
  // those of all experts (each expert owns params / experts) and its FLOPs and rows those of the
  // micro-batch's tokens x top_k routed copies over all experts; expert parallelism divides both.
  bool expert = false;
  // training.kernels: eager (workloads/model.hpp): backward kernels PyTorch's autograd runs around
  // this op that fused frameworks do not (eager_grad_bytes). eager_bias_grad: a linear layer's bias
  // gradient as a column sum of its output gradient. eager_views: the output read as that many
  // tensors by indexing (q, k, v = qkv[0], qkv[1], qkv[2]), so that each view's gradient becomes a
  // zero-filled tensor of the whole output with the view's part copied in, the copies are summed,
  // and the sum is copied back into the output's layout.
  bool eager_bias_grad = false;
  int eager_views = 0;
  // An expert GEMM whose bias Megatron-Core's TEGroupedMLP adds after it in eager PyTorch
  // (_apply_bias, the second expert linear layer's: skip_bias_add), in both passes, whatever
  // training.kernels says (eager_expert_bias_bytes).
  bool eager_expert_bias = false;

  static Op make(std::string name, OpKind kind, int layer) {
    Op op;
    op.name = std::move(name);
    op.kind = kind;
    op.layer = layer;
    return op;
  }
};

// Bytes and kernels of the backward kernels an eager op adds (Op::eager_bias_grad, eager_views),
// each memory-bound, over its matrix product's output of gemm.batch x gemm.m x gemm.n elements of
// `elem_bytes` (so every shard of the op has its own). The bias gradient reads the output gradient
// and writes one row; the assembly of v views writes v zero-filled outputs, copies each view's
// gradient into its own (reading and writing a v-th of the output), adds the v copies (v - 1 kernels,
// each reading two outputs and writing one) and copies the sum back (reading and writing one).
struct EagerGradBytes {
  double bias_grad = 0, fill = 0, copy = 0, add = 0;
  int kernels = 0;
  [[nodiscard]] double total() const { return bias_grad + fill + copy + add; }
};
[[nodiscard]] EagerGradBytes eager_grad_bytes(const Op& op, double elem_bytes);

// Bytes and kernels of Megatron-Core's eager expert bias (Op::eager_expert_bias) over the op's
// gemm.batch local experts and gemm.batch x gemm.m x gemm.n output elements of `elem_bytes`, with the
// routing weights in fp32 (torch.split of the rows per expert, then for each `t + b * p`, torch.cat,
// .to(dtype)). Forward, per element: the product written in fp32 (4), the sum reading the rows and the
// product and writing fp32 (e + 8), the concatenation (8), the cast back (4 + e): 24 + 2e, in 2 kernels
// per expert and 2. Backward (autograd): the cast's gradient to fp32 (e + 4), the rows' gradient back to
// the dtype (4 + e) and reassembled over the experts (2e), and per expert the bias's and the weights'
// gradients, a product written and summed each (12 + 12): 32 + 4e, in 5 kernels per expert and 2.
[[nodiscard]] EagerGradBytes eager_expert_bias_bytes(const Op& op, double elem_bytes, bool backward);

struct OpGraph {
  std::string model;
  long micro_batch = 0;
  long seq_len = 0;
  long layers = 0;
  DType dtype = DType::kFp16;
  std::vector<Op> ops;  // in topological (forward) order

  // Share of the routed experts' parameters each token uses: top_k / experts of the moe: block, 1
  // without one.
  double routed_share = 1;

  [[nodiscard]] double params() const;
  // Parameters a token goes through: every op's, the routed experts' scaled by routed_share.
  [[nodiscard]] double active_params() const;
  [[nodiscard]] double model_flops() const;  // forward + backward, without recompute
  [[nodiscard]] double saved_bytes() const;
};

// What the device that runs a graph offers that changes the graph itself (not only its costs).
struct KernelSupport {
  bool flash_attention = false;  // a fused attention kernel (used when training.attention is auto)
};

// Builds the graph for `micro_batch` samples in `dtype` (the model's, or its fallback), on a device
// with `support` (default: none, so `attention: auto` builds the unfused path).
[[nodiscard]] OpGraph build_op_graph(const ModelSpec& model, long micro_batch, DType dtype,
                                     const KernelSupport& support = {});

// Model FLOPs of one sample, forward and backward, as MFU counts them: without recompute, and of
// the graph with no fused attention kernel (attention: auto), whatever kernels a plan's GPUs run and
// whatever micro-batch it takes, so that every program of one run reports one MFU.
[[nodiscard]] double model_flops_per_sample(const ModelSpec& model, DType dtype);

// A tensor crossing pipeline layers: the output of one op of layer `from_layer` read by ops of a
// later layer `to_layer` (layer numbers as Op::layer: -1 before the first, `layers` after the last).
struct LayerEdge {
  int from_layer = 0;
  int to_layer = 0;
  double bytes = 0;   // the producer's whole output tensor, in the graph's dtype, for its micro-batch
  int producer = 0;   // index of the producing op in OpGraph::ops
};

// Every tensor that crosses from one layer to a later one: one entry per (producer op, consuming
// layer), sorted by (from_layer, to_layer, producer). In a transformer only adjacent layers are
// joined; in a U-Net the skip tensors and the timestep embedding jump over layers. What crosses a
// cut before layer s: the entries with from_layer < s <= to_layer, each producer counted once (a
// tensor read by several later layers has an entry for each).
[[nodiscard]] std::vector<LayerEdge> layer_edges(const OpGraph& graph);

}  // namespace hetsim
