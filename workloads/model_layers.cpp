// File: workloads/model_layers.cpp
// What each layer of a loaded model holds, as the graph builders and the planner ask it: its kind in a
// hybrid pattern, MoE or not, the experts' rows and width, the multi-token prediction modules' layers,
// the attention window and head width, the MLPs' activation.
#include "workloads/model.hpp"

#include <algorithm>
#include <cmath>

namespace hetsim {

char layer_kind(const ModelSpec& m, long layer) {
  if (m.hybrid_pattern.empty() || layer < 0 || layer >= static_cast<long>(m.hybrid_pattern.size())) return 'T';
  return m.hybrid_pattern[static_cast<size_t>(layer)];
}

std::string_view mlp_activation_name(MlpActivation a) {
  switch (a) {
    case MlpActivation::kSwiglu: return "swiglu";
    case MlpActivation::kGelu: return "gelu";
    case MlpActivation::kRelu2: return "relu2";
  }
  return "gelu";
}

MlpActivation mlp_activation_of(const ModelSpec& m) {
  return m.mlp_activation.value_or(m.family == Family::kLlama ? MlpActivation::kSwiglu : MlpActivation::kGelu);
}

bool is_moe_layer(const ModelSpec& m, long layer) {
  if (!m.hybrid_pattern.empty()) return m.moe && layer_kind(m, layer) == 'E';
  if (!m.moe || layer < m.moe->first_dense_layers || layer >= m.layers) return false;
  const long every = std::max(1L, m.moe->every);
  return (layer - m.moe->first_dense_layers) % every == every - 1;
}

long expert_rows(const MoeSpec& moe, double routed_rows) {
  const double experts = static_cast<double>(std::max(1L, moe.experts));
  // With a capacity, Megatron-Core's get_capacity(): ceil(tokens / experts x capacity_factor), its
  // tokens counting each of a token's top_k copies.
  const double rows = routed_rows / experts * moe.capacity_factor.value_or(1.0);
  return static_cast<long>(std::ceil(rows));
}

long mtp_module_layers(const ModelSpec& m) { return m.mtp_pattern.empty() ? 1 : static_cast<long>(m.mtp_pattern.size()); }

long main_layers(const ModelSpec& m) { return m.layers - m.mtp_layers * mtp_module_layers(m); }

bool reuses_mtp_weights(const ModelSpec& m, long layer) {
  return m.mtp_shared && layer >= main_layers(m) + mtp_module_layers(m) && layer < m.layers;
}

bool has_gemm_op(const ModelSpec& m, const std::string& op) {
  // The transformer families whose layers' operators carry these names (VGG's, the U-Nets' and
  // BERT-MoE's do not).
  if (m.family != Family::kGpt && m.family != Family::kLlama && m.family != Family::kBert && m.family != Family::kVit) return false;
  const bool hybrid = !m.hybrid_pattern.empty();
  const bool attention = !hybrid || m.hybrid_pattern.find('*') != std::string::npos;
  bool dense_mlp = hybrid && m.hybrid_pattern.find('-') != std::string::npos;
  for (long l = 0; !hybrid && l < m.layers && !dense_mlp; ++l) dense_mlp = !is_moe_layer(m, l);
  const bool swiglu = mlp_activation_of(m) == MlpActivation::kSwiglu;
  const bool q_lora = m.mla && m.mla->q_lora_rank.has_value();
  if (op == "qkv") return attention && !m.mla;
  if (op == "attn_out") return attention;
  if (op == "q_down" || op == "q_up") return attention && q_lora;
  if (op == "q_proj") return attention && m.mla && !q_lora;
  if (op == "kv_down" || op == "kv_up") return attention && m.mla.has_value();
  if (op == "mlp_gate_up") return dense_mlp && swiglu;
  if (op == "mlp_up") return dense_mlp && !swiglu;
  if (op == "mlp_down") return dense_mlp;
  if (op == "expert_fc1" || op == "expert_fc2") return m.moe.has_value();
  if (op == "shared_fc1" || op == "shared_fc2") return m.moe && m.moe->shared_ffn_hidden > 0;
  if (op == "moe_latent_in" || op == "moe_latent_out") return m.moe && m.moe->latent_size > 0;
  if (op == "mamba_in" || op == "mamba_out") return m.mamba.has_value();
  return false;
}

long moe_token_width(const ModelSpec& m) { return m.moe && m.moe->latent_size > 0 ? m.moe->latent_size : m.hidden; }

bool has_sliding_window(const ModelSpec& m) { return m.sliding_window && m.sliding_window->tokens < m.seq_len; }

long attention_window(const ModelSpec& m, long layer) {
  if (!has_sliding_window(m)) return 0;
  const long every = m.sliding_window->full_every;
  if (every > 0 && layer % every == every - 1) return 0;
  return m.sliding_window->tokens;
}

long attention_head_dim(const ModelSpec& m) {
  if (m.head_dim > 0) return m.head_dim;
  return m.heads > 0 ? m.hidden / m.heads : 0;
}

}  // namespace hetsim
