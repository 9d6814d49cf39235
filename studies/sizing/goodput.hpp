// File: studies/sizing/goodput.hpp
// What a training run really delivers when GPUs fail: every failure costs a restart plus the work
// since the last checkpoint, and every checkpoint costs its write. With failures arriving as a
// Poisson process (the job's mean time between failures M = 1 / (gpus x GPU rate + nodes x node
// rate)), checkpoints every tau seconds of work, a checkpoint write of delta and a restart of R,
// the expected wall time per unit of work is (Daly, "A higher order estimate of the optimum
// checkpoint interval for restart dumps", FGCS 22(3), 2006, eq. 13):
//     T(tau) / W = M e^(R/M) (e^((tau + delta)/M) - 1) / tau,
// and goodput = W / T. The interval that maximises it is found numerically (golden section on
// log tau); Young's first-order optimum sqrt(2 delta M) approaches it when delta << M.
#pragma once

#include <optional>
#include <string>

namespace hetsim {

// Failure and checkpoint figures (a sizing file's `reliability:` block, or the defaults).
struct Reliability {
  // Llama 3 405B pre-training: 419 unexpected interruptions in 54 days on 16 384 H100 (Meta, "The
  // Llama 3 Herd of Models", 2024, section 3.3.4): 419 / (16 384 x 54 / 365.25) = 0.173 per GPU-year,
  // every cause counted against the GPUs (the paper gives no per-node split).
  static constexpr double kLlama3GpuFailuresPerYear = 419.0 / (16384.0 * 54.0 / 365.25);
  // Llama 3's checkpoint storage (Tectonic) sustains 2 TB/s for the 16 384-GPU cluster (same paper,
  // section 3.3.1): 122 MB/s per GPU, scaled to the cluster's GPUs when no write rate is given.
  static constexpr double kLlama3CheckpointWritePerGpuBps = 2e12 / 16384.0;
  static constexpr double kAssumedRestartS = 600;  // ASSUMED: 10 minutes to detect, reschedule and reload

  double gpu_failures_per_year = kLlama3GpuFailuresPerYear;
  double node_failures_per_year = 0;            // beyond the GPUs' own (hosts, NICs, switches)
  std::optional<double> checkpoint_write_Bps;   // the job's aggregate write rate; none: 122 MB/s per GPU
  double restart_s = kAssumedRestartS;
  bool restart_given = false;                   // false: the assumed default, said so
};

// The longest restart a sizing file may state: a week (a restart detects the failure, reschedules
// and reloads; longer, and the failures are the study, not the training).
inline constexpr double kMaxRestartS = 7 * 86400.0;
// Below this useful share of wall time a mix trains nothing worth pricing: infeasible, with why.
inline constexpr double kMinGoodput = 1e-3;

struct Goodput {
  double mtbf_s = 0;          // the job's mean time between failures
  double checkpoint_s = 0;    // writing one checkpoint
  double interval_s = 0;      // work between checkpoints that maximises goodput
  double goodput = 1;         // useful share of wall time, in (0, 1]
  double checkpoint_bytes = 0;
};

// The goodput of a job on `gpus` GPUs in `nodes` nodes whose checkpoint is `checkpoint_bytes`.
[[nodiscard]] Goodput expected_goodput(const Reliability& r, long gpus, long nodes, double checkpoint_bytes);
// Goodput at a given interval (the model above); exposed for tests.
[[nodiscard]] double goodput_at(double interval_s, double checkpoint_s, double restart_s, double mtbf_s);
// One line naming the figures and their sources, for reports' assumptions.
[[nodiscard]] std::string reliability_assumption(const Reliability& r);

}  // namespace hetsim
