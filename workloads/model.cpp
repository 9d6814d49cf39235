// File: workloads/model.cpp
#include "workloads/model.hpp"

#include "base/yaml_reader.hpp"

namespace hetsim {

std::string_view family_name(Family f) {
  switch (f) {
    case Family::kGpt: return "gpt";
    case Family::kLlama: return "llama";
    case Family::kBert: return "bert";
    case Family::kVit: return "vit";
    case Family::kVgg: return "vgg";
    case Family::kMoe: return "moe";
  }
  return "?";
}

namespace {

Family family_from(const std::string& s) {
  if (s == "llama") return Family::kLlama;
  if (s == "bert") return Family::kBert;
  if (s == "vit") return Family::kVit;
  if (s == "vgg") return Family::kVgg;
  if (s == "moe") return Family::kMoe;
  return Family::kGpt;
}

void read_transformer(FieldReader& r, ModelSpec& m, bool tokens) {
  m.layers = r.integer("layers", 1, 1000);
  m.hidden = r.integer("hidden", 1);
  m.heads = r.integer("heads", 1);
  m.kv_heads = r.opt_integer("kv_heads", 1).value_or(m.heads);
  m.ffn_hidden = r.integer("ffn_hidden", 1);
  if (tokens) {
    m.seq_len = r.integer("seq_len", 1);
    m.vocab = r.integer("vocab", 1);
  }
}

TrainingSpec read_training(FieldReader r) {
  const size_t problems_before = r.diagnostics().size();
  TrainingSpec t;
  t.global_batch = r.integer("global_batch", 1);
  t.micro_batch = r.integer("micro_batch", 1);
  t.dtype = dtype_from_name(r.choice("dtype", {"fp32", "tf32", "fp16", "bf16", "fp8"})).value_or(DType::kFp16);
  if (auto fb = r.opt_choice("dtype_fallback", {"fp32", "tf32", "fp16", "bf16", "fp8"})) t.dtype_fallback = dtype_from_name(*fb);
  t.optimizer = r.opt_choice("optimizer", {"adam", "sgd"}).value_or("adam") == "sgd" ? Optimizer::kSgd
                                                                                     : Optimizer::kAdam;
  t.recompute = r.opt_choice("recompute", {"none", "full"}).value_or("none") == "full" ? Recompute::kFull
                                                                                      : Recompute::kNone;
  t.flash_attention = r.opt_choice("attention", {"standard", "flash"}).value_or("standard") == "flash";
  r.finish();
  if (r.diagnostics().size() != problems_before) return t;  // cross-field checks only on well-formed fields
  if (t.micro_batch > t.global_batch) {
    r.error("micro_batch", std::to_string(t.micro_batch) + " is larger than global_batch " +
                               std::to_string(t.global_batch));
  }
  if (t.dtype_fallback && *t.dtype_fallback == t.dtype) {
    r.error("dtype_fallback", "is the same as dtype; a fallback must be a different format");
  }
  return t;
}

}  // namespace

void resolve_experts(ModelSpec& m, int devices) {
  if (m.family == Family::kMoe) m.experts = m.experts_per_device * devices;
}

ModelSpec load_model(const std::filesystem::path& path) {
  const YamlFile file = YamlFile::load(path);
  Diagnostics diags;
  FieldReader r = file.root(diags);
  ModelSpec m;
  m.file = file.name();
  m.name = r.text("name");
  m.family = family_from(r.choice("family", {"gpt", "llama", "bert", "vit", "vgg", "moe"}));
  switch (m.family) {
    case Family::kGpt:
    case Family::kLlama:
    case Family::kBert: read_transformer(r, m, true); break;
    case Family::kMoe: {
      read_transformer(r, m, true);
      FieldReader moe = r.child("moe");
      m.experts_per_device = moe.integer("experts_per_device", 1, 64);
      m.moe_every = moe.integer("every", 1, 1000);
      m.top_k = moe.integer("top_k", 1, 8);
      m.capacity_factor = moe.number("capacity_factor", 0.1, 16);
      moe.finish();
      break;
    }
    case Family::kVit:
      read_transformer(r, m, false);
      m.image_size = r.integer("image_size", 1);
      m.patch_size = r.integer("patch_size", 1);
      m.channels = r.integer("channels", 1);
      m.classes = r.integer("classes", 1);
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
      m.image_size = r.integer("image_size", 32);
      m.channels = r.integer("channels", 1);
      m.classes = r.integer("classes", 1);
      m.seq_len = 1;  // one sample = one image
      m.layers = m.depth;
      m.hidden = 4096;  // classifier width
      m.heads = 1;
      m.kv_heads = 1;
      m.ffn_hidden = 4096;
      m.vocab = m.classes;
      break;
  }
  m.tied_embeddings = r.opt_flag("tied_embeddings").value_or(m.family != Family::kLlama);
  if (m.family == Family::kMoe) m.experts = m.experts_per_device;  // until resolve_experts() knows the cluster
  FieldReader training = r.child("training");
  m.dtype_location = training.locate("dtype", "");
  m.training = read_training(training);
  const bool shapes_read = diags.empty();
  if (shapes_read && m.heads > 0 && m.hidden % m.heads != 0) {
    r.error("heads", "hidden " + std::to_string(m.hidden) + " is not divisible by heads " + std::to_string(m.heads));
  }
  if (shapes_read && m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    r.error("kv_heads", "heads " + std::to_string(m.heads) + " is not divisible by kv_heads " +
                            std::to_string(m.kv_heads));
  }
  r.finish();
  diags.throw_if_any();
  return m;
}

}  // namespace hetsim
