// File: workloads/training_reader.hpp
// The `training:` block of a model file (TrainingSpec, model.hpp): its reader, and the check of its
// precision map against the operators the model has. Used by load_model.
#pragma once

#include "base/yaml_reader.hpp"
#include "workloads/model.hpp"

namespace hetsim {

// Reads the block at `r` for a model of `family` with sequences of `seq_len` (the MLM head's default
// masked positions); `has_mtp`: whether the model has multi-token prediction modules (mtp_in_dtype
// needs them). Problems go to r's diagnostics.
[[nodiscard]] TrainingSpec read_training(FieldReader r, Family family, long seq_len, bool has_mtp);

// training.gemm_precision_by_op names operators `m` has, and training.dtype_layers leaves it a
// decoder layer in the recipe's format; problems at the fields of `training`.
void check_precision_map(FieldReader& training, const ModelSpec& m);

}  // namespace hetsim
