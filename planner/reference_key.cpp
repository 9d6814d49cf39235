// File: planner/reference_key.cpp
#include "planner/reference_key.hpp"

#include <algorithm>
#include <cstdio>

#include "base/data_dir.hpp"
#include "base/digest.hpp"

namespace hetsim {

namespace {

// Each struct written here is written whole. A field added to one of them must be added here
// too (or said to change nothing computed): these sizes fail the build until it is.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(Efficiency) == 120, "Efficiency changed: update reference_key");
static_assert(sizeof(GemmModel) == 64, "GemmModel changed: update reference_key");
static_assert(sizeof(FittedCosts) == 104, "FittedCosts changed: update reference_key");
static_assert(sizeof(Device) == 872, "Device changed: update reference_key");
static_assert(sizeof(IntraNodeSpec) == 136, "IntraNodeSpec changed: update reference_key");
static_assert(sizeof(NicSpec) == 72, "NicSpec changed: update reference_key");
static_assert(sizeof(Degradation) == 24, "Degradation changed: update reference_key");
static_assert(sizeof(NodeType) == 1176, "NodeType changed: update reference_key");
static_assert(sizeof(NetworkSpec) == 144, "NetworkSpec changed: update reference_key");
static_assert(sizeof(Cluster) == 328, "Cluster changed: update reference_key");
static_assert(sizeof(MoeSpec) == 104, "MoeSpec changed: update reference_key");
static_assert(sizeof(MlaSpec) == 48, "MlaSpec changed: update reference_key");
static_assert(sizeof(TrainingSpec) == 112, "TrainingSpec changed: update reference_key");
static_assert(sizeof(SlidingWindowSpec) == 16, "SlidingWindowSpec changed: update reference_key");
static_assert(sizeof(MambaSpec) == 48, "MambaSpec changed: update reference_key");
static_assert(sizeof(ModelSpec) == 1056, "ModelSpec changed: update reference_key");
static_assert(sizeof(SimOptions) == 40, "SimOptions changed: update reference_key");
static_assert(sizeof(LayerProfileRow) == 224, "LayerProfileRow changed: update reference_key");  // (times.file, .line: where, not what)
static_assert(sizeof(NetworkGraph::Link) == 56, "NetworkGraph::Link changed: update reference_key");
#endif

class Text {
 public:
  void put(const char* name, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", v);  // exact
    line(name, buf);
  }
  void put(const char* name, long v) { line(name, std::to_string(v)); }
  void put(const char* name, int v) { line(name, std::to_string(v)); }
  void put(const char* name, size_t v) { line(name, std::to_string(v)); }
  void put(const char* name, bool v) { line(name, v ? "true" : "false"); }
  void put(const char* name, const std::string& v) { line(name, std::to_string(v.size()) + ":" + v); }
  template <class E>
    requires std::is_enum_v<E>
  void put(const char* name, E v) {
    put(name, static_cast<long>(v));
  }
  template <class T>
  void put(const char* name, const std::optional<T>& v) {
    if (v) {
      put(name, *v);
    } else {
      line(name, "absent");
    }
  }
  void section(const std::string& name) { out_ += "[" + name + "]\n"; }
  [[nodiscard]] std::string take() { return std::move(out_); }

 private:
  void line(const char* name, const std::string& value) {
    out_ += name;
    out_ += '=';
    out_ += value;
    out_ += '\n';
  }
  std::string out_;
};

void put_device(Text& t, const Device& d) {
  t.section("gpu");
  t.put("name", d.name);
  t.put("vendor", d.vendor);
  t.put("memory_bytes", d.memory_bytes);
  t.put("memory_bandwidth_Bps", d.memory_bandwidth_Bps);
  t.put("pcie_bandwidth_Bps", d.pcie_bandwidth_Bps);
  t.put("host_link.to_host_Bps", d.host_link.to_host_Bps);
  t.put("host_link.from_host_Bps", d.host_link.from_host_Bps);
  t.put("host_link.memory_bytes", d.host_link.memory_bytes);
  for (const auto& [dtype, flops] : d.peak_flops) t.put(("peak." + std::to_string(static_cast<int>(dtype))).c_str(), flops);
  t.put("collective_library", d.collective_library);
  t.put("efficiency.matmul", d.efficiency.matmul);
  t.put("efficiency.matmul_fp32", d.efficiency.matmul_fp32);
  for (const auto& [dtype, share] : d.efficiency.matmul_per_dtype) {
    t.put(("efficiency.matmul_per_dtype." + std::to_string(static_cast<int>(dtype))).c_str(), share);
  }
  t.put("efficiency.vector", d.efficiency.vector);
  t.put("efficiency.memory", d.efficiency.memory);
  t.put("efficiency.kernel_launch_s", d.efficiency.kernel_launch_s);
  t.put("gemm.compute_units", d.gemm.compute_units);
  t.put("gemm.tile_m", d.gemm.tile_m);
  t.put("gemm.tile_n", d.gemm.tile_n);
  t.put("gemm.k_half", d.gemm.k_half);
  t.put("gemm.reference", std::to_string(d.gemm.reference.batch) + "x" + std::to_string(d.gemm.reference.m) + "x" +
                              std::to_string(d.gemm.reference.n) + "x" + std::to_string(d.gemm.reference.k));
  t.put("flash_attention", d.flash_attention);
  t.put("fp8_any_layout", d.fp8_any_layout);
  t.put("kernels_from", d.kernels_from);
  for (const auto& [dtype, rate] : d.donor_matmul_rate) t.put(("donor_matmul_rate." + std::to_string(static_cast<int>(dtype))).c_str(), rate);
  t.put("donor_memory_rate", d.donor_memory_rate);
  t.put("donor_kernel_launch_s", d.donor_kernel_launch_s);
  t.put("slowdown", d.slowdown);
  t.put("collective_interference", d.collective_interference);
  t.put("fitted.moe_layer_s", d.fitted.moe_layer_s);
  t.put("fitted.expert_gemm_s", d.fitted.expert_gemm_s);
  t.put("fitted.gemm_time_excess", d.fitted.gemm_time_excess);
  t.put("fitted.fp32_gemm_time_excess", d.fitted.fp32_gemm_time_excess);
  t.put("fitted.block_scaled_gemm_time_excess", d.fitted.block_scaled_gemm_time_excess);
  t.put("fitted.memory_bound_time_excess", d.fitted.memory_bound_time_excess);
  t.put("fitted.ssm_scan_time_excess", d.fitted.ssm_scan_time_excess);
  t.put("fitted.overlap_slowdown", d.fitted.overlap_slowdown);
  t.put("fitted.nic_time_excess", d.fitted.nic_time_excess);
  t.put("fitted.intra_time_excess", d.fitted.intra_time_excess);
  t.put("fitted.pass_host_s", d.fitted.pass_host_s);
  t.put("fitted.collective_latency_s", d.fitted.collective_latency_s);
  t.put("fitted.kernel_overhead_s", d.fitted.kernel_overhead_s);
  t.put("calibration", d.calibration);
  // Sources (source, gemm_source, ...) and `file` only say where figures came from.
}

void put_degradation(Text& t, const std::string& prefix, const Degradation& d) {
  t.put((prefix + ".compute_slowdown").c_str(), d.compute_slowdown);
  t.put((prefix + ".nic_bandwidth").c_str(), d.nic_bandwidth);
  t.put((prefix + ".intra_node_bandwidth").c_str(), d.intra_node_bandwidth);
}

// What routes through a graph network depend on: its switches, its links, and the switch each
// NIC of the cluster's nodes plugs into (ECMP picks among equal paths by the graph alone).
std::string graph_text(const NetworkGraph& g, const Cluster& c) {
  Text t;
  t.put("switches", g.switches().size());
  for (const NetworkGraph::Link& l : g.links()) {
    t.put("link.from", l.from);
    t.put("link.to", l.to);
    t.put("link.bandwidth_Bps", l.bandwidth_Bps);
    t.put("link.latency_s", l.latency_s);
  }
  for (int node = 0; node < c.node_count(); ++node) {
    const int nics = c.node_types[static_cast<size_t>(c.node_type_of[static_cast<size_t>(node)])].nic.count;
    for (int nic = 0; nic < nics; ++nic) t.put("attached", g.attached(c.network.graph_nodes[static_cast<size_t>(node)], nic));
  }
  return t.take();
}

void put_cluster(Text& t, const Cluster& c) {
  for (const NodeType& n : c.node_types) {
    t.section("node type");
    t.put("name", n.name);  // it names the reference's notes
    t.put("count", n.count);
    t.put("gpus_per_node", n.gpus_per_node);
    t.put("nvlink_domain", n.nvlink_domain);
    t.put("intra.fabric", n.intra.fabric);
    t.put("intra.bandwidth_Bps", n.intra.bandwidth_Bps);
    t.put("intra.latency_s", n.intra.latency_s);
    t.put("intra.links", n.intra.links);
    t.put("intra.uplink_bandwidth_Bps", n.intra.uplink_bandwidth_Bps);
    t.put("intra.achievable", n.intra.achievable);
    t.put("intra.switch_reduction_Bps", n.intra.switch_reduction_Bps);
    t.put("nic.count", n.nic.count);
    t.put("nic.bandwidth_Bps", n.nic.bandwidth_Bps);
    t.put("nic.latency_s", n.nic.latency_s);
    t.put("nic.achievable", n.nic.achievable);
    put_degradation(t, "degraded", n.degraded);
    for (const auto& [node, d] : n.degraded_nodes) put_degradation(t, "degraded_node." + std::to_string(node), d);
    put_device(t, n.gpu);
  }
  const NetworkSpec& net = c.network;
  t.section("network");
  t.put("topology", net.topology);
  t.put("oversubscription", net.oversubscription);
  t.put("nodes_per_leaf", net.nodes_per_leaf);
  t.put("leaves_per_pod", net.leaves_per_pod);
  for (double x : net.tier_oversubscription) t.put("tier_oversubscription", x);
  t.put("planes", net.planes);
  t.put("graph", net.graph ? digest(graph_text(*net.graph, c)) : std::string("none"));
  t.put("switch_latency_s", net.switch_latency_s);
  t.put("cross_vendor_rdma", net.cross_vendor_rdma);
}

void put_model(Text& t, const ModelSpec& m) {
  t.section("model");
  t.put("name", m.name);  // the calibration's and the layer profile's rows name it
  t.put("family", m.family);
  t.put("layers", m.layers);
  t.put("hidden", m.hidden);
  t.put("heads", m.heads);
  t.put("kv_heads", m.kv_heads);
  t.put("head_dim", m.head_dim);
  t.put("ffn_hidden", m.ffn_hidden);
  t.put("seq_len", m.seq_len);
  t.put("vocab", m.vocab);
  t.put("tied_embeddings", m.tied_embeddings);
  t.put("image_size", m.image_size);
  t.put("patch_size", m.patch_size);
  t.put("channels", m.channels);
  t.put("classes", m.classes);
  t.put("depth", m.depth);
  t.put("moe", m.moe.has_value());
  if (m.moe) {
    t.put("moe.experts", m.moe->experts);
    t.put("moe.top_k", m.moe->top_k);
    t.put("moe.expert_ffn_hidden", m.moe->expert_ffn_hidden);
    t.put("moe.shared_experts", m.moe->shared_experts);
    t.put("moe.shared_ffn_hidden", m.moe->shared_ffn_hidden);
    t.put("moe.first_dense_layers", m.moe->first_dense_layers);
    t.put("moe.every", m.moe->every);
    t.put("moe.capacity_factor", m.moe->capacity_factor);
    t.put("moe.router_imbalance", m.moe->router_imbalance);
    // Only where stated: the keys of models without them stay as they were.
    if (m.moe->expert_bias) t.put("moe.expert_bias", m.moe->expert_bias);
    if (m.moe->glu_clamp > 0) t.put("moe.glu_clamp", m.moe->glu_clamp);
    if (m.moe->latent_size > 0) t.put("moe.latent_size", m.moe->latent_size);
  }
  t.put("mla", m.mla.has_value());
  if (m.mla) {
    t.put("mla.q_lora_rank", m.mla->q_lora_rank);
    t.put("mla.kv_lora_rank", m.mla->kv_lora_rank);
    t.put("mla.qk_nope_head_dim", m.mla->qk_nope_head_dim);
    t.put("mla.qk_rope_head_dim", m.mla->qk_rope_head_dim);
    t.put("mla.v_head_dim", m.mla->v_head_dim);
  }
  if (m.mtp_layers > 0) t.put("mtp_layers", m.mtp_layers);  // (only where stated, as below)
  if (!m.mtp_pattern.empty()) t.put("mtp_pattern", m.mtp_pattern);
  if (m.mtp_shared) t.put("mtp_shared", m.mtp_shared);
  if (m.sliding_window) {  // only where stated: the keys of models without one stay as they were
    t.put("sliding_window.tokens", m.sliding_window->tokens);
    t.put("sliding_window.full_every", m.sliding_window->full_every);
  }
  if (!m.hybrid_pattern.empty()) t.put("hybrid_pattern", m.hybrid_pattern);  // (only where stated, as above)
  if (m.mamba) {
    t.put("mamba.heads", m.mamba->heads);
    t.put("mamba.head_dim", m.mamba->head_dim);
    t.put("mamba.groups", m.mamba->groups);
    t.put("mamba.state_dim", m.mamba->state_dim);
    t.put("mamba.conv_kernel", m.mamba->conv_kernel);
    t.put("mamba.chunk_size", m.mamba->chunk_size);
  }
  // Only where stated (the keys of models that do not state it stay as they were).
  if (m.mlp_activation) t.put("mlp_activation", std::string(mlp_activation_name(*m.mlp_activation)));
  t.put("experts_per_device", m.experts_per_device);
  t.put("moe_every", m.moe_every);
  t.put("top_k", m.top_k);
  t.put("capacity_factor", m.capacity_factor);
  t.put("experts", m.experts);
  t.put("unet_variant", m.unet_variant);
  t.put("base_channels", m.base_channels);
  for (long x : m.channel_mult) t.put("channel_mult", x);
  t.put("layers_per_block", m.layers_per_block);
  t.put("out_channels", m.out_channels);
  t.put("context_len", m.context_len);
  t.put("context_dim", m.context_dim);
  const TrainingSpec& tr = m.training;
  t.put("training.global_batch", tr.global_batch);
  t.put("training.micro_batch", tr.micro_batch);
  t.put("training.dtype", tr.dtype);
  t.put("training.dtype_fallback", tr.dtype_fallback);
  t.put("training.optimizer", tr.optimizer);
  t.put("training.recompute", tr.recompute);
  t.put("training.attention", tr.attention);
  t.put("training.dropout", tr.dropout);
  t.put("training.masked_positions", tr.masked_positions);
  t.put("training.fp32_grads", tr.fp32_grads);
  t.put("training.gemm_precision", tr.gemm_precision);
  t.put("training.fp8_param_gather", tr.fp8_param_gather);
  t.put("training.kernels", tr.kernels);
  if (tr.mtp_in_dtype) t.put("training.mtp_in_dtype", tr.mtp_in_dtype);  // (only where stated, as the next)
  if (tr.dtype_layers_first + tr.dtype_layers_last > 0) {
    t.put("training.dtype_layers.first", tr.dtype_layers_first);
    t.put("training.dtype_layers.last", tr.dtype_layers_last);
  }
  for (const auto& [op, p] : tr.gemm_precision_by_op) t.put("training.gemm_precision_by_op", op + "=" + std::string(gemm_precision_name(p)));
}

// The bytes of every data file the cost model and the devices read (kernel tables, published
// attention ratios, interference measurements, calibration profiles, device files): their digest.
const std::string& data_digest() {
  static const std::string d = [] {
    const std::filesystem::path root = data_root() / "kernels_profile";
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec); !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec)) {
      const std::string ext = it->path().extension().string();
      if (it->is_regular_file(ec) && (ext == ".csv" || ext == ".yaml" || ext == ".json")) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    std::string all;
    for (const auto& f : files) all += f.lexically_relative(root).string() + "\n" + digest(slurp(f)) + "\n";
    return digest(all);
  }();
  return d;
}

}  // namespace

std::string reference_key(const Cluster& homogeneous, const ModelSpec& model, long batch, const CostModel& cost,
                          const SimOptions& sim, const std::string& references) {
  Text t;
  t.section("reference");
  t.put("references", references);
  t.put("batch", batch);
  put_cluster(t, homogeneous);
  put_model(t, model);
  t.section("costs");
  t.put("kernel_tables", cost.tables() != nullptr);
  t.put("data", data_digest());
  t.put("layer_profile", cost.layer_profiles() != nullptr);
  if (cost.layer_profiles() != nullptr) {
    Text rows;  // every row as read (its source and line say only where it came from)
    for (const LayerProfileRow& r : cost.layer_profiles()->rows()) {
      rows.put("model", r.model);
      rows.put("device", r.device);
      rows.put("layer", r.layer);
      rows.put("micro_batch", r.micro_batch);
      rows.put("tp", r.tp);
      rows.put("fwd_s", r.times.fwd_s);
      rows.put("bwd_s", r.times.bwd_s);
      rows.put("optimizer_s", r.times.optimizer_s);
      rows.put("interpolated", r.times.interpolated);
    }
    t.put("layer_profile.rows", digest(rows.take()));
  }
  t.section("simulation");
  t.put("fidelity", sim.fidelity);
  t.put("collective_interference", sim.collective_interference);
  t.put("record_flows", sim.record_flows);
  t.put("every_step", sim.every_step);
  t.put("every_collective", sim.every_collective);
  t.put("every_replica", sim.every_replica);
  t.put("actor_budget", sim.actor_budget);
  t.put("relays_from_flows", sim.relays_from_flows);
  t.put("served_tasks", sim.served_tasks);
  return t.take();
}

}  // namespace hetsim
