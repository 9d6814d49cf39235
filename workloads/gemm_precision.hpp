// File: workloads/gemm_precision.hpp
// Low-precision GEMM recipes (training.gemm_precision), as Transformer Engine runs them: the inputs
// of the transformer layers' GEMMs (attention and MLP projections, expert GEMMs) in FP8 or a
// block-scaled format, everything else (embedding, output layer, router, attention products, norms,
// activations) in the training dtype, fp32 master weights and gradients. What each recipe costs
// besides the GEMMs: the casts of the inputs and output gradients, amax work, and the low-precision
// weight copies it keeps.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workloads/dtype.hpp"

namespace hetsim {

struct ModelSpec;
struct Op;
struct OpGraph;
struct TrainingSpec;

// kDtype: GEMMs in the training dtype (the default). fp8-delayed: per-tensor scales from an amax
// history (TE's DelayedScaling); fp8-current: per-tensor scales from the tensor itself, one more
// read of it first (Float8CurrentScaling); mxfp8: 32-element blocks with their own scales, rowwise
// and columnwise copies (MXFP8BlockScaling, Blackwell); nvfp4: 16-element blocks, E2M1 values,
// two-level scales from each tensor's amax, random Hadamard transforms on the weight-gradient
// operands (NVFP4BlockScaling, Blackwell).
enum class GemmPrecision { kDtype, kFp8Delayed, kFp8Current, kMxfp8, kNvfp4 };

[[nodiscard]] std::string_view gemm_precision_name(GemmPrecision p);  // "fp8-delayed", ...; kDtype: "dtype"
// The recipes by name (not "dtype"): fp8-delayed, fp8-current, mxfp8, nvfp4.
[[nodiscard]] const std::vector<std::string>& gemm_recipe_names();
[[nodiscard]] std::optional<GemmPrecision> gemm_recipe_from_name(std::string_view name);
// The format a device must list in its peaks to run the recipe (fp8, mxfp8, nvfp4); none for kDtype.
[[nodiscard]] std::optional<DType> gemm_input_format(GemmPrecision p);
// Which GPUs have that format, in words, for messages: "fp8 tensor cores (Hopper, Ada, CDNA3 or later)".
[[nodiscard]] std::string gemm_format_hardware(GemmPrecision p);

// The layers whose GEMMs take the recipe's format: all of `m`'s, or its decoder's alone where the
// multi-token prediction modules stay in the dtype (training.mtp_in_dtype).
[[nodiscard]] long gemm_precision_layers(const ModelSpec& m);
// The operators (names within a layer) whose format training.gemm_precision_by_op may set.
[[nodiscard]] const std::vector<std::string>& gemm_op_names();
// The format `op` of `m` runs its GEMMs in: kDtype outside the recipe's ops and layers (no recipe;
// outside gemm_precision_layers(); the first and last training.dtype_layers_* decoder layers), else
// its own in training.gemm_precision_by_op, else the recipe.
[[nodiscard]] GemmPrecision gemm_precision_of(const ModelSpec& m, const Op& op);
// Every low-precision format `t`'s GEMMs use: its recipe and those of gemm_precision_by_op.
[[nodiscard]] std::vector<GemmPrecision> gemm_recipes_used(const TrainingSpec& t);

// Bytes per weight of the low-precision copies a recipe keeps beside the weights (rowwise for the
// forward and data gradient, columnwise/transposed for the weight gradient): fp8 2, mxfp8
// 2 (1 + 1/32), nvfp4 2 (1/2 + 1/16); 0 for kDtype. Per-tensor scaled FP8 on a GPU whose FP8
// GEMMs take any layout (`fp8_any_layout`, Device::fp8_any_layout) keeps the rowwise copy alone: 1.
[[nodiscard]] double weight_copy_bytes(GemmPrecision p, bool fp8_any_layout);

// Marks the GEMMs of `graph` (built in `dtype`) that run in a low-precision format, each in its own
// (gemm_precision_of() the graph's `model`), and adds the casts around them (Op::gemm_dtype,
// Op::cast_fwd_bytes, Op::cast_bwd_bytes); the inputs they keep for the weight gradient are kept in
// the low format (Op::saved_bytes). No effect without a recipe.
void apply_gemm_precision(OpGraph& graph, const ModelSpec& model, double dtype_bytes);

// How one rank of a tensor-parallel group of `tp` holds an operand it casts (a GEMM's input x or
// output gradient dy): whole (replicated, every rank casts all of it), split (it casts its 1/tp),
// or gathered: sequence parallelism's all-gather, which Transformer Engine runs in the low format
// after each rank has cast its own 1/tp (transformer_engine/pytorch/distributed.py,
// gather_along_first_dim: _all_gather_fp8 casts the rowwise data alone, _all_gather_mxfp8 both copies).
enum class CastOperand { kWhole, kSplit, kGathered };

// Scales `op`'s casts (as apply_gemm_precision set them for the whole operator) to one rank's.
// Under per-tensor scaled FP8 a gathered operand's transposed copy is made from the gathered
// tensor, read and written whole, in the backward (where the weight gradient needs it; TE gathers
// the input again there): it moves into the backward's casts, still said as the transposed share.
void shard_casts(Op& op, CastOperand x, CastOperand dy, int tp);

// Each low-precision format a model's GEMMs use with the share of its parameters in it (none without
// a recipe).
[[nodiscard]] std::vector<std::pair<GemmPrecision, double>> gemm_precision_param_shares(const ModelSpec& model);
// The share of a model's parameters whose GEMMs run in a low-precision format (0 without a recipe):
// the weights the recipe keeps low-precision copies of and casts once per iteration.
[[nodiscard]] double gemm_precision_param_share(const ModelSpec& model);
// Bytes of low-precision weight copies per parameter of the model, over all its parameters: each
// weight's weight_copy_bytes() in its own format, 0 for those in the dtype.
[[nodiscard]] double weight_copy_bytes_per_param(const ModelSpec& model, bool fp8_any_layout);

}  // namespace hetsim
