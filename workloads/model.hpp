// File: workloads/model.hpp
// A model description (workloads/<name>.yaml): architecture and training settings, checked.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/field_override.hpp"
#include "base/input_error.hpp"
#include "workloads/dtype.hpp"
#include "workloads/gemm_precision.hpp"

namespace hetsim {

// gpt, llama, bert: transformers over token sequences; vit: a transformer over image patches;
// vgg: the VGG convolutional network; moe: BERT whose every moe_every-th layer has a top-k
// mixture-of-experts feed-forward block; unet: a diffusion U-Net (diffusers' UNet2DConditionModel)
// whose up path reads skip tensors from the down path (layers with non-adjacent dependencies).
enum class Family { kGpt, kLlama, kBert, kVit, kVgg, kMoe, kUnet };
// Which U-Net: diffusers' (every up level has layers_per_block + 1 units, one skip tensor each)
// or Alpa's port used by the cross-mesh resharding paper (up levels with attention have
// layers_per_block units and leave one skip unused; the mid block is two pipeline layers and each
// upsample opens the next unit's layer, as Alpa's manual pipeline markers place them).
enum class UnetVariant { kDiffusers, kAlpa };
enum class Optimizer { kAdam, kSgd };
enum class Recompute { kNone, kFull };
// training.attention: `auto` uses the fused (flash) kernel where the device has one (device file
// `flash_attention`), the unfused path elsewhere; `flash` asks for it everywhere (a cluster with a
// device that has none falls back to the unfused path there, with a warning from resolve_dtype());
// `standard` is always unfused.
enum class AttentionKernel { kAuto, kStandard, kFlash, kFused };
// training.kernels: which kernels the training code runs around the GEMMs and attention.
// `fused` (default): those of Megatron-LM / Megatron-Core with Transformer Engine, Apex or
// DeepLearningExamples, whose bias gradients come out of the weight-gradient GEMM's epilogue or a
// fused kernel and whose q, k, v are views of the QKV projection's output. `eager`: PyTorch's
// autograd over plain torch.nn.functional code (a module written as timm's ViT, minGPT or
// kernels_profile/torch/layer_bench.py write it): each biased linear layer's bias gradient is a
// column-sum kernel of its own, and q, k, v taken from the packed QKV output by indexing have
// their gradients assembled by select-backward kernels (workloads/op_graph.hpp, Op::eager_views).
enum class TrainingKernels { kFused, kEager };

// Mixture of experts in a gpt, llama or bert model (the `moe:` block; workloads/README.md): in MoE
// layers the MLP becomes a router, `experts` routed experts of which each token uses `top_k`, and
// optional shared experts every token uses. Dense layers keep ModelSpec::ffn_hidden.
struct MoeSpec {
  long experts = 0, top_k = 1, expert_ffn_hidden = 0, shared_experts = 0, shared_ffn_hidden = 0;
  // Layers 0 .. first_dense_layers-1 are dense; after them every `every`-th layer is MoE (every = 2:
  // layers first_dense_layers + 1, + 3, ..., Llama 4 Maverick's interleave).
  long first_dense_layers = 0, every = 1;
  std::optional<double> capacity_factor;   // nullopt = dropless; else slots per expert = ceil(tokens x top_k x cf / experts)
  double router_imbalance = 1.0;           // tokens of the busiest expert / mean (>= 1), a stated assumption
  // GPT-OSS's experts (llama family; gpt and bert experts always have biases): expert_bias, biases on
  // both expert linear layers (Megatron-Core adds the second one's per local expert in eager PyTorch,
  // workloads/op_graph.hpp Op::eager_expert_bias); glu_clamp > 0, the GLU's inputs clamped to
  // [-glu_clamp, glu_clamp] (the gate's from above only) before the fused activation, 0: not clamped.
  bool expert_bias = false;
  double glu_clamp = 0;
  // Latent MoE (Megatron-Core's moe_latent_size; Nemotron 3 Super, Kimi K3): each token is projected
  // from the hidden size down to `latent_size` before the dispatch (fc1_latent_proj), the routed experts
  // read and write that width, and the combined output is projected back up (fc2_latent_proj), so the
  // token exchange moves latent_size-wide rows. The router and the shared experts read the hidden state.
  // 0: the experts read and write the hidden size.
  long latent_size = 0;
};

// DeepSeek's multi-head latent attention (the `mla:` block), in its training form: queries through
// a low-rank latent (or a plain projection), keys and values up-projected from a shared latent of
// kv_lora_rank plus one rotary key of qk_rope_head_dim shared by all heads.
struct MlaSpec {
  std::optional<long> q_lora_rank;  // nullopt: a plain q projection (DeepSeek-V2-Lite)
  long kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
};

// Sliding-window attention (the `sliding_window:` block; Mistral 7B, Gemma 2/3, GPT-OSS): in windowed
// layers each query attends the `tokens` latest positions, itself included (Megatron-Core's
// window_size (tokens - 1, 0)); with `full_every` = k every k-th layer (layers k-1, 2k-1, ...) attends
// the whole causal context (Megatron-Core's window_attn_skip_freq; GPT-OSS: 2), 0: every layer windowed.
struct SlidingWindowSpec {
  long tokens = 0, full_every = 0;
};

// The Mamba-2 mixer of a hybrid model's Mamba layers (the `mamba:` block; Megatron-Core's MambaMixer,
// megatron/core/ssm/mamba_mixer.py): `heads` SSM heads of `head_dim` channels (the inner width
// heads x head_dim), `groups` groups of heads sharing the B and C projections of `state_dim`, a causal
// depthwise convolution of `conv_kernel` taps, the SSD scan in chunks of `chunk_size` tokens.
// Defaults as Megatron-Core's (mamba_head_dim 64, mamba_num_groups 8, mamba_state_dim 128, d_conv 4,
// chunk_size 128; heads: 2 x hidden / head_dim, its expand of 2).
struct MambaSpec {
  long heads = 0, head_dim = 64, groups = 8, state_dim = 128, conv_kernel = 4, chunk_size = 128;
};

// The MLP's (and the experts') activation (`mlp_activation`): SwiGLU (a gated pair of projections),
// GeLU, or squared ReLU (relu(x)^2, ungated: Nemotron-H and Nemotron 3).
enum class MlpActivation { kSwiglu, kGelu, kRelu2 };

// Most samples per iteration read: 10^12 is beyond any training run, and counts up to it stay exact
// in double arithmetic (batch shares are split in doubles).
inline constexpr long kMaxGlobalBatch = 1'000'000'000'000;

struct TrainingSpec {
  long global_batch = 0;  // samples (sequences) per iteration over the whole cluster, <= kMaxGlobalBatch
  long micro_batch = 0;   // samples per forward/backward pass on one device
  DType dtype = DType::kFp16;
  std::optional<DType> dtype_fallback;  // used on devices that lack `dtype` (bf16 on V100 -> fp16)
  Optimizer optimizer = Optimizer::kAdam;
  Recompute recompute = Recompute::kNone;
  AttentionKernel attention = AttentionKernel::kAuto;
  // Dropout probability (attention probabilities on the unfused path, after the attention output
  // projection and the MLP, after the embedding); 0 = no dropout ops. Default per family
  // (workloads/README.md): gpt, bert, moe 0.1; llama, vit 0.
  double dropout = 0;
  // BERT/MoE: positions per sequence the MLM head runs on (DeepLearningExamples gathers the masked
  // positions before the head); default round(0.15 x seq_len).
  long masked_positions = 0;
  // Gradients accumulated and reduced in fp32 (Megatron's --accumulate-allreduce-grads-in-fp32,
  // forced under bf16): 4-byte gradients, 18 bytes of state per parameter with Adam. Read as
  // grad_accumulation: auto (fp32 under bf16, else the training dtype) | fp32 | dtype.
  bool fp32_grads = false;
  // The recipe's GEMM weights kept only in its low-precision format, with no 16-bit copy (Megatron's
  // --fp8-param-gather, Transformer Engine's FP8 primary weights; every Megatron-Bridge FP8 and MXFP8
  // performance recipe sets it): the distributed optimizer's fp32 master weights are the only
  // high-precision copy, and its parameter all-gather moves FP8 bytes (tensor scaling) or the 16-bit
  // weights through the gradient buffer before the cast (MXFP8: reuse_grad_buf_for_mxfp8_param_ag).
  bool fp8_param_gather = false;
  // GEMM inputs of the transformer layers in FP8 or a block-scaled format (training.gemm_precision,
  // workloads/gemm_precision.hpp); kDtype: in `dtype`.
  GemmPrecision gemm_precision = GemmPrecision::kDtype;
  TrainingKernels kernels = TrainingKernels::kFused;
  // The multi-token prediction modules' GEMMs in `dtype`, not gemm_precision (Megatron-Core's
  // keep_mtp_spec_in_bf16, set by Nemotron 3 Super's recipes).
  bool mtp_in_dtype = false;
  // The first and the last decoder layers whose GEMMs stay in `dtype` under a recipe (Megatron-Core's
  // first_last_layers_bf16 with num_layers_at_start_in_bf16 and num_layers_at_end_in_bf16).
  long dtype_layers_first = 0, dtype_layers_last = 0;
  // Operators whose GEMMs take another format than the recipe's (Transformer Engine's quantization
  // recipe matchers; Nemotron 3 Super's NVFP4 recipe keeps qkv, attn_out and the latent projections in
  // BF16 and mamba_out in MXFP8): an operator's name within its layer ("qkv") and its format (kDtype:
  // the training dtype). Only under a recipe; read as training.gemm_precision_by_op.
  std::vector<std::pair<std::string, GemmPrecision>> gemm_precision_by_op{};
  [[nodiscard]] bool low_precision_gemms() const { return gemm_precision != GemmPrecision::kDtype; }
  // GEMMs in fp32: SIMT kernels, not tensor cores (tf32 runs on tensor cores).
  [[nodiscard]] bool fp32_gemms() const { return !low_precision_gemms() && dtype == DType::kFp32; }
  // The GEMMs' format: the low-precision recipe's name ("mxfp8"), "16-bit" for fp16 and bf16 (the
  // same tensor-core rate wherever both exist), else the dtype's ("tf32", "fp32").
  [[nodiscard]] std::string gemm_format() const {
    if (low_precision_gemms()) return std::string(gemm_precision_name(gemm_precision));
    return dtype == DType::kFp16 || dtype == DType::kBf16 ? "16-bit" : std::string(dtype_name(dtype));
  }
};

struct ModelSpec {
  std::string name;
  Family family = Family::kGpt;
  long layers = 0;
  long hidden = 0;
  long heads = 0;
  long kv_heads = 0;  // = heads unless grouped-query attention
  long head_dim = 0;  // width of one attention head; 0 = hidden / heads (Qwen3 states a wider one)
  long ffn_hidden = 0;
  long seq_len = 0;
  long vocab = 0;
  bool tied_embeddings = true;
  // Multi-token prediction (gpt, llama; DeepSeek-V3's MTP, Megatron-Core --mtp-num-layers): the last
  // `mtp_layers` transformer layers (x mtp_pattern's length in a hybrid model) are the MTP modules'
  // layers, each module of which also embeds the shifted
  // tokens, normalises both inputs, projects their concatenation (eh_proj, 2h -> h) and runs the
  // shared output head and its loss again (op_graph.cpp: ops "mtpK.*" beside the head). 0: none.
  long mtp_layers = 0;
  // Hybrid models (Megatron-Core's mtp_hybrid_override_pattern, Nemotron 3 Super: "*E"): the layers of
  // each MTP module, so that the last mtp_layers x its length characters of hybrid_pattern are the
  // modules' layers, this pattern repeated. Empty: each module is one layer.
  std::string mtp_pattern;
  // One set of weights for all mtp_layers modules (Megatron-Core's mtp_use_repeated_layer): the first
  // module's; the others run its layers again (their compute counted, their weights not).
  bool mtp_shared = false;
  // Images (vit, vgg).
  long image_size = 0;
  long patch_size = 0;  // vit
  long channels = 3;
  long classes = 0;
  long depth = 0;  // vgg: 11, 13, 16 or 19
  // Mixture of experts and latent attention of gpt, llama and bert models (absent: dense, plain).
  std::optional<MoeSpec> moe;   // gpt/llama/bert with a moe: block
  std::optional<MlaSpec> mla;   // gpt/llama with an mla: block
  std::optional<SlidingWindowSpec> sliding_window;  // gpt/llama with a sliding_window: block
  // Hybrid models (gpt, llama; Megatron-Core's hybrid_layer_pattern): one character per layer, M a
  // Mamba layer (norm, the `mamba:` mixer, residual), * an attention layer, - a dense MLP layer, E a
  // MoE layer, each with its own norm and residual. Empty: every layer is attention + feed-forward.
  std::string hybrid_pattern;
  std::optional<MambaSpec> mamba;  // with M layers in hybrid_pattern
  std::optional<MlpActivation> mlp_activation;  // as stated; mlp_activation_of() gives the family's otherwise
  // Mixture of experts of the BERT-MoE family (moe; HAP's model: its own `moe:` keys).
  long experts_per_device = 0;
  long moe_every = 2;
  long top_k = 2;
  double capacity_factor = 1.0;
  long experts = 0;  // experts_per_device x devices, set by resolve_experts()
  // U-Net (unet); also image_size, channels (input), heads (per spatial transformer, every level).
  UnetVariant unet_variant = UnetVariant::kDiffusers;
  long base_channels = 0;             // block_out_channels = base_channels x channel_mult
  std::vector<long> channel_mult;     // one entry per resolution level
  long layers_per_block = 1;          // ResNet (+ transformer) units per down level
  long out_channels = 0;              // predicted noise channels (default: channels)
  long context_len = 0;               // text-context tokens from the data loader
  long context_dim = 0;               // their width (cross_attention_dim)
  TrainingSpec training;

  std::string file;          // where it was read from
  Diagnostic dtype_location;  // file:line:col of training.dtype, for errors found later
  Diagnostic attention_location;  // file:line:col of training.attention
  Diagnostic gemm_precision_location;  // file:line:col of training.gemm_precision
};

[[nodiscard]] std::string_view family_name(Family f);
[[nodiscard]] std::string_view attention_kernel_name(AttentionKernel k);  // "auto", "standard", "flash", "fused"
[[nodiscard]] std::string_view training_kernels_name(TrainingKernels k);  // "fused", "eager"
// Whether a graph for a device with (`device_has_flash`) or without a fused attention kernel uses it.
// (`flash` and `auto` both need the device's kernel; `standard` never uses one.)
[[nodiscard]] bool uses_flash_attention(const TrainingSpec& t, bool device_has_flash);

// Whether transformer layer `layer` (0 .. layers-1) of a model with a moe: block has a MoE
// feed-forward block. False for dense models and for the BERT-MoE family (which keeps moe_every).
[[nodiscard]] bool is_moe_layer(const ModelSpec& m, long layer);
// What `layer` holds: 'T' (attention and a feed-forward block) in a model without hybrid_pattern,
// else its character there ('M', '*', '-', 'E').
[[nodiscard]] char layer_kind(const ModelSpec& m, long layer);
[[nodiscard]] std::string_view mlp_activation_name(MlpActivation a);  // "swiglu", "gelu", "relu2"
// The MLPs' and experts' activation: as stated (gpt, llama), else the family's (llama: SwiGLU; the
// others: GeLU).
[[nodiscard]] MlpActivation mlp_activation_of(const ModelSpec& m);
// Rows each expert's GEMM runs on for `routed_rows` = tokens x top_k token copies: ceil(routed_rows /
// experts) dropless (the mean; the busiest expert has router_imbalance times it), ceil(routed_rows x
// capacity_factor / experts) with a capacity.
[[nodiscard]] long expert_rows(const MoeSpec& moe, double routed_rows);
// Layers of one multi-token prediction module: mtp_pattern's length, else 1.
[[nodiscard]] long mtp_module_layers(const ModelSpec& m);
// The decoder's own layers, before the MTP modules' (layers - mtp_layers x mtp_module_layers).
[[nodiscard]] long main_layers(const ModelSpec& m);
// Whether `layer`'s weights are another layer's: a layer of the second or a later MTP module under
// mtp_shared (layer m.layers: the modules' heads beside the output layer, never).
[[nodiscard]] bool reuses_mtp_weights(const ModelSpec& m, long layer);
// Whether `m` has operators named `op` (within a layer: "qkv", "mamba_out", ...) whose GEMMs a recipe
// casts: one of gemm_op_names() that its layers hold.
[[nodiscard]] bool has_gemm_op(const ModelSpec& m, const std::string& op);
// Width of the rows a MoE layer dispatches to its routed experts: moe.latent_size where stated, else
// the hidden size.
[[nodiscard]] long moe_token_width(const ModelSpec& m);
// Whether some layer attends a sliding window shorter than the sequence (a sliding_window: block
// whose window is shorter than seq_len; a longer one is no window).
[[nodiscard]] bool has_sliding_window(const ModelSpec& m);
// Keys each query of transformer layer `layer` may attend under a sliding window: the window's
// tokens, or 0 where the layer attends its whole causal context (no window, a full layer, or a window
// as long as the sequence).
[[nodiscard]] long attention_window(const ModelSpec& m, long layer);
// Width of one attention head: head_dim when stated, else hidden / heads.
[[nodiscard]] long attention_head_dim(const ModelSpec& m);

// Loads and checks a model file. Throws InputError listing every problem.
// `sets`: --set overrides of this input (field_override.hpp), applied before it is read.
[[nodiscard]] ModelSpec load_model(const std::filesystem::path& path, const std::vector<FieldOverride>& sets = {});

// Mixture-of-experts models have experts_per_device x devices experts: fixes `experts` for a
// cluster of `devices` GPUs (no effect on other families).
void resolve_experts(ModelSpec& m, int devices);

// A micro-batch larger than the global batch becomes the global batch, said on stderr: the model
// file's micro-batch is a default that a smaller global batch (an edit of it) may undercut.
void clamp_micro_batch(ModelSpec& m);

}  // namespace hetsim
