// File: workloads/model.hpp
// A model description (workloads/<name>.yaml): architecture and training settings, checked.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "base/input_error.hpp"
#include "workloads/dtype.hpp"

namespace hetsim {

enum class Family { kGpt, kLlama, kBert };
enum class Optimizer { kAdam, kSgd };
enum class Recompute { kNone, kFull };

struct TrainingSpec {
  long global_batch = 0;  // samples (sequences) per iteration over the whole cluster
  long micro_batch = 0;   // samples per forward/backward pass on one device
  DType dtype = DType::kFp16;
  std::optional<DType> dtype_fallback;  // used on devices that lack `dtype` (bf16 on V100 -> fp16)
  Optimizer optimizer = Optimizer::kAdam;
  Recompute recompute = Recompute::kNone;
  bool flash_attention = false;  // attention scores are not kept for backward
};

struct ModelSpec {
  std::string name;
  Family family = Family::kGpt;
  long layers = 0;
  long hidden = 0;
  long heads = 0;
  long kv_heads = 0;  // = heads unless grouped-query attention
  long ffn_hidden = 0;
  long seq_len = 0;
  long vocab = 0;
  bool tied_embeddings = true;
  TrainingSpec training;

  std::string file;          // where it was read from
  Diagnostic dtype_location;  // file:line:col of training.dtype, for errors found later
};

[[nodiscard]] std::string_view family_name(Family f);

// Loads and checks a model file. Throws InputError listing every problem.
[[nodiscard]] ModelSpec load_model(const std::filesystem::path& path);

}  // namespace hetsim
