// File: workloads/training_reader.cpp
#include "workloads/training_reader.hpp"

#include <algorithm>
#include <cmath>

#include "base/text.hpp"

namespace hetsim {

namespace {

// Dropout as Megatron-LM (GPT: hidden and attention dropout 0.1) and BERT (Devlin et al.; DLE's
// bert_configs/large.json: 0.1) train; Llama trains without dropout, ViT's default is none.
double default_dropout(Family f) {
  return f == Family::kGpt || f == Family::kBert || f == Family::kMoe ? 0.1 : 0.0;
}

bool has_dropout_ops(Family f) { return f != Family::kVgg && f != Family::kUnet; }
bool has_mlm_head(Family f) { return f == Family::kBert || f == Family::kMoe; }

}  // namespace

TrainingSpec read_training(FieldReader r, Family family, long seq_len, bool has_mtp) {
  const size_t problems_before = r.diagnostics().size();
  TrainingSpec t;
  t.global_batch = r.integer("global_batch", 1, kMaxGlobalBatch);
  t.micro_batch = r.integer("micro_batch", 1, kMaxGlobalBatch);
  t.dtype = dtype_from_name(r.choice("dtype", {"fp32", "tf32", "fp16", "bf16", "fp8"})).value_or(DType::kFp16);
  if (auto fb = r.opt_choice("dtype_fallback", {"fp32", "tf32", "fp16", "bf16", "fp8"})) t.dtype_fallback = dtype_from_name(*fb);
  t.optimizer = r.opt_choice("optimizer", {"adam", "sgd"}).value_or("adam") == "sgd" ? Optimizer::kSgd
                                                                                     : Optimizer::kAdam;
  t.recompute = r.opt_choice("recompute", {"none", "full"}).value_or("none") == "full" ? Recompute::kFull
                                                                                      : Recompute::kNone;
  const std::string attention = r.opt_choice("attention", {"auto", "standard", "flash", "fused"}).value_or("auto");
  t.attention = attention == "flash"      ? AttentionKernel::kFlash
                : attention == "fused"    ? AttentionKernel::kFused
                : attention == "standard" ? AttentionKernel::kStandard
                                          : AttentionKernel::kAuto;
  t.kernels = r.opt_choice("kernels", {"fused", "eager"}).value_or("fused") == "eager" ? TrainingKernels::kEager
                                                                                     : TrainingKernels::kFused;
  // A name of a 16- or 32-bit format restates the dtype; the recipes put the layers' GEMM inputs in
  // 8 or 4 bits (an 8-bit dtype would put every tensor there, which no training recipe does).
  std::vector<std::string> precisions{"dtype", "fp32", "tf32", "fp16", "bf16"};
  precisions.insert(precisions.end(), gemm_recipe_names().begin(), gemm_recipe_names().end());
  if (const std::optional<std::string> gp = r.opt_choice("gemm_precision", precisions)) {
    t.gemm_precision = gemm_recipe_from_name(*gp).value_or(GemmPrecision::kDtype);
    if (!gemm_recipe_from_name(*gp) && *gp != "dtype" && dtype_from_name(*gp) != t.dtype) {
      r.error("gemm_precision", in_quotes(*gp) + " is not the training dtype " + in_quotes(dtype_name(t.dtype)) +
                                    "; GEMMs run in the dtype unless a low-precision recipe is named (fp8-delayed, "
                                    "fp8-current, mxfp8, nvfp4)");
    }
  }
  const std::string fp8_hint = " would hold every tensor in 8 bits, which no training recipe does: train in bf16 and set "
                               "training.gemm_precision (fp8-delayed, fp8-current, mxfp8) for 8-bit GEMMs";
  if (t.dtype == DType::kFp8) r.error("dtype", "\"fp8\"" + fp8_hint);
  if (t.dtype_fallback == DType::kFp8) r.error("dtype_fallback", "\"fp8\"" + fp8_hint);
  if (std::optional<FieldReader> by_op = r.opt_child("gemm_precision_by_op")) {
    std::vector<std::string> formats{"dtype"};
    formats.insert(formats.end(), gemm_recipe_names().begin(), gemm_recipe_names().end());
    for (const std::string& op : gemm_op_names()) {
      if (const std::optional<std::string> f = by_op->opt_choice(op, formats)) {
        t.gemm_precision_by_op.emplace_back(op, gemm_recipe_from_name(*f).value_or(GemmPrecision::kDtype));
      }
    }
    by_op->finish();
  }
  if (std::optional<FieldReader> layers = r.opt_child("dtype_layers")) {
    t.dtype_layers_first = layers->opt_integer("first", 0, 1000).value_or(0);
    t.dtype_layers_last = layers->opt_integer("last", 0, 1000).value_or(0);
    layers->finish();
  }
  t.fp8_param_gather = r.opt_flag("fp8_param_gather").value_or(false);
  if (const std::optional<bool> mtp = r.opt_flag("mtp_in_dtype")) {
    if (*mtp && !has_mtp) r.error("mtp_in_dtype", "keeps the multi-token prediction modules' GEMMs in dtype, but the model has none (mtp_layers)");
    t.mtp_in_dtype = *mtp && has_mtp;
  }
  const std::string grads = r.opt_choice("grad_accumulation", {"auto", "fp32", "dtype"}).value_or("auto");
  t.fp32_grads = grads == "fp32" || (grads == "auto" && t.dtype == DType::kBf16);
  // Families without dropout or MLM ops leave those keys unknown (an error, not silently ignored).
  if (has_dropout_ops(family)) t.dropout = r.opt_number("dropout", 0.0, 0.99).value_or(default_dropout(family));
  if (has_mlm_head(family)) {
    const long fallback = std::max(1L, std::lround(0.15 * static_cast<double>(seq_len)));
    t.masked_positions = r.opt_integer("masked_positions", 1).value_or(fallback);
    if (seq_len > 0 && t.masked_positions > seq_len) {
      r.error("masked_positions", std::to_string(t.masked_positions) + " is more than seq_len " + std::to_string(seq_len));
    }
  }
  r.finish();
  if (r.diagnostics().size() != problems_before) return t;  // cross-field checks only on well-formed fields
  if (t.micro_batch > t.global_batch) {
    r.error("micro_batch", std::to_string(t.micro_batch) + " is larger than global_batch " +
                               std::to_string(t.global_batch));
  }
  if (t.dtype_fallback && *t.dtype_fallback == t.dtype) {
    r.error("dtype_fallback", "is the same as dtype; a fallback must be a different format");
  }
  const std::string no_recipe = "says which GEMMs leave the recipe's format, but there is no recipe: set training.gemm_precision too";
  if (!t.low_precision_gemms() && !t.gemm_precision_by_op.empty()) r.error("gemm_precision_by_op", no_recipe);
  if (!t.low_precision_gemms() && t.dtype_layers_first + t.dtype_layers_last > 0) r.error("dtype_layers", no_recipe);
  if (t.fp8_param_gather && t.gemm_precision != GemmPrecision::kFp8Delayed && t.gemm_precision != GemmPrecision::kFp8Current &&
      t.gemm_precision != GemmPrecision::kMxfp8) {
    r.error("fp8_param_gather", "needs an 8-bit GEMM recipe to keep the weights in: set training.gemm_precision to "
                                "fp8-delayed, fp8-current or mxfp8 (it is " +
                                    in_quotes(t.low_precision_gemms() ? std::string(gemm_precision_name(t.gemm_precision)) : "dtype") +
                                    "), or turn it off (--set model.training.fp8_param_gather=false with --precision)");
  }
  return t;
}

void check_precision_map(FieldReader& training, const ModelSpec& m) {
  const TrainingSpec& t = m.training;
  if (!t.gemm_precision_by_op.empty()) {
    FieldReader by_op = training.child("gemm_precision_by_op");
    std::string held;
    for (const std::string& op : gemm_op_names()) {
      if (has_gemm_op(m, op)) held += (held.empty() ? "" : ", ") + op;
    }
    for (const auto& [op, p] : t.gemm_precision_by_op) {
      if (!has_gemm_op(m, op)) {
        by_op.error(op, "the model has no " + op + " operators; " +
                            (held.empty() ? std::string("the map is for gpt, llama, bert and vit models") : "its GEMM operators: " + held));
      }
    }
  }
  const long decoder = main_layers(m);
  if (t.dtype_layers_first + t.dtype_layers_last >= decoder && decoder > 0) {
    training.error("dtype_layers", std::to_string(t.dtype_layers_first) + " first and " + std::to_string(t.dtype_layers_last) +
                                       " last layers in the dtype leave none of the model's " + std::to_string(decoder) +
                                       " decoder layers in the recipe's format");
  }
}

}  // namespace hetsim
