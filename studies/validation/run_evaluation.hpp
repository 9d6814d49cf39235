// File: studies/validation/run_evaluation.hpp
// Reproduces a validation run in hetsim and compares every measured figure with the prediction:
//   collective: simulated on the run's cluster (busbw by the nccl-tests factor);
//   matmul:     the cost model's time for one product on the device;
//   layer:      one transformer layer of a TP group (Megatron's placement) simulated as a program:
//               its forward compute spans and TP collectives, then its backward; activations saved
//               per GPU as the stage work counts them;
//   training:   the plan, strategy or Megatron grid planned and simulated on the cluster.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernels_profile/cost_model.hpp"
#include "sim/executor.hpp"
#include "studies/validation/run_file.hpp"

namespace hetsim {

struct FigureResult {
  std::string key;
  double measured = 0;
  double predicted = 0;  // 0 when the run could not be predicted
  [[nodiscard]] double error() const { return measured > 0 ? (predicted - measured) / measured : 0; }
};

// What a run covers, for calibration classes: the GPU types it runs on and how many nodes it spans.
struct RunScope {
  std::set<std::string> gpus;
  int gpu_count = 1;
  int nodes = 1;
  bool moe = false;                  // a training run of a mixture-of-experts model
  bool low_precision_gemms = false;  // ... whose GEMMs run a low-precision recipe (fp8, mxfp8, nvfp4)
  bool fp32_gemms = false;           // ... or fp32 (not on tensor cores: other kernels than 16 bits)
  bool mamba = false;                // ... of a hybrid model with Mamba layers
  std::set<std::string> profiles;    // the calibration profiles in force on its GPU types ("none": the raw model)
  std::string gemm_format;           // TrainingSpec::gemm_format() of a training run
  [[nodiscard]] std::string name() const;  // "1 GPU", "1 node", "multi-node"
};

struct RunResult {
  const ValidationRun* run = nullptr;
  RunScope scope;
  std::vector<FigureResult> figures;
  std::string failure;  // non-empty: no prediction (e.g. the plan does not fit in memory), and why
  std::string note;     // how the prediction was made (algorithm, plan shape)
  nlohmann::json trace;  // a training run's simulated iteration as a Chrome trace, when asked for
  // A run a calibration profile in force was fitted on: the error of its fitted (time-like) figure
  // predicted by the fit that left its source out (the profile's runs list), which classes and
  // totals count instead of error().
  struct HeldOut {
    size_t figure = 0;
    double error = 0;
    std::string by;  // the profile's name
  };
  std::optional<HeldOut> held_out;
  [[nodiscard]] std::optional<double> held_out_error(size_t figure) const {
    return held_out && held_out->figure == figure ? std::optional(held_out->error) : std::nullopt;
  }
  [[nodiscard]] double honest_error(size_t figure) const { return held_out_error(figure).value_or(figures[figure].error()); }
};

// Throws InputError when the run's inputs are bad (file:line:col of the run or its inputs).
// With `trace`, a training run keeps its simulated iteration as a Chrome trace (RunResult::trace).
[[nodiscard]] RunResult evaluate_run(const ValidationRun& run, const CostModel& cost, const SimOptions& sim, bool trace = false);

// Narayanan et al. 2021 eq. (3): FLOPs per iteration of a GPT model with full recompute.
[[nodiscard]] double narayanan_flops(const ModelSpec& model);

}  // namespace hetsim
