// File: kernels_profile/calibration_profile.hpp
// Calibration profiles (kernels_profile/calibrations/*.yaml, docs/formats/calibration-profile.md):
// a few physically meaningful parameters of a software stack on some GPU types, each fitted by
// `hetsim calibrate` on named published or measured runs, with its uncertainty, the fit's date and
// the leave-one-source-out error that says how well it predicts runs it was not fitted on.
//
// Which profile is in force is chosen once per process, before devices are loaded (the CLI's
// --calibration): the shipped profiles (default: for each GPU type the profile of the most recent
// software era that lists it), one profile file, or none (the raw model). Loading a device applies it.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hetsim {

struct Device;

// What a profile may set: host time the GPU waits for where a framework cannot run ahead of it
// (the cost model takes max(kernels' time, host time) per operator), how much longer the framework's
// GEMMs and memory-bound kernels take than the kernel model says (cost_model.cpp), and how much
// compute slows beside a collective (sim/executor.cpp).
struct FittedCosts {
  // One mixture-of-experts layer's router, permutation and token-dispatch bookkeeping per
  // micro-batch, forward and backward together (a third in the forward): dropless routing copies
  // the tokens per expert to the host, so the host cannot run ahead of the GPU here.
  double moe_layer_s = 0;
  // Issuing one expert GEMM: Transformer Engine's grouped linear layers issue one GEMM per local
  // expert (forward one per linear layer, backward two: data and weight gradients).
  double expert_gemm_s = 0;
  // GEMM and attention kernels take (1 + this) times the kernel model's time (measured rows, a
  // donor GPU's rows scaled, or the roofline at the stated efficiency): a dimensionless share.
  double gemm_time_excess = 0;
  // The same for fp32 GEMMs, which run on the SIMT cores (other kernels, another share).
  double fp32_gemm_time_excess = 0;
  // GEMMs whose inputs carry block scales (mxfp8, nvfp4: training.gemm_precision) take this share of
  // the kernel model's time more, beyond gemm_time_excess: the scales' loads and the block-scaled
  // MMA's pipeline, which per-tensor scaled FP8 GEMMs of the same shape do without.
  double block_scaled_gemm_time_excess = 0;
  // Memory-bound kernels (norms, softmax, elementwise, embedding, casts, MoE permutation copies, the
  // optimizer step) take (1 + this) times the kernel model's time: a dimensionless share.
  double memory_bound_time_excess = 0;
  // Mamba-2's convolution and SSD scan kernels (mamba_ssm's Triton kernels: a Mamba layer's
  // ssm_scan op) take (1 + this) times their stated roofline (cost_model.cpp): a dimensionless share.
  double ssm_scan_time_excess = 0;
  // Compute beside a running collective takes (1 + this) times longer than the measured interference
  // alone says (Device::collective_interference): the SMs and memory bandwidth the framework's
  // collective kernels take from overlapped compute. A dimensionless share.
  double overlap_slowdown = 0;
  // Data over this GPU type's node's NICs, and over its GPU-to-GPU fabric (NVLink/NVSwitch, xGMI,
  // PCIe), takes (1 + this) times as long as at its link class's default achievable fraction
  // (topologies/link_class.cpp): the fabric and the collective library's stack as measured, beyond
  // the table's figure. A fraction the cluster file states is the user's own and is not changed.
  double nic_time_excess = 0;
  double intra_time_excess = 0;
  // Host time the GPU waits for at the start of each pass (one micro-batch's forward, backward or
  // weight-gradient pass of a stage or model chunk): the framework's work between the pass's inputs
  // arriving and its first kernel (schedule bookkeeping, waits on receives, Python dispatch).
  double pass_host_s = 0;
  // The fixed time each collective call takes on this GPU type before its data moves: kernel launch
  // and the collective library's base latency for its algorithm and protocol (NCCL's tuning model
  // puts that at a few to tens of microseconds), beyond each link's latency per step, which the
  // cluster's links carry. A group of several types pays its slowest member's.
  double collective_latency_s = 0;
  // The fixed time each kernel takes beyond the kernel model's (launch latency, the kernel's ramp and
  // tail, which the roofline and a donor GPU's rows scaled leave out): added once per kernel.
  double kernel_overhead_s = 0;
  friend bool operator==(const FittedCosts&, const FittedCosts&) = default;
};

// A parameter's kind: a time (files write "40us") or a dimensionless share (files write 0.18).
enum class ParameterUnit { kTime, kShare };

struct ParameterInfo {
  std::string_view name;          // as in profile files
  double FittedCosts::*field;
  ParameterUnit unit;
  double scale;                   // a typical value (seconds or a share): the fit's unit and its first guess
  double max;                     // the physical bound the fit stays under
  std::string_view beyond;        // why a value over it is refused: "more host time than any framework spends here"
  std::string_view meaning;
  std::string_view constrained_by;  // runs that constrain it (said when none do)
  // A value as reports write it: "2.437 ms", or "0.182" for a share.
  [[nodiscard]] std::string format(double value) const;
  // A value as profile files write it: "2436.61us", or "0.27816" for a share.
  [[nodiscard]] std::string file_value(double value) const;
};
// Every parameter a profile may hold, in file order.
[[nodiscard]] const std::vector<ParameterInfo>& calibration_parameters();
[[nodiscard]] const ParameterInfo* find_calibration_parameter(std::string_view name);

struct FittedParameter {
  std::string name;
  double value = 0;
  double uncertainty = 0;  // one standard deviation
  // Held at a measured value through the fit, not fitted (hetsim calibrate --measured): where it
  // was measured (file, GPU, date). Empty: fitted. Optional key `measured` in profile files.
  std::string measured{};
  // Held through the fit at the value another profile fitted, its uncertainty kept (hetsim calibrate
  // --hold): that profile's name, file and fit. Where it carries over (the framework's host time on
  // another GPU of the same software stack) and these runs cannot pin it. Optional key `held_from`;
  // never beside `measured`.
  std::string held_from{};
};

// Leave-one-source-out cross-validation of one class of runs (studies/validation classes).
struct CrossValidatedClass {
  std::string name;
  int rows = 0;
  double in_sample_mean = 0, in_sample_max = 0;  // |error| with the parameters fitted on every run
  double loso_mean = 0, loso_max = 0;            // |error| with each source's runs left out of the fit
};
// The largest |error| a profile holds, as a share (10 000 %): a run a fit leaves further off
// measured something else than what it names, and hetsim calibrate refuses it.
inline constexpr double kMaxProfileError = 100;

struct CrossValidatedRun {
  std::string run, source;
  double in_sample_error = 0, loso_error = 0;  // signed (predicted - measured) / measured
  // The other sources' runs constrain no parameter, are fewer than the parameters they would fit,
  // or there is no other source: the fold fitted nothing and loso_error is the unfitted model's, no
  // test of the fit. Optional in the file.
  bool loso_unfitted = false;
};

// A GPU type a profile applies to without having been fitted on its runs: a sibling of a fitted one
// (the same architecture, the same software stack) whose parameters carry over, with the reason.
struct TransferredDevice {
  std::string device;
  std::string why;
  std::vector<std::string> parameters{};  // the parameters that carry over; empty: every one
};

struct CalibrationProfile {
  std::string name;
  std::string software;  // the stack it stands for: "Megatron-Core ..., NGC 26.04"
  std::string fitted;    // ISO date of the fit
  // ISO date of the stack itself (its newest container or code the runs used): which profile is a GPU
  // type's default is decided by it. Optional in the file; default: the fit's date.
  std::string era;
  std::vector<std::string> devices;            // the GPU types of the runs it was fitted on
  std::vector<TransferredDevice> transferred_to;  // optional: GPU types it applies to by transfer
  std::vector<FittedParameter> parameters;
  std::vector<std::string> fitted_on;  // run names
  std::vector<CrossValidatedClass> classes;
  std::vector<CrossValidatedRun> runs;
  std::string file;  // where it was read from (empty: made in memory)

  [[nodiscard]] FittedCosts fitted_costs() const;
  // The costs in force on `device`: a GPU type it was transferred to takes only the parameters its
  // transfer names (all where it names none).
  [[nodiscard]] FittedCosts fitted_costs_on(std::string_view device) const;
  // Whether it applies to `device`: fitted on it (`devices`) or transferred to it.
  [[nodiscard]] bool covers(std::string_view device) const;
  [[nodiscard]] const TransferredDevice* transfer_to(std::string_view device) const;  // nullptr: not transferred
  // "megatron-core-2026 (kernels_profile/calibrations/megatron-core-2026.yaml, era 2026-04-01, fitted 2026-11-28 on 9 runs: ...)"
  [[nodiscard]] std::string describe() const;
  // describe() as in force on `device`: a GPU type it was transferred to says so, and why.
  [[nodiscard]] std::string describe_on(std::string_view device) const;
};

// Why `era` is no software stack's date ("" when it is): YYYY-MM-DD, and not after `fitted` (the
// fit's date; empty: not compared). Profiles and hetsim calibrate --era check it alike.
[[nodiscard]] std::string era_problem(const std::string& era, const std::string& fitted);
// Why `fitted` is not a fit's date ("" when it is): YYYY-MM-DD, to the day, as eras are (they are
// compared with it). Profiles and hetsim calibrate --date check it alike.
[[nodiscard]] std::string fitted_date_problem(const std::string& fitted);
// Reads and checks one profile. Throws InputError naming file, line, column and field.
[[nodiscard]] CalibrationProfile load_calibration_profile(const std::filesystem::path& path);
// The profile as a file load_calibration_profile reads back.
[[nodiscard]] std::string calibration_profile_text(const CalibrationProfile& profile);
// kernels_profile/calibrations/*.yaml under the data root, read once per process.
[[nodiscard]] const std::vector<CalibrationProfile>& shipped_calibration_profiles();

// The profile in force for devices loaded from now on.
// The default: per GPU type the profile of the most recent era (then one fitted on that type before
// one transferred to it, then the most recently fitted, then the one for fewer GPU types).
void use_shipped_calibrations();
[[nodiscard]] bool shipped_calibrations_in_force();         // the default, not none or one file
// The one profile in force (--calibration FILE), or nullptr (the shipped ones, or none).
[[nodiscard]] const CalibrationProfile* calibration_file_in_force();
void use_no_calibration();                                   // --calibration none
void use_calibration_profile(CalibrationProfile profile);    // this one, for the devices it lists
// --calibration's argument: "none", "shipped", or a profile file (throws InputError).
void use_calibration(const std::string& arg);
// Puts `arg` (as use_calibration takes it) in force for as long as it lives, then what was in force
// before: a validation run that measured another software stack than the profile in force stands
// for (a bare cuBLAS benchmark of 2025 against a profile of 2021's Megatron-LM) names its own.
class CalibrationScope {
 public:
  explicit CalibrationScope(const std::string& arg);
  ~CalibrationScope();
  CalibrationScope(const CalibrationScope&) = delete;
  CalibrationScope& operator=(const CalibrationScope&) = delete;

 private:
  int choice_;
  CalibrationProfile one_;
};

// The profile in force for `device` (nullopt: the raw model).
[[nodiscard]] std::optional<CalibrationProfile> calibration_for(std::string_view device);
// A profile's name; a profile of a shipped profile's name but other values (an edited copy) is
// another profile: "NAME (FILE)".
[[nodiscard]] std::string profile_identity(const CalibrationProfile& p);
// The names of the profiles in force on these GPU types ("none" for one that takes the raw model).
[[nodiscard]] std::set<std::string> profiles_in_force(const std::set<std::string>& devices);
// The profile in force for `device` where its parameters move a run of this kind: a profile of
// mixture-of-experts host times alone leaves a dense run (moe false) on the raw model (nullopt).
// A transfer that names its parameters counts either way: the others were left out on that GPU
// type's own runs (its dense runs read right without them), not for want of runs.
[[nodiscard]] std::optional<CalibrationProfile> calibration_applying(std::string_view device, bool moe);
// Sets device.fitted and device.calibration from the profile in force (device loading calls it).
void apply_calibration(Device& device);

}  // namespace hetsim
