// File: workloads/model.cpp
#include "workloads/model.hpp"

#include "base/yaml_reader.hpp"

namespace hetsim {

std::string_view family_name(Family f) {
  switch (f) {
    case Family::kGpt: return "gpt";
    case Family::kLlama: return "llama";
    case Family::kBert: return "bert";
  }
  return "?";
}

namespace {

Family family_from(const std::string& s) {
  if (s == "llama") return Family::kLlama;
  if (s == "bert") return Family::kBert;
  return Family::kGpt;
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

ModelSpec load_model(const std::filesystem::path& path) {
  const YamlFile file = YamlFile::load(path);
  Diagnostics diags;
  FieldReader r = file.root(diags);
  ModelSpec m;
  m.file = file.name();
  m.name = r.text("name");
  m.family = family_from(r.choice("family", {"gpt", "llama", "bert"}));
  m.layers = r.integer("layers", 1, 1000);
  m.hidden = r.integer("hidden", 1);
  m.heads = r.integer("heads", 1);
  m.kv_heads = r.opt_integer("kv_heads", 1).value_or(m.heads);
  m.ffn_hidden = r.integer("ffn_hidden", 1);
  m.seq_len = r.integer("seq_len", 1);
  m.vocab = r.integer("vocab", 1);
  m.tied_embeddings = r.opt_flag("tied_embeddings").value_or(m.family != Family::kLlama);
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
