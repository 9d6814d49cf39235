// File: planner/hybrid/hybrid_plan_file.cpp
// `kind: hybrid` plan files: read strictly (unknown keys and malformed device or layer lists are
// errors), checked by check_hybrid_plan() with each problem placed at its field, and written back.
#include "planner/hybrid/hybrid_plan_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "base/text.hpp"
#include "base/yaml_reader.hpp"

namespace hetsim {

namespace {

constexpr long kMaxDeviceIndex = 1'000'000;  // bounds a range like 0-999999999 before it is expanded

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A non-negative decimal number, nothing else.
std::optional<int> index_from(std::string_view s) {
  s = trimmed(s);
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || s.front() == '-' || s.front() == '+' || ec != std::errc() || p != s.data() + s.size() ||
      v > kMaxDeviceIndex) {
    return std::nullopt;
  }
  return static_cast<int>(v);
}

// "A" or "A-B" as a pair (first, last); first > last is left to the caller.
std::optional<std::pair<int, int>> span_from(std::string_view s) {
  s = trimmed(s);
  const size_t dash = s.find('-', 1);
  if (dash == std::string_view::npos) {
    const std::optional<int> i = index_from(s);
    if (!i) return std::nullopt;
    return std::pair{*i, *i};
  }
  const std::optional<int> a = index_from(s.substr(0, dash));
  const std::optional<int> b = index_from(s.substr(dash + 1));
  if (!a || !b) return std::nullopt;
  return std::pair{*a, *b};
}

// "0-7,16": indices and inclusive ascending ranges, separated by commas (the syntax of --group).
bool append_devices(std::string_view text, std::vector<int>& out) {
  while (true) {
    const size_t comma = text.find(',');
    const std::optional<std::pair<int, int>> span = span_from(text.substr(0, comma));
    if (!span || span->first > span->second) return false;
    for (int d = span->first; d <= span->second; ++d) out.push_back(d);
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

std::optional<YAML::Node> field_node(const YAML::Node& map, std::string_view key) {
  if (!map.IsMap()) return std::nullopt;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.Scalar() == key) return it->second;
  }
  return std::nullopt;
}

// Reads one plan file. FieldReader covers every field with a single shape; `devices` and
// `layers` (a scalar or a list) are read from the YAML nodes directly, so the stage mapping's
// unknown keys are checked here too.
class HybridPlanReader {
 public:
  HybridPlanReader(const std::filesystem::path& path, const ModelSpec& model) : HybridPlanReader(YamlFile::load(path), model) {}
  // (the file read once: a second read could meet another file, unchecked)
  HybridPlanReader(const YamlFile& file, const ModelSpec& model)
      : file_(std::make_shared<const std::string>(file.name())), root_(file.tree()), model_(model) {}

  HybridPlan read() {
    FieldReader r(root_, "", file_, &diags_);
    HybridPlan plan;
    (void)r.choice("kind", {"hybrid"});
    plan.model = r.opt_text("model").value_or("");
    plan.cluster = r.opt_text("cluster").value_or("");
    // No step runs more samples than the model's global batch (the checker compares the sum).
    const long max_samples = std::max(1L, model_.training.global_batch);
    plan.micro_batch = r.opt_integer("micro_batch", 1, max_samples).value_or(1);
    plan.schedule = schedule_from_name(r.opt_choice("schedule", {"gpipe", "1f1b", "interleaved-1f1b", "eager-1f1b",
                                                            "zero-bubble"}).value_or("1f1b"));
    const RecomputeChoice recompute =
        read_recompute(r, model_.training.recompute == Recompute::kFull ? RecomputeMode::kFull : RecomputeMode::kNone);
    plan.recompute = recompute.mode;
    plan.recompute_modules = recompute.modules;
    plan.recompute_layers = recompute.layers;
    plan.activation_offload_layers = read_activation_offload(r, recompute);
    plan.sequence_parallel = r.opt_flag("sequence_parallel").value_or(false);
    const std::string tp_overlap = r.opt_choice("tp_comm_overlap", {"false", "true", "userbuffers"}).value_or("false");
    plan.tp_comm_overlap = tp_overlap != "false";
    plan.tp_comm_userbuffers = tp_overlap == "userbuffers";
    plan.vocab_parallel = r.opt_flag("vocab_parallel").value_or(true);
    plan.grad_sync_overlap = r.opt_flag("grad_sync_overlap").value_or(true);
    plan.overlap_param_gather = r.opt_flag("overlap_param_gather").value_or(false);
    plan.overlap_moe_expert_parallel_comm = r.opt_flag("overlap_moe_expert_parallel_comm").value_or(false);
    plan.moe_dispatcher =
        moe_dispatcher_from_name(r.opt_choice("moe_dispatcher", moe_dispatcher_names()).value_or("alltoall"));
    plan.cp_comm = r.opt_choice("cp_comm", {"ring", "all-to-all"}).value_or("ring") == "all-to-all" ? CpComm::kAllToAll : CpComm::kRing;
    plan.stage_program = r.opt_choice("stage_program", {"megatron", "synthesised"}).value_or("megatron") == "synthesised"
                             ? StageProgram::kSynthesised
                             : StageProgram::kMegatron;
    const std::string sync = r.opt_choice("gradient_sync", {"all-reduce", "zero-1", "zero-3"}).value_or("all-reduce");
    plan.gradient_sync = sync == "zero-1" ? GradientSync::kZero1
                         : sync == "zero-3" ? GradientSync::kZero3
                                            : GradientSync::kAllReduce;
    if (std::optional<FieldReader> rs = r.opt_child("resharding")) {
      plan.resharding.method =
          *method_from_name(rs->opt_choice("method", {"send-recv", "local-all-gather", "broadcast", "signal"}).value_or("local-all-gather"));
      plan.resharding.load_balance =
          *load_balance_from_name(rs->opt_choice("load_balance", {"none", "gpu", "nic", "order"}).value_or("none"));
      plan.resharding.overlap = rs->opt_flag("overlap").value_or(true);
      plan.resharding.seed = static_cast<uint64_t>(rs->opt_integer("seed", 0).value_or(0));
      rs->finish();
    }
    plan.estimate_s = r.opt_number("estimate_s", 0, std::numeric_limits<double>::infinity()).value_or(0);
    for (const char* key : {"model", "cluster", "micro_batch", "schedule", "gradient_sync", "sequence_parallel",
                            "tp_comm_overlap", "overlap_param_gather", "overlap_moe_expert_parallel_comm", "cp_comm",
                            "moe_dispatcher", "pipelines", "activation_offload_layers", "recompute_layers", "recompute_modules"}) {
      remember(r, key);
    }
    std::vector<FieldReader> pipelines = r.list("pipelines");
    const std::optional<YAML::Node> raw_pipelines = field_node(root_, "pipelines");
    for (size_t p = 0; p < pipelines.size(); ++p) {
      plan.pipelines.push_back(read_pipeline(pipelines[p], (*raw_pipelines)[p]));
    }
    r.finish();
    return plan;
  }

  // Places each problem found by check_hybrid_plan() at its field and throws them all.
  void report(const std::vector<PlanProblem>& problems) {
    for (const PlanProblem& problem : problems) {
      const auto it = where_.find(problem.field);
      Diagnostic d = it != where_.end() ? it->second : Diagnostic{*file_, 0, 0, problem.field, ""};
      d.message = problem.message;
      diags_.add(std::move(d));
    }
    diags_.throw_if_any();
  }

  [[nodiscard]] Diagnostics& diagnostics() { return diags_; }

  // Each stage's `node_type` (the cluster node types its devices were planned on; empty where not
  // given), in the order of the file's stages, with where it stands.
  struct StageNodeTypes {
    std::vector<std::string> names;
    Diagnostic where;
  };
  [[nodiscard]] const std::vector<StageNodeTypes>& stage_node_types() const { return stage_node_types_; }
  // `message` at the value of top-level field `key`.
  [[nodiscard]] Diagnostic locate(std::string_view key, std::string message) {
    return FieldReader(root_, "", file_, &diags_).locate(key, std::move(message));
  }

 private:
  void remember(const FieldReader& r, std::string_view key) {
    Diagnostic d = r.locate(key, "");
    where_.emplace(d.field, d);
  }

  PipelinePlan read_pipeline(FieldReader& r, const YAML::Node& raw) {
    PipelinePlan pipeline;
    pipeline.micro_batches = r.integer("micro_batches", 1, std::max(1L, model_.training.global_batch));
    remember(r, "micro_batches");
    remember(r, "stages");
    std::vector<FieldReader> stages = r.list("stages");
    const std::optional<YAML::Node> raw_stages = field_node(raw, "stages");
    for (size_t s = 0; s < stages.size(); ++s) pipeline.stages.push_back(read_stage(stages[s], (*raw_stages)[s]));
    r.finish();
    return pipeline;
  }

  StagePlan read_stage(FieldReader& r, const YAML::Node& raw) {
    StagePlan stage;
    for (const char* key : {"devices", "tp", "cp", "ep", "expert_tp", "layers"}) remember(r, key);
    if (const std::optional<YAML::Node> n = required(r, raw, "devices")) read_devices(r, *n, stage.devices);
    stage.tp = static_cast<int>(r.opt_integer("tp", 1, std::numeric_limits<int>::max()).value_or(1));
    stage.cp = static_cast<int>(r.opt_integer("cp", 1, kMaxDeviceIndex).value_or(1));
    stage.ep = static_cast<int>(r.opt_integer("ep", 1, kMaxDeviceIndex).value_or(1));
    stage.expert_tp = static_cast<int>(r.opt_integer("expert_tp", 1, kMaxDeviceIndex).value_or(1));
    if (const std::optional<YAML::Node> n = required(r, raw, "layers")) read_layers(r, *n, stage.chunks);
    StageNodeTypes types{{}, r.locate("node_type", "")};  // one node type's name, or a list of them
    if (const std::optional<YAML::Node> n = r.opt_node("node_type")) {
      types.names = n->IsSequence() ? r.names("node_type") : std::vector<std::string>{r.name("node_type")};
    }
    stage_node_types_.push_back(std::move(types));
    unknown_keys(r, raw, {"devices", "layers", "tp", "cp", "ep", "expert_tp", "node_type"});
    return stage;
  }

  // The value of a required field of a stage, reported as FieldReader reports its own fields.
  std::optional<YAML::Node> required(const FieldReader& r, const YAML::Node& raw, std::string_view key) {
    if (!raw.IsMap()) return std::nullopt;  // FieldReader reported the stage itself
    const std::optional<YAML::Node> n = field_node(raw, key);
    if (!n || n->IsNull()) {
      diags_.add(r.locate(key, n ? "has no value" : "missing required field"));
      return std::nullopt;
    }
    return n;
  }

  void read_devices(const FieldReader& r, const YAML::Node& n, std::vector<int>& out) {
    const auto bad = [&](const std::string& text) {
      diags_.add(r.locate("devices", in_quotes(text) + " is not a GPU index or range (write e.g. 0-7,16)"));
    };
    if (n.IsScalar()) {
      if (!append_devices(n.Scalar(), out)) bad(n.Scalar());
    } else if (n.IsSequence()) {
      for (const YAML::Node& item : n) {
        if (!item.IsScalar() || !append_devices(item.Scalar(), out)) bad(item.IsScalar() ? item.Scalar() : "");
      }
    } else {
      diags_.add(r.locate("devices", "expected GPU indices and ranges (write e.g. 0-7,16)"));
    }
  }

  void read_layers(const FieldReader& r, const YAML::Node& n, std::vector<LayerRange>& out) {
    const auto one = [&](const YAML::Node& item) {
      if (item.IsScalar() && (item.Scalar() == "embedding" || item.Scalar() == "loss")) {
        out.push_back(item.Scalar() == "embedding" ? LayerRange::embedding() : LayerRange::loss());
        return;
      }
      const std::optional<std::pair<int, int>> span =
          item.IsScalar() ? span_from(item.Scalar()) : std::nullopt;
      if (span) {
        out.push_back({span->first, span->second});
      } else {
        diags_.add(r.locate("layers", in_quotes(item.IsScalar() ? item.Scalar() : "") +
                                          " is not a layer range (write e.g. 0-3, [0-3, 16-19], or "
                                          "embedding / loss for a chunk of its own)"));
      }
    };
    if (n.IsSequence()) {
      for (const YAML::Node& item : n) one(item);
    } else {
      one(n);
    }
  }

  void unknown_keys(const FieldReader& r, const YAML::Node& raw, const std::vector<std::string>& known) {
    if (!raw.IsMap()) return;
    for (auto it = raw.begin(); it != raw.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      const YAML::Mark m = it->first.Mark();
      const bool located = !m.is_null() && m.line >= 0;
      diags_.add(Diagnostic{*file_, located ? m.line + 1 : 0, located ? m.column + 1 : 0, r.path(),
                            "unknown key " + in_quotes(key) + did_you_mean(key, known)});
    }
  }

  std::shared_ptr<const std::string> file_;
  YAML::Node root_;
  const ModelSpec& model_;
  Diagnostics diags_;
  std::vector<StageNodeTypes> stage_node_types_;
  std::map<std::string, Diagnostic> where_;  // field path -> where it is (or would be) in the file
};

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string layers_text(const std::vector<LayerRange>& chunks) {
  std::string out = "[";
  for (size_t c = 0; c < chunks.size(); ++c) {
    const LayerRange& r = chunks[c];
    if (c > 0) out += ", ";
    if (!r.layers()) {
      out += r.part == ChunkPart::kEmbedding ? "embedding" : "loss";
      continue;
    }
    out += std::to_string(r.first);
    if (r.last != r.first) out.append("-").append(std::to_string(r.last));
  }
  return out + "]";
}

}  // namespace

std::string plan_file_kind(const std::filesystem::path& path) {
  const YamlFile file = YamlFile::load(path);
  Diagnostics ignored;  // only `kind` is looked at: the plan's own reader reports the rest
  FieldReader r = file.root(ignored);
  const std::string kind = r.opt_text("kind").value_or("spmd");
  if (kind != "spmd" && kind != "hybrid") throw InputError({r.locate("kind", in_quotes(kind) + " is not one of: spmd, hybrid")});
  return kind;
}

HybridPlan load_hybrid_plan(const std::filesystem::path& path, const ModelSpec& model, const Cluster& cluster) {
  HybridPlanReader reader(path, model);
  HybridPlan plan = reader.read();
  reader.diagnostics().throw_if_any();  // syntax first: the rules need whole values
  // A plan written for another model or cluster (names as --emit-plan writes them) is refused.
  std::vector<Diagnostic> other;
  if (!plan.model.empty() && plan.model != model.name) {
    other.push_back(reader.locate("model", "this plan is for " + in_quotes(plan.model) + ", not for the model of this run, " + in_quotes(model.name)));
  }
  if (!plan.cluster.empty() && plan.cluster != cluster.name) {
    other.push_back(reader.locate("cluster", "this plan is for " + in_quotes(plan.cluster) + ", not for the cluster of this run, " + in_quotes(cluster.name)));
  }
  // A stage planned on node types the cluster no longer has at its devices' numbers (a node added or
  // removed before them renumbers the GPUs after) is refused: it would run on other GPUs, silently.
  // A node type's GPU swapped for another (an upgrade held to its plan) keeps its numbers and name.
  // The first such stage is said (a renumbering moves every stage after it alike).
  size_t k = 0;
  for (const PipelinePlan& p : plan.pipelines) {
    for (const StagePlan& st : p.stages) {
      const HybridPlanReader::StageNodeTypes& planned = reader.stage_node_types().at(k++);
      if (planned.names.empty() || !other.empty()) continue;
      for (int d : st.devices) {
        if (d < 0 || d >= cluster.gpu_count()) continue;  // (check_hybrid_plan says so)
        const std::string& here = cluster.node_type_of_gpu(d).name;
        if (std::find(planned.names.begin(), planned.names.end(), here) != planned.names.end()) continue;
        Diagnostic diag = planned.where;
        diag.message = "this stage was planned on the GPUs of node type " + join(planned.names) + "; GPU " + std::to_string(d) +
                       " of this cluster is on a node of type " + in_quotes(here) +
                       " (adding or removing nodes renumbers the GPUs after them: plan again for this cluster)";
        other.push_back(std::move(diag));
        break;
      }
    }
  }
  if (!other.empty()) throw InputError(other);
  reader.report(check_hybrid_plan(plan, model, cluster));
  return plan;
}

int read_activation_offload(FieldReader& r, const RecomputeChoice& recompute) {
  const std::optional<long> n = r.opt_integer("activation_offload_layers", 0, 1L << 20);
  if (!n || *n == 0) return 0;
  if (recompute.mode != RecomputeMode::kNone) {
    r.error("activation_offload_layers", "offloads the activations of the first layers to host memory; Megatron-Core refuses it "
                                         "beside recompute (here " + std::string(recompute_name(recompute.mode)) + "): recompute: none");
  }
  return static_cast<int>(*n);
}

RecomputeChoice read_recompute(FieldReader& r, RecomputeMode absent) {
  RecomputeChoice out;
  const std::optional<std::string> mode = r.opt_choice("recompute", {"none", "selective", "full"});
  out.mode = !mode                 ? absent
             : *mode == "full"      ? RecomputeMode::kFull
             : *mode == "selective" ? RecomputeMode::kSelective
                                    : RecomputeMode::kNone;
  if (const std::optional<long> n = r.opt_integer("recompute_layers", 1, 1L << 20)) {
    out.layers = static_cast<int>(*n);
    if (out.mode != RecomputeMode::kFull) {
      r.error("recompute_layers", "counts the layers of each model chunk recomputed whole; it needs recompute: full, not " +
                                      std::string(recompute_name(out.mode)));
    }
  }
  if (!r.opt_node("recompute_modules")) return out;
  if (mode && out.mode != RecomputeMode::kSelective) {
    r.error("recompute_modules", "names the modules of selective recompute; recompute is " + *mode +
                                     " (use recompute: selective, or leave recompute out)");
  }
  out.mode = RecomputeMode::kSelective;
  out.modules = 0;
  const std::vector<std::string>& known = recompute_module_names();
  for (const std::string& name : r.names("recompute_modules")) {
    const auto it = std::find(known.begin(), known.end(), name);
    if (it == known.end()) {
      r.error("recompute_modules", "\"" + name + "\" is not a module; expected some of " + recompute_modules_text(~0u));
      continue;
    }
    const unsigned bit = 1u << static_cast<unsigned>(it - known.begin());
    if ((out.modules & bit) != 0) r.error("recompute_modules", "\"" + name + "\" is listed twice");
    out.modules |= bit;
  }
  if (out.modules == 0) out.modules = kDefaultRecomputeModules;  // (only after an error, said above)
  return out;
}

std::string hybrid_plan_to_yaml(const HybridPlan& plan, const Cluster* cluster) {
  std::ostringstream out;
  out << "# hetsim hybrid plan: " << plan.model << " on " << plan.cluster << "\n"
      << "# shape: " << plan.shape() << "\n"
      << "kind: hybrid\n";
  if (!plan.model.empty()) out << "model: " << plan.model << "\n";
  if (!plan.cluster.empty()) out << "cluster: " << plan.cluster << "\n";
  out << "micro_batch: " << plan.micro_batch << "\n"
      << "schedule: " << schedule_name(plan.schedule) << "\n"
      << "recompute: " << recompute_name(plan.recompute) << "\n";
  if (plan.recompute == RecomputeMode::kSelective && plan.recompute_modules != kDefaultRecomputeModules) {
    out << "recompute_modules: [" << recompute_modules_text(plan.recompute_modules) << "]\n";
  }
  if (plan.recompute == RecomputeMode::kFull && plan.recompute_layers > 0) out << "recompute_layers: " << plan.recompute_layers << "\n";
  if (plan.activation_offload_layers > 0) out << "activation_offload_layers: " << plan.activation_offload_layers << "\n";
  out << "sequence_parallel: " << (plan.sequence_parallel ? "true" : "false") << "\n"
      << "tp_comm_overlap: " << (plan.tp_comm_userbuffers ? "userbuffers" : plan.tp_comm_overlap ? "true" : "false") << "\n"
      << "vocab_parallel: " << (plan.vocab_parallel ? "true" : "false") << "\n"
      << "stage_program: " << stage_program_name(plan.stage_program) << "\n"
      << "gradient_sync: " << gradient_sync_name(plan.gradient_sync) << "\n"
      << "grad_sync_overlap: " << (plan.grad_sync_overlap ? "true" : "false") << "\n"
      << "overlap_param_gather: " << (plan.overlap_param_gather ? "true" : "false") << "\n"
      << "overlap_moe_expert_parallel_comm: " << (plan.overlap_moe_expert_parallel_comm ? "true" : "false") << "\n"
      << "cp_comm: " << cp_comm_name(plan.cp_comm) << "\n";
  if (plan.moe_dispatcher != MoeDispatcher::kAllToAll) out << "moe_dispatcher: " << moe_dispatcher_name(plan.moe_dispatcher) << "\n";
  out << "resharding: {method: " << method_name(plan.resharding.method)
      << ", load_balance: " << load_balance_name(plan.resharding.load_balance)
      << ", overlap: " << (plan.resharding.overlap ? "true" : "false") << ", seed: " << plan.resharding.seed << "}\n"
      << "estimate_s: " << exact(plan.estimate_s) << "\n"
      << "pipelines:\n";
  for (const PipelinePlan& p : plan.pipelines) {
    out << "  - micro_batches: " << p.micro_batches << "\n"
        << "    stages:\n";
    for (const StagePlan& st : p.stages) {
      out << "      - devices: " << (st.devices.empty() ? "[]" : format_devices(st.devices)) << "\n"
          << "        tp: " << st.tp << "\n";
      if (st.cp != 1) out << "        cp: " << st.cp << "\n";
      if (st.ep != 1) out << "        ep: " << st.ep << "\n";
      if (st.expert_tp != 1) out << "        expert_tp: " << st.expert_tp << "\n";
      if (cluster != nullptr) {
        std::vector<std::string> types;  // its devices' node types, in their order
        for (int d : st.devices) {
          if (d < 0 || d >= cluster->gpu_count()) continue;
          const std::string& t = cluster->node_type_of_gpu(d).name;
          if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
        }
        if (types.size() == 1) out << "        node_type: " << types.front() << "\n";
        if (types.size() > 1) out << "        node_type: [" << join(types) << "]\n";
      }
      out
          << "        layers: " << layers_text(st.chunks) << "\n";
    }
  }
  return out.str();
}

}  // namespace hetsim
