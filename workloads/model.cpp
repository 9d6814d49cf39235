// File: workloads/model.cpp
#include "workloads/model.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "base/log.hpp"
#include "base/text.hpp"
#include "base/yaml_reader.hpp"
#include "workloads/training_reader.hpp"
#include "workloads/unet_graph.hpp"

namespace hetsim {

std::string_view family_name(Family f) {
  switch (f) {
    case Family::kGpt: return "gpt";
    case Family::kLlama: return "llama";
    case Family::kBert: return "bert";
    case Family::kVit: return "vit";
    case Family::kVgg: return "vgg";
    case Family::kMoe: return "moe";
    case Family::kUnet: return "unet";
  }
  return "?";
}

std::string_view attention_kernel_name(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::kAuto: return "auto";
    case AttentionKernel::kStandard: return "standard";
    case AttentionKernel::kFlash: return "flash";
    case AttentionKernel::kFused: return "fused";
  }
  return "?";
}

std::string_view training_kernels_name(TrainingKernels k) { return k == TrainingKernels::kEager ? "eager" : "fused"; }

bool uses_flash_attention(const TrainingSpec& t, bool device_has_flash) {
  return t.attention != AttentionKernel::kStandard && device_has_flash;
}

namespace {

Family family_from(const std::string& s) {
  if (s == "llama") return Family::kLlama;
  if (s == "bert") return Family::kBert;
  if (s == "vit") return Family::kVit;
  if (s == "vgg") return Family::kVgg;
  if (s == "moe") return Family::kMoe;
  if (s == "unet") return Family::kUnet;
  return Family::kGpt;
}

// Images: at most 65 536 pixels a side (gigapixel slides are tiled far below that) and 1024
// input channels (hyperspectral cubes reach a few hundred), so that pixel and patch counts stay
// exact in 64-bit integers.
constexpr long kMaxImageSide = 1L << 16;
constexpr long kMaxImageChannels = 1024;

// Transformers: widths up to 2^24 (the largest published hidden size is about 2^15), heads up to
// 2^16, sequences and vocabularies up to 2^24 tokens (published contexts reach 2^23, vocabularies
// 2^18): far beyond any model, and products with a micro-batch (up to 10^12) stay exact in 64 bits.
constexpr long kMaxWidth = 1L << 24;
constexpr long kMaxHeads = 1L << 16;
constexpr long kMaxTokens = 1L << 24;

// Returns whether `layers` was read well (cross-field checks against it need a real count).
bool read_transformer(FieldReader& r, ModelSpec& m, bool tokens) {
  const size_t problems_before = r.diagnostics().size();
  m.layers = r.integer("layers", 1, 1000);
  const bool layers_read = r.diagnostics().size() == problems_before;
  m.hidden = r.integer("hidden", 1, kMaxWidth);
  m.heads = r.integer("heads", 1, kMaxHeads);
  m.kv_heads = r.opt_integer("kv_heads", 1, kMaxHeads).value_or(m.heads);
  m.head_dim = r.opt_integer("head_dim", 1, kMaxWidth).value_or(0);
  m.ffn_hidden = r.integer("ffn_hidden", 1, kMaxWidth);
  if (tokens) {
    m.seq_len = r.integer("seq_len", 1, kMaxTokens);
    m.vocab = r.integer("vocab", 1, kMaxTokens);
  }
  return layers_read;
}

// U-Net: the fields of workloads/README.md; `layers` is derived from the structure (a `layers`
// field may restate it, and must then agree). seq_len is 1 (a sample is one image); hidden is the
// element count of the widest activation of one sample (conv_in's output, base_channels x
// image_size^2), which is what code that sizes a layer boundary as seq_len x hidden then reads.
void read_unet(FieldReader& r, ModelSpec& m) {
  const size_t problems_before = r.diagnostics().size();
  m.unet_variant = r.opt_choice("variant", {"diffusers", "alpa"}).value_or("diffusers") == "alpa" ? UnetVariant::kAlpa
                                                                                                  : UnetVariant::kDiffusers;
  m.base_channels = r.integer("base_channels", 1, 1L << 20);
  const std::vector<double> mult = r.opt_numbers("channel_mult", 1, 64).value_or(std::vector<double>{1, 2, 4, 4});
  m.channel_mult.clear();
  for (size_t i = 0; i < mult.size(); ++i) {
    if (mult[i] != std::floor(mult[i])) {
      r.error("channel_mult", "item " + std::to_string(i) + " is not a whole number");
    }
    m.channel_mult.push_back(static_cast<long>(mult[i]));
  }
  if (m.channel_mult.size() > 8) {
    r.error("channel_mult", std::to_string(m.channel_mult.size()) + " levels; at most 8 are supported");
  }
  m.layers_per_block = r.opt_integer("layers_per_block", 1, 8).value_or(1);
  m.heads = r.opt_integer("heads", 1, 1024).value_or(8);
  m.image_size = r.integer("image_size", 1, kMaxImageSide);
  m.channels = r.opt_integer("channels", 1, kMaxImageChannels).value_or(4);
  m.out_channels = r.opt_integer("out_channels", 1, 1024).value_or(m.channels);
  m.context_len = r.opt_integer("context_len", 1, 1L << 20).value_or(77);
  m.context_dim = r.opt_integer("context_dim", 1, 1L << 20).value_or(768);
  const std::optional<long> layers = r.opt_integer("layers", 1, 1000);
  if (r.diagnostics().size() != problems_before || m.channel_mult.empty()) return;  // cross-field checks on valid fields
  const long levels = static_cast<long>(m.channel_mult.size());
  const long factor = 1L << (levels - 1);
  if (m.image_size % factor != 0) {
    r.error("image_size", std::to_string(m.image_size) + " is not divisible by " + std::to_string(factor) + " (2^" +
                              std::to_string(levels - 1) + "): each of the " + std::to_string(levels - 1) +
                              " downsamples of a " + std::to_string(levels) + "-level U-Net halves it");
  }
  std::vector<long> indivisible;  // block widths that heads do not divide, each once
  for (long mu : m.channel_mult) {
    const long c = m.base_channels * mu;
    if (c % m.heads != 0 && std::find(indivisible.begin(), indivisible.end(), c) == indivisible.end()) {
      indivisible.push_back(c);
    }
  }
  if (!indivisible.empty()) {
    std::string widths;
    for (long c : indivisible) widths.append(widths.empty() ? "" : ", ").append(std::to_string(c));
    r.error("heads", "block widths (base_channels x channel_mult) " + widths + " are not divisible by heads " +
                         std::to_string(m.heads));
  }
  m.layers = unet_layer_count(m);
  if (layers && *layers != m.layers) {
    r.error("layers", std::to_string(*layers) + " does not match the " + std::to_string(m.layers) + " layers of this " +
                          unet_layer_breakdown(m) + "; leave the field out to derive it");
  }
  m.seq_len = 1;
  m.hidden = m.base_channels * m.image_size * m.image_size;
  m.kv_heads = m.heads;
  m.ffn_hidden = 4 * m.base_channels;
  m.vocab = 0;
}

// Up to 2^16 routed experts (published models have at most a few hundred; DeepSeek-V3 256).
constexpr long kMaxExperts = 1L << 16;
constexpr double kMinCapacityFactor = 0.1;  // as the SPMD MoE family's bound

// The moe: block of a gpt, llama or bert model. `layers`: the model's layer count, 0 when it could
// not be read (the checks against it are then skipped). `llama`: the experts are SwiGLU MLPs, which
// may carry biases (expert_bias) and clamp their GLU (glu_clamp); gpt's and bert's are GeLU MLPs with
// biases, where both fields are refused.
MoeSpec read_moe(FieldReader r, long layers, bool llama) {
  const size_t problems_before = r.diagnostics().size();
  MoeSpec s;
  s.experts = r.integer("experts", 1, kMaxExperts);
  s.top_k = r.integer("top_k", 1, kMaxExperts);
  s.expert_ffn_hidden = r.integer("expert_ffn_hidden", 1, kMaxWidth);
  s.shared_experts = r.opt_integer("shared_experts", 0, kMaxExperts).value_or(0);
  const std::optional<long> shared_ffn = r.opt_integer("shared_ffn_hidden", 1, kMaxWidth);
  s.first_dense_layers = r.opt_integer("first_dense_layers", 0, 1000).value_or(0);
  s.every = r.opt_integer("every", 1, 1000).value_or(1);
  if (const std::optional<std::string> cf = r.opt_text("capacity_factor"); cf && *cf != "none") {
    s.capacity_factor = r.opt_number("capacity_factor", 0, 64);
    if (s.capacity_factor && *s.capacity_factor < kMinCapacityFactor) {
      r.error("capacity_factor", *cf + " must be at least 0.1 (below it an expert keeps under a tenth of its "
                                       "fair share of tokens); write none for dropless routing");
      s.capacity_factor.reset();
    }
  }
  s.router_imbalance = r.opt_number("router_imbalance", 1, static_cast<double>(kMaxExperts)).value_or(1.0);
  const std::optional<bool> expert_bias = r.opt_flag("expert_bias");
  const std::optional<double> glu_clamp = r.opt_number("glu_clamp", 0, 1e6);
  if (!llama && expert_bias) {
    r.error("expert_bias", "gpt and bert experts are GeLU MLPs that always carry biases; expert_bias is for llama-family "
                           "(SwiGLU) experts, such as GPT-OSS's");
  }
  if (!llama && glu_clamp) r.error("glu_clamp", "gpt and bert experts are GeLU MLPs without a gated linear unit to clamp");
  s.expert_bias = llama && expert_bias.value_or(false);
  s.glu_clamp = llama ? glu_clamp.value_or(0) : 0;
  s.latent_size = r.opt_integer("latent_size", 1, kMaxWidth).value_or(0);
  r.finish();
  s.shared_ffn_hidden = shared_ffn.value_or(s.shared_experts * s.expert_ffn_hidden);
  if (r.diagnostics().size() != problems_before) return s;  // cross-field checks on valid fields
  if (s.top_k > s.experts) {
    r.error("top_k", std::to_string(s.top_k) + " is more than experts " + std::to_string(s.experts));
    return s;
  }
  if (shared_ffn && s.shared_experts == 0) {
    r.error("shared_ffn_hidden", std::to_string(*shared_ffn) + " without shared experts (shared_experts is 0); state "
                                 "shared_experts, e.g. 1");
  }
  // The busiest expert receives each token at most once: at most tokens of tokens x top_k / experts.
  const double most = static_cast<double>(s.experts) / static_cast<double>(s.top_k);
  if (s.router_imbalance > most) {
    std::ostringstream msg;
    msg.precision(10);  // 16.000001 is not said as 16
    msg << s.router_imbalance << " is more than experts / top_k = " << most
        << " (the busiest expert receives each token at most once)";
    r.error("router_imbalance", msg.str());
  }
  if (layers > 0 && s.first_dense_layers >= layers) {
    r.error("first_dense_layers", std::to_string(s.first_dense_layers) + " leaves no MoE layer among the " +
                                      std::to_string(layers) + " layers");
  } else if (layers > 0 && s.first_dense_layers + s.every - 1 >= layers) {
    r.error("every", std::to_string(s.every) + " after " + std::to_string(s.first_dense_layers) +
                         " dense layers leaves no MoE layer among the " + std::to_string(layers) +
                         " layers (the first would be layer " + std::to_string(s.first_dense_layers + s.every - 1) + ")");
  }
  return s;
}

// The mla: block: q_lora_rank (or none), kv_lora_rank and the three head widths.
MlaSpec read_mla(FieldReader r) {
  MlaSpec s;
  if (const std::optional<std::string> q = r.opt_text("q_lora_rank"); q && *q != "none") {
    s.q_lora_rank = r.opt_integer("q_lora_rank", 1, kMaxWidth);
  }
  s.kv_lora_rank = r.integer("kv_lora_rank", 1, kMaxWidth);
  s.qk_nope_head_dim = r.integer("qk_nope_head_dim", 1, kMaxWidth);
  s.qk_rope_head_dim = r.integer("qk_rope_head_dim", 0, kMaxWidth);
  s.v_head_dim = r.integer("v_head_dim", 1, kMaxWidth);
  r.finish();
  return s;
}

// The sliding_window: block: the window's tokens and, optionally, every how many layers one attends
// the whole context.
SlidingWindowSpec read_sliding_window(FieldReader r) {
  SlidingWindowSpec s;
  s.tokens = r.integer("tokens", 1, kMaxTokens);
  s.full_every = r.opt_integer("full_every", 2, 1000).value_or(0);
  r.finish();
  return s;
}

// The mamba: block: the mixer's widths, Megatron-Core's defaults where left out (heads: 2 x hidden /
// head_dim, its expand of 2).
MambaSpec read_mamba(FieldReader r, long hidden) {
  const size_t problems_before = r.diagnostics().size();
  MambaSpec s;
  s.head_dim = r.opt_integer("head_dim", 1, kMaxWidth).value_or(s.head_dim);
  const std::optional<long> heads = r.opt_integer("heads", 1, kMaxHeads);
  s.groups = r.opt_integer("groups", 1, kMaxHeads).value_or(s.groups);
  s.state_dim = r.opt_integer("state_dim", 1, 4096).value_or(s.state_dim);
  s.conv_kernel = r.opt_integer("conv_kernel", 1, 64).value_or(s.conv_kernel);
  s.chunk_size = r.opt_integer("chunk_size", 1, 4096).value_or(s.chunk_size);
  r.finish();
  if (r.diagnostics().size() != problems_before) return s;
  if (heads) {
    s.heads = *heads;
  } else if (hidden > 0 && (2 * hidden) % s.head_dim == 0) {
    s.heads = 2 * hidden / s.head_dim;
  } else if (hidden > 0) {
    r.error("head_dim", std::to_string(s.head_dim) + " does not divide 2 x hidden = " + std::to_string(2 * hidden) +
                            " (the inner width without heads stated); state heads");
    return s;
  }
  if (s.heads % s.groups != 0) {
    r.error("groups", std::to_string(s.groups) + " does not divide the " + std::to_string(s.heads) + " SSM heads");
  }
  return s;
}

// hybrid_pattern and the blocks it needs: a mamba: block exactly when some layer is M, a moe: block
// exactly when some is E (the pattern places the MoE layers: moe's first_dense_layers and every are
// refused beside it).
void read_hybrid_pattern(FieldReader& r, ModelSpec& m, bool layers_read, std::optional<FieldReader> mamba) {
  const std::optional<std::string> pattern = r.opt_text("hybrid_pattern");
  if (!pattern) {
    if (mamba) r.error("mamba", "a mamba: block needs hybrid_pattern to say which layers are Mamba layers (M)");
    return;
  }
  const size_t bad = pattern->find_first_not_of("M*-E");
  if (bad != std::string::npos) {
    r.error("hybrid_pattern", "character '" + pattern->substr(bad, 1) + "' at position " + std::to_string(bad) +
                                  ": each layer is M (Mamba), * (attention), - (dense MLP) or E (MoE); pipeline "
                                  "separators (|) are not read: a plan places the stages");
    return;
  }
  if (layers_read && static_cast<long>(pattern->size()) != m.layers) {
    r.error("hybrid_pattern", std::to_string(pattern->size()) + " characters for the model's " + std::to_string(m.layers) +
                                  " layers: one per layer");
    return;
  }
  const bool has_m = pattern->find('M') != std::string::npos, has_e = pattern->find('E') != std::string::npos;
  if (has_m && !mamba) r.error("hybrid_pattern", "has Mamba layers (M) but the model has no mamba: block");
  if (!has_m && mamba) r.error("mamba", "no layer of hybrid_pattern is a Mamba layer (M)");
  if (has_e && !m.moe) r.error("hybrid_pattern", "has MoE layers (E) but the model has no moe: block");
  if (!has_e && m.moe) r.error("moe", "no layer of hybrid_pattern is a MoE layer (E)");
  if (m.moe && (m.moe->first_dense_layers != 0 || m.moe->every != 1)) {
    r.error("moe", "first_dense_layers and every are for models without hybrid_pattern: the pattern places the MoE "
                   "layers (E)");
  }
  if (mamba) m.mamba = read_mamba(*mamba, m.hidden);
  m.hybrid_pattern = *pattern;
}

// mtp_pattern and mtp_shared (after mtp_layers and hybrid_pattern are read): each module's layers, and
// whether the modules share one set of weights.
void read_mtp_modules(FieldReader& r, ModelSpec& m) {
  const std::optional<std::string> pattern = r.opt_text("mtp_pattern");
  const std::optional<bool> shared = r.opt_flag("mtp_shared");
  if (shared && *shared && m.mtp_layers == 0) r.error("mtp_shared", "shares the prediction modules' weights, but the model has none (mtp_layers)");
  m.mtp_shared = shared.value_or(false) && m.mtp_layers > 0;
  if (!pattern) return;
  if (m.hybrid_pattern.empty()) {
    if (r.opt_text("hybrid_pattern")) return;  // refused there
    r.error("mtp_pattern", "names the layers of each prediction module of a hybrid model (hybrid_pattern); without one each "
                           "module is one transformer layer");
    return;
  }
  if (m.mtp_layers == 0) {
    r.error("mtp_pattern", "names the layers of each prediction module, but the model has none (mtp_layers)");
    return;
  }
  const size_t bad = pattern->find_first_not_of("M*-E");
  if (pattern->empty() || bad != std::string::npos) {
    r.error("mtp_pattern", pattern->empty() ? std::string("is empty: one character per layer of a module, as hybrid_pattern's")
                                            : "character '" + pattern->substr(bad, 1) + "' at position " + std::to_string(bad) +
                                                  ": each layer is M, *, - or E, as in hybrid_pattern");
    return;
  }
  std::string tail;
  for (long k = 0; k < m.mtp_layers; ++k) tail += *pattern;
  const std::string& all = m.hybrid_pattern;
  if (tail.size() >= all.size() || all.compare(all.size() - tail.size(), tail.size(), tail) != 0) {
    r.error("mtp_pattern", "the last " + std::to_string(tail.size()) + " characters of hybrid_pattern are the " +
                               std::to_string(m.mtp_layers) + " prediction modules' layers and must read \"" + tail +
                               "\", with at least one layer before them");
    return;
  }
  m.mtp_pattern = *pattern;
}

}  // namespace

void resolve_experts(ModelSpec& m, int devices) {
  if (m.family == Family::kMoe) m.experts = m.experts_per_device * devices;
}

void clamp_micro_batch(ModelSpec& m) {
  TrainingSpec& t = m.training;
  if (t.micro_batch <= t.global_batch) return;
  log_info("the model's micro-batch " + std::to_string(t.micro_batch) + " is larger than the global batch " +
           std::to_string(t.global_batch) + ": using " + std::to_string(t.global_batch));
  t.micro_batch = t.global_batch;
}

ModelSpec load_model(const std::filesystem::path& path, const std::vector<FieldOverride>& sets) {
  YamlFile file = YamlFile::load(path);
  file.apply(sets);
  Diagnostics diags;
  FieldReader r = file.root(diags);
  ModelSpec m;
  m.file = file.name();
  m.name = r.name("name");
  m.family = family_from(r.choice("family", {"gpt", "llama", "bert", "vit", "vgg", "moe", "unet"}));
  switch (m.family) {
    case Family::kGpt:
    case Family::kLlama:
    case Family::kBert: {
      const bool layers_read = read_transformer(r, m, true);
      if (std::optional<FieldReader> moe = r.opt_child("moe")) m.moe = read_moe(*moe, layers_read ? m.layers : 0, m.family == Family::kLlama);
      if (std::optional<FieldReader> mla = r.opt_child("mla")) {
        if (m.family == Family::kBert) {
          r.error("mla", "multi-head latent attention is built for the causal families gpt and llama, not bert");
        } else {
          m.mla = read_mla(*mla);
        }
      }
      if (const std::optional<long> mtp = r.opt_integer("mtp_layers", 0, 64)) {
        if (m.family == Family::kBert) {
          r.error("mtp_layers", "multi-token prediction is built for the causal families gpt and llama, not bert");
        } else if (layers_read && *mtp >= m.layers) {
          r.error("mtp_layers", std::to_string(*mtp) + " is not fewer than the model's " + std::to_string(m.layers) +
                                    " layers, of which the last are the prediction modules' own");
        } else {
          m.mtp_layers = *mtp;
        }
      }
      if (const std::optional<std::string> act = r.opt_choice("mlp_activation", {"swiglu", "gelu", "relu2"})) {
        if (m.family == Family::kBert) {
          r.error("mlp_activation", "bert's MLPs are GeLU as DeepLearningExamples trains them; mlp_activation is for gpt and llama");
        } else {
          for (const MlpActivation a : {MlpActivation::kSwiglu, MlpActivation::kGelu, MlpActivation::kRelu2}) {
            if (*act == mlp_activation_name(a)) m.mlp_activation = a;
          }
        }
      }
      if (m.family == Family::kBert) {
        if (r.opt_text("hybrid_pattern")) r.error("hybrid_pattern", "hybrid layers are built for the causal families gpt and llama, not bert");
        if (r.opt_child("mamba")) r.error("mamba", "Mamba layers are built for the causal families gpt and llama, not bert");
      } else {
        read_hybrid_pattern(r, m, layers_read, r.opt_child("mamba"));
        read_mtp_modules(r, m);
      }
      if (m.moe && m.moe->glu_clamp > 0 && mlp_activation_of(m) != MlpActivation::kSwiglu) {
        r.error("mlp_activation", "glu_clamp clamps a gated linear unit's inputs: it needs swiglu experts");
      }
      if (std::optional<FieldReader> window = r.opt_child("sliding_window")) {
        if (m.family == Family::kBert) {
          r.error("sliding_window", "a sliding window here is causal (each query attends the tokens before it), built for "
                                    "gpt and llama, not bert");
        } else {
          m.sliding_window = read_sliding_window(*window);
        }
      }
      break;
    }
    case Family::kMoe: {
      read_transformer(r, m, true);
      FieldReader moe = r.child("moe");
      m.experts_per_device = moe.integer("experts_per_device", 1, 64);
      m.moe_every = moe.integer("every", 1, 1000);
      m.top_k = moe.integer("top_k", 1, 8);
      m.capacity_factor = moe.number("capacity_factor", 0.1, 16);
      if (m.layers > 0 && m.moe_every > m.layers) {
        moe.error("every", std::to_string(m.moe_every) + " leaves no MoE layer among the " + std::to_string(m.layers) +
                               " layers (the first would be layer " + std::to_string(m.moe_every - 1) + ")");
      }
      moe.finish();
      break;
    }
    case Family::kVit:
      read_transformer(r, m, false);
      m.image_size = r.integer("image_size", 1, kMaxImageSide);
      m.patch_size = r.integer("patch_size", 1, kMaxImageSide);
      m.channels = r.integer("channels", 1, kMaxImageChannels);
      m.classes = r.integer("classes", 1, kMaxTokens);
      if (m.patch_size > 0 && m.image_size % m.patch_size != 0) {
        r.error("patch_size", "image_size " + std::to_string(m.image_size) + " is not divisible by patch_size " +
                                  std::to_string(m.patch_size));
      } else if (m.patch_size > 0) {
        const long side = m.image_size / m.patch_size;
        m.seq_len = side * side + 1;  // patches and the class token
        m.vocab = m.classes;
      }
      break;
    case Family::kVgg:
      m.depth = r.integer("depth", 11, 19);
      if (m.depth != 11 && m.depth != 13 && m.depth != 16 && m.depth != 19) r.error("depth", "VGG has depth 11, 13, 16 or 19");
      m.image_size = r.integer("image_size", 32, kMaxImageSide);
      m.channels = r.integer("channels", 1, kMaxImageChannels);
      m.classes = r.integer("classes", 1, kMaxTokens);
      m.seq_len = 1;  // one sample = one image
      m.layers = m.depth;
      m.hidden = 4096;  // classifier width
      m.heads = 1;
      m.kv_heads = 1;
      m.ffn_hidden = 4096;
      m.vocab = m.classes;
      break;
    case Family::kUnet: read_unet(r, m); break;
  }
  // A U-Net has no vocabulary to tie; the key is unknown there.
  m.tied_embeddings = m.family != Family::kUnet && r.opt_flag("tied_embeddings").value_or(m.family != Family::kLlama);
  if (m.family == Family::kMoe) m.experts = m.experts_per_device;  // until resolve_experts() knows the cluster
  FieldReader training = r.child("training");
  m.dtype_location = training.locate("dtype", "");
  m.attention_location = training.locate("attention", "");
  m.gemm_precision_location = training.locate("gemm_precision", "");
  m.training = read_training(training, m.family, m.seq_len, m.mtp_layers > 0);
  const bool shapes_read = diags.empty();
  if (shapes_read && m.mla && m.kv_heads != m.heads) {
    r.error("kv_heads", std::to_string(m.kv_heads) + " with mla: latent attention up-projects keys and values for every "
                        "head; leave kv_heads out");
  }
  if (shapes_read && m.mla && m.head_dim != 0) {
    r.error("head_dim", "with mla the head widths are mla's qk_nope_head_dim + qk_rope_head_dim (queries, keys) and "
                        "v_head_dim (values); leave head_dim out");
  }
  if (shapes_read && m.family != Family::kUnet && m.heads > 0 && m.head_dim == 0 && !m.mla && m.hidden % m.heads != 0) {
    r.error("heads", "hidden " + std::to_string(m.hidden) + " is not divisible by heads " + std::to_string(m.heads));
  }
  if (shapes_read && m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    r.error("kv_heads", "heads " + std::to_string(m.heads) + " is not divisible by kv_heads " +
                            std::to_string(m.kv_heads));
  }
  if (diags.empty()) check_precision_map(training, m);
  r.finish();
  diags.throw_if_any();
  return m;
}

}  // namespace hetsim
