// File: kernels_profile/calibration_profile.cpp
#include "kernels_profile/calibration_profile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>

#include "base/data_dir.hpp"
#include "base/iso_date.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "base/yaml_reader.hpp"
#include "kernels_profile/device.hpp"

namespace hetsim {

const std::vector<ParameterInfo>& calibration_parameters() {
  static const std::vector<ParameterInfo> params = {
      {"moe_layer_host", &FittedCosts::moe_layer_s, ParameterUnit::kTime, 1e-3, 0.05, "more host time than any framework spends here",
       "host time of one MoE layer's router, permutation and token-dispatch bookkeeping per micro-batch (forward and "
       "backward together, a third in the forward); dropless routing copies the tokens per expert to the host, so the "
       "host cannot run ahead of the GPU there",
       "training runs of mixture-of-experts models with dropless routing whose MoE layers are short enough for the host "
       "to show (small hidden sizes, one sample per micro-batch)"},
      {"expert_gemm_host", &FittedCosts::expert_gemm_s, ParameterUnit::kTime, 3e-5, 1e-3, "more host time than any framework spends here",
       "host time to issue one expert GEMM: Transformer Engine's grouped linear layers issue one GEMM per local expert "
       "(forward one per linear layer, backward two)",
       "training runs of mixture-of-experts models with several experts per GPU, at more than one count of experts per "
       "GPU to tell it from moe_layer_host"},
      {"pass_host", &FittedCosts::pass_host_s, ParameterUnit::kTime, 1e-3, 0.05, "more host time per pass than any framework spends",
       "host time the GPU waits for at the start of each pass (one micro-batch's forward, backward or weight-gradient "
       "pass on a stage or model chunk): the framework's work between the pass's inputs arriving and its first kernel "
       "(schedule bookkeeping, waits on pipeline receives, Python dispatch), added once a pass",
       "training runs at several counts of micro-batches per iteration (or of pipeline chunks), small models or short "
       "sequences whose passes are short enough for a fixed cost to show"},
      {"gemm_time_excess", &FittedCosts::gemm_time_excess, ParameterUnit::kShare, 0.25, 1.0,
       "GEMMs over twice the kernel model's time: the model is wrong there, not the framework",
       "how much longer the framework's GEMM and attention kernels in tensor-core formats (all but fp32) take on this GPU "
       "than the kernel model says (measured rows, a donor GPU's rows scaled, or the roofline at the stated efficiency): "
       "each takes (1 + this) times it",
       "training runs whose time is mostly GEMMs (dense models at large micro-batches or hidden sizes), on GPU types whose "
       "kernel times are scaled or assumed rather than measured"},
      {"fp32_gemm_time_excess", &FittedCosts::fp32_gemm_time_excess, ParameterUnit::kShare, 0.25, 1.0,
       "fp32 GEMMs over twice the kernel model's time: the model is wrong there, not the framework",
       "how much longer the framework's fp32 GEMM and attention kernels (SIMT cores, not tensor cores) take on this GPU "
       "than the kernel model says: each takes (1 + this) times it",
       "training runs in fp32 (FP32 rows of a published table; no tensor-core format) whose time is mostly GEMMs"},
      {"block_scaled_gemm_time_excess", &FittedCosts::block_scaled_gemm_time_excess, ParameterUnit::kShare, 0.1, 1.0,
       "block-scaled GEMMs twice as long again as per-tensor scaled ones: the model is wrong there, not the scales",
       "how much longer the framework's GEMMs with block-scaled inputs (mxfp8, nvfp4) take than per-tensor scaled FP8 "
       "GEMMs of the same shape, as a share of the kernel model's time: each takes (1 + gemm_time_excess + this) times it "
       "(the scale factors' loads and the block-scaled MMA's pipeline)",
       "training runs of the same model and layout in a per-tensor FP8 recipe and in a block-scaled one (MXFP8), so that "
       "it is told apart from gemm_time_excess"},
      {"memory_bound_time_excess", &FittedCosts::memory_bound_time_excess, ParameterUnit::kShare, 0.25, 1.0,
       "memory-bound kernels over twice the kernel model's time: the model is wrong there, not the framework",
       "how much longer the framework's memory-bound kernels (norms, softmax, elementwise, embedding, casts, MoE "
       "permutation copies, the optimizer step) take on this GPU than the kernel model says: each takes (1 + this) times it",
       "training runs whose share of memory-bound time differs from run to run (short and long sequences, small and large "
       "hidden sizes), so that it is told apart from gemm_time_excess"},
      {"ssm_scan_time_excess", &FittedCosts::ssm_scan_time_excess, ParameterUnit::kShare, 1.0, 4.0,
       "Mamba's scan over five times its roofline: the model is wrong there, not the kernels",
       "how much longer Mamba-2's convolution and chunked SSD scan kernels (mamba_ssm's Triton kernels, a Mamba layer's "
       "ssm_scan) take on this GPU than their stated roofline (their products at the tensor-core peak times the GEMM "
       "efficiency, their traffic at the memory roofline): each takes (1 + this) times it",
       "training runs of hybrid models with Mamba layers (Nemotron-H, Nemotron 3), beside runs of models without them "
       "that fix the GEMMs' share"},
      {"overlap_slowdown", &FittedCosts::overlap_slowdown, ParameterUnit::kShare, 0.25, 1.0,
       "compute over twice as slow beside a collective: the overlap is not happening",
       "how much longer compute takes beside a running collective than the measured interference alone says (the SMs "
       "and memory bandwidth the framework's collective kernels take from it): each such kernel takes (1 + this) times "
       "the measured slowdown",
       "training runs whose collectives overlap compute (data-parallel gradient reductions under the backward, at "
       "several node counts; tensor-parallel overlap), beside runs whose collectives do not"},
      {"nic_time_excess", &FittedCosts::nic_time_excess, ParameterUnit::kShare, 0.25, 1.0,
       "NICs at under half their class's achievable rate: the fabric is broken or misdescribed, not slow",
       "how much longer data takes over this GPU type's nodes' NICs (and the network's cables and uplinks) than at "
       "the NIC class's default achievable fraction of the line rate: each transfer takes (1 + this) times it. A "
       "fraction the cluster file states is kept",
       "collective runs (nccl-tests or rccl-tests busbw) across nodes whose time is bound by the NICs, or training "
       "runs whose data-parallel or expert-parallel traffic crosses nodes, at large messages"},
      {"intra_time_excess", &FittedCosts::intra_time_excess, ParameterUnit::kShare, 0.25, 1.0,
       "a node's GPU links at under half their class's achievable rate: the fabric is broken or misdescribed, not slow",
       "how much longer data takes between GPUs of one node (NVLink and NVSwitch ports, xGMI, PCIe) than at the link "
       "class's default achievable fraction: each transfer takes (1 + this) times it. A fraction the cluster file "
       "states is kept; NVLink SHARP's in-switch reduction rate is not changed",
       "collective runs inside one node (nccl-tests or rccl-tests busbw) at messages large enough to be "
       "bandwidth-bound (1 GiB and over)"},
      {"kernel_overhead", &FittedCosts::kernel_overhead_s, ParameterUnit::kTime, 5e-6, 1e-4,
       "more time per kernel than any launch takes: the kernel model is wrong there, not the launch",
       "the fixed time each of the framework's kernels takes beyond the kernel model's time (launch latency, the "
       "kernel's ramp and tail): added once per kernel (a GEMM's forward one, backward two; other kernels one a pass; "
       "each cast one; one more with the forward recomputed)",
       "training runs with many short kernels (small hidden sizes, short sequences, small micro-batches) beside runs "
       "whose kernels are long, so that it is told apart from gemm_time_excess"},
      {"collective_latency", &FittedCosts::collective_latency_s, ParameterUnit::kTime, 2.5e-5, 5e-4,
       "more time per collective call than any collective library's base latency: the runs are not latency-bound, or "
       "the fabric is misdescribed",
       "the fixed time each collective call takes before its data moves (kernel launch, the collective library's base "
       "latency for its algorithm and protocol), beyond each link's latency per ring or tree step, which the cluster's "
       "links carry: added once a call, the slowest member's where a group spans GPU types",
       "collective runs (nccl-tests or rccl-tests, or a framework's all-reduce benchmark) at small messages (a few KiB "
       "to a few MiB), whose time is mostly that fixed cost, beside large ones that fix the bandwidth"},
  };
  return params;
}

std::string ParameterInfo::format(double value) const {
  return unit == ParameterUnit::kTime ? format_time(value) : format_double("%.3g", value);
}

std::string ParameterInfo::file_value(double value) const {
  // Under a picosecond, the shortest time a file may state, a time is written as none.
  if (unit == ParameterUnit::kTime) return value < 1e-12 ? std::string("0us") : format_double("%.6g", value * 1e6) + "us";
  return format_double("%.6g", value);
}

const ParameterInfo* find_calibration_parameter(std::string_view name) {
  for (const ParameterInfo& p : calibration_parameters()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

FittedCosts CalibrationProfile::fitted_costs() const { return fitted_costs_on(""); }

FittedCosts CalibrationProfile::fitted_costs_on(std::string_view device) const {
  const TransferredDevice* t = transfer_to(device);
  const auto carried = [&](const std::string& name) {
    return t == nullptr || t->parameters.empty() || std::find(t->parameters.begin(), t->parameters.end(), name) != t->parameters.end();
  };
  FittedCosts h;
  for (const FittedParameter& p : parameters) {
    const ParameterInfo* info = find_calibration_parameter(p.name);
    if (info != nullptr && carried(p.name)) h.*(info->field) = p.value;
  }
  return h;
}

bool CalibrationProfile::covers(std::string_view device) const {
  return std::find(devices.begin(), devices.end(), device) != devices.end() || transfer_to(device) != nullptr;
}

const TransferredDevice* CalibrationProfile::transfer_to(std::string_view device) const {
  const auto t = std::find_if(transferred_to.begin(), transferred_to.end(), [&](const TransferredDevice& x) { return x.device == device; });
  return t == transferred_to.end() ? nullptr : &*t;
}

std::string CalibrationProfile::describe_on(std::string_view device) const {
  const TransferredDevice* t = transfer_to(device);
  if (t == nullptr) return describe();
  return describe() + "; transferred to " + std::string(device) + " from " + (devices.empty() ? std::string("none") : join(devices)) +
         (t->parameters.empty() ? std::string() : " (" + join(t->parameters) + " only)") + ", fitted on none of its runs: " + t->why;
}

std::string CalibrationProfile::describe() const {
  std::string s = name + " (";
  if (!file.empty()) {
    const std::filesystem::path rel = std::filesystem::path(file).lexically_relative(data_root());
    s += (rel.empty() || rel.string().starts_with("..") ? file : rel.string()) + ", ";
  }
  if (!era.empty() && era != fitted) s += "era " + era + ", ";
  s += "fitted " + fitted + " on " + counted(fitted_on.size(), "run") + ": ";
  for (size_t i = 0; i < parameters.size(); ++i) {
    const ParameterInfo* info = find_calibration_parameter(parameters[i].name);
    const auto value = [&](double v) { return info != nullptr ? info->format(v) : format_time(v); };
    const FittedParameter& f = parameters[i];
    s += (i ? ", " : "") + f.name + " " + value(f.value) + (f.measured.empty() ? " ± " + value(f.uncertainty) : " (measured, not fitted)") +
         (f.held_from.empty() ? "" : " (held from " + f.held_from + ", not fitted here)");
  }
  return s + ")";
}

namespace {

// An |error| share as a profile writes it: "0.0412".
double read_share(FieldReader& r, std::string_view key) { return r.number(key, 0, kMaxProfileError); }

// Each name of the list at `field` once: a repeat is said at the field.
void refuse_repeats(FieldReader& r, std::string_view field, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    const auto before = names.begin() + static_cast<std::ptrdiff_t>(i);
    if (std::find(names.begin(), before, names[i]) != before) r.error(field, in_quotes(names[i]) + " is listed twice");
  }
}

// A YAML double-quoted scalar (the text is printable: names and sources were checked when read).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : printable(s)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string fitted_date_problem(const std::string& fitted) {
  // A day, never a time: the general date form's hint (which offers a time) is not this field's.
  constexpr const char* kDay = " is not a day; write YYYY-MM-DD (the fit's date)";
  if (fitted.size() != 10) return kDay;
  std::string problem = iso_date_problem(fitted);
  if (problem.starts_with(" is not a date;")) return kDay;
  if (problem.empty() && fitted > utc_today()) return " is after today (UTC): a fit is dated the day it was made";
  return problem;
}

std::string era_problem(const std::string& era, const std::string& fitted) {
  if (era.size() != 10) return " is not a date; write YYYY-MM-DD (the software stack's date)";
  if (std::string why = iso_date_problem(era); !why.empty()) return why;
  if (fitted.size() >= 10 && era > fitted.substr(0, 10)) {
    return " is after the fit (" + fitted + "): a software stack is no newer than the runs fitted on it";
  }
  return "";
}

CalibrationProfile load_calibration_profile(const std::filesystem::path& path) {
  const YamlFile file = YamlFile::load(path);
  Diagnostics diags;
  FieldReader r = file.root(diags);
  CalibrationProfile p;
  p.file = file.name();
  p.name = r.name("name");
  // The words --calibration takes for the shipped defaults and the raw model: a report naming the
  // profile in force could not tell a profile so named from them.
  if (p.name == "shipped" || p.name == "none") {
    r.error("name", in_quotes(p.name) + " is what --calibration says for " +
                        (p.name == "shipped" ? "the shipped profiles" : "the raw model") + "; give the profile a name of its own");
  }
  p.software = r.text("software");
  if (is_blank(p.software)) r.error("software", "is empty; name the software stack the runs used");
  p.fitted = r.text("fitted");
  const std::string fitted_problem = fitted_date_problem(p.fitted);
  if (!fitted_problem.empty()) r.error("fitted", in_quotes(p.fitted) + fitted_problem);
  if (r.opt_node("era")) {
    p.era = r.text("era");
    if (const std::string why = era_problem(p.era, fitted_problem.empty() ? p.fitted : ""); !why.empty()) r.error("era", in_quotes(p.era) + why);
  } else {
    p.era = p.fitted;  // a profile that does not date its stack: of the fit's date
  }
  p.devices = r.names("devices");
  const std::vector<std::string> known = shipped_device_names();
  for (const std::string& d : p.devices) {
    if (std::find(known.begin(), known.end(), d) == known.end()) r.error("devices", unknown_device_message(d, known));
  }
  refuse_repeats(r, "devices", p.devices);
  FieldReader params = r.child("parameters");
  for (const ParameterInfo& info : calibration_parameters()) {
    std::optional<FieldReader> one = params.opt_child(info.name);
    if (!one) continue;
    FittedParameter f;
    f.name = std::string(info.name);
    if (info.unit == ParameterUnit::kTime) {
      f.value = one->quantity("value", Unit::kTime, Bound::kNonNegative);
      f.uncertainty = one->quantity("uncertainty", Unit::kTime, Bound::kNonNegative);
    } else {
      // Any non-negative number here: one over the share's bound is said with the bound below.
      f.value = one->number("value", 0, std::numeric_limits<double>::infinity());
      f.uncertainty = one->number("uncertainty", 0, 1e6);
    }
    if (!(f.value <= info.max)) {  // a share as written, not rounded: 1.0000001 is over 1
      // As written where the bound's own format would round it onto the bound ("50 ms is over 50 ms").
      std::string shown = info.unit == ParameterUnit::kTime ? info.format(f.value) : format_double("%.9g", f.value);
      if (shown == info.format(info.max)) shown = format_double("%.12g s", f.value);
      one->error("value", shown + " is over " + info.format(info.max) + ", " + std::string(info.beyond));
    }
    f.value += 0.0;  // -0 is 0: never shown as "-0 s"
    f.uncertainty += 0.0;
    if (one->opt_node("measured")) {  // held through the fit: where it was measured
      f.measured = one->text("measured");
      if (is_blank(f.measured)) one->error("measured", "is empty; say where the value was measured (file, GPU, date), or leave the field out for a fitted value");
    }
    if (one->opt_node("held_from")) {  // held through the fit at another profile's fitted value
      f.held_from = one->text("held_from");
      if (is_blank(f.held_from)) one->error("held_from", "is empty; name the profile whose fitted value is held, or leave the field out for a fitted value");
      if (!f.measured.empty()) one->error("held_from", "beside `measured`: a value is measured or held from another profile's fit, not both");
    }
    one->finish();
    p.parameters.push_back(std::move(f));
  }
  params.finish();  // names an unknown parameter, with the known ones
  if (r.opt_node("transferred_to")) {
    for (FieldReader c : r.list("transferred_to")) {
      TransferredDevice t;
      t.device = c.name("device");
      t.why = c.text("why");
      if (t.device.empty()) {
        // missing, or not a name: said by name() already
      } else if (std::find(known.begin(), known.end(), t.device) == known.end()) {
        c.error("device", unknown_device_message(t.device, known));
      } else if (std::find(p.devices.begin(), p.devices.end(), t.device) != p.devices.end()) {
        c.error("device", in_quotes(t.device) + " is in devices: the profile was fitted on it, not transferred to it");
      } else if (p.transfer_to(t.device) != nullptr) {
        c.error("device", in_quotes(t.device) + " is listed twice");
      }
      if (is_blank(t.why) && c.readable()) c.error("why", "is empty; say why the parameters carry over to this GPU type");
      if (c.opt_node("parameters")) {  // only these carry over (default: every one); names() refuses an empty list
        t.parameters = c.names("parameters");
        refuse_repeats(c, "parameters", t.parameters);
        for (const std::string& name : t.parameters) {
          if (std::none_of(p.parameters.begin(), p.parameters.end(), [&](const FittedParameter& f) { return f.name == name; })) {
            std::vector<std::string> held;
            for (const FittedParameter& f : p.parameters) held.push_back(f.name);
            c.error("parameters", in_quotes(name) + " is not a parameter of this profile (it holds " + join(held) + ")");
          }
        }
      }
      c.finish();
      p.transferred_to.push_back(std::move(t));
    }
  }
  p.fitted_on = r.names("fitted_on");
  refuse_repeats(r, "fitted_on", p.fitted_on);
  if (r.opt_node("cross_validation")) {
    int rows = 0;
    for (FieldReader c : r.list("cross_validation")) {
      CrossValidatedClass k;
      k.name = c.text("class");
      k.rows = static_cast<int>(c.integer("rows", 1, 1000000));
      k.in_sample_mean = read_share(c, "in_sample_mean");
      k.in_sample_max = read_share(c, "in_sample_max");
      k.loso_mean = read_share(c, "loso_mean");
      k.loso_max = read_share(c, "loso_max");
      c.finish();
      rows += k.rows;
      p.classes.push_back(std::move(k));
    }
    // Each run fitted on is a row of one class (`hetsim calibrate` writes them so).
    if (rows != static_cast<int>(p.fitted_on.size())) {
      r.error("cross_validation", "counts " + counted(static_cast<size_t>(rows), "row") + " over its classes, but fitted_on lists " +
                                      counted(p.fitted_on.size(), "run") + "; each run fitted on is a row of one class");
    }
  }
  if (r.opt_node("runs")) {
    for (FieldReader c : r.list("runs")) {
      CrossValidatedRun k;
      k.run = c.name("run");
      k.source = c.text("source");
      // An error is predicted / measured - 1: never below -1 (a prediction of nothing).
      k.in_sample_error = c.number("in_sample_error", -1, kMaxProfileError);
      k.loso_error = c.number("loso_error", -1, kMaxProfileError);
      k.loso_unfitted = c.opt_flag("loso_unfitted").value_or(false);
      if (std::find(p.fitted_on.begin(), p.fitted_on.end(), k.run) == p.fitted_on.end()) {
        c.error("run", in_quotes(k.run) + " is not in fitted_on: the profile's runs are the ones it was fitted on");
      } else if (std::any_of(p.runs.begin(), p.runs.end(), [&](const CrossValidatedRun& x) { return x.run == k.run; })) {
        c.error("run", in_quotes(k.run) + " is listed twice");
      }
      c.finish();
      p.runs.push_back(std::move(k));
    }
  }
  r.finish();
  if (const std::optional<YAML::Node> n = r.opt_node("parameters"); n && n->IsMap() && n->size() == 0) {
    r.error("parameters", "holds no parameter; a profile sets at least one");
  }
  diags.throw_if_any();
  return p;
}

std::string calibration_profile_text(const CalibrationProfile& p) {
  std::ostringstream o;
  // A value of `f` in the file's syntax (a name no parameter has: a time, as before shares existed).
  auto value = [](const FittedParameter& f, double v) {
    const ParameterInfo* info = find_calibration_parameter(f.name);
    return info != nullptr ? info->file_value(v) : format_double("%.6g", v * 1e6) + "us";
  };
  o << "# Calibration profile (docs/formats/calibration-profile.md), written by hetsim calibrate.\n";
  o << "name: " << quoted(p.name) << "\n";
  o << "software: " << quoted(p.software) << "\n";
  o << "fitted: " << p.fitted << "\n";
  if (!p.era.empty() && p.era != p.fitted) o << "era: " << p.era << "\n";
  auto list = [](const std::vector<std::string>& names) {  // ["a", "b"]
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + quoted(names[i]);
    return out + "]";
  };
  o << "devices: " << list(p.devices) << "\n";
  if (!p.transferred_to.empty()) {
    o << "transferred_to:\n";
    for (const TransferredDevice& t : p.transferred_to) {
      o << "  - {device: " << quoted(t.device) << ", why: " << quoted(t.why);
      if (!t.parameters.empty()) o << ", parameters: " << list(t.parameters);
      o << "}\n";
    }
  }
  o << "parameters:\n";
  for (const FittedParameter& f : p.parameters) {
    o << "  " << f.name << ": {value: " << value(f, f.value) << ", uncertainty: " << value(f, f.uncertainty);
    if (!f.measured.empty()) o << ", measured: " << quoted(f.measured);
    if (!f.held_from.empty()) o << ", held_from: " << quoted(f.held_from);
    o << "}\n";
  }
  o << "fitted_on:\n";
  for (const std::string& run : p.fitted_on) o << "  - " << quoted(run) << "\n";
  if (!p.classes.empty()) {
    o << "# |error| per class: with the parameters fitted on every run (in sample), and with each source's runs\n"
         "# left out of the fit that predicts them (loso: the honest figure).\n";
    o << "cross_validation:\n";
    for (const CrossValidatedClass& c : p.classes) {
      o << "  - {class: " << quoted(c.name) << ", rows: " << c.rows << ", in_sample_mean: " << format_double("%.4f", c.in_sample_mean)
        << ", in_sample_max: " << format_double("%.4f", c.in_sample_max) << ", loso_mean: " << format_double("%.4f", c.loso_mean)
        << ", loso_max: " << format_double("%.4f", c.loso_max) << "}\n";
    }
  }
  if (!p.runs.empty()) {
    o << "runs:\n";
    for (const CrossValidatedRun& c : p.runs) {
      o << "  - {run: " << quoted(c.run) << ", source: " << quoted(c.source) << ", in_sample_error: "
        << format_double("%.4f", c.in_sample_error) << ", loso_error: " << format_double("%.4f", c.loso_error)
        << (c.loso_unfitted ? ", loso_unfitted: true" : "") << "}\n";
    }
  }
  return o.str();
}

const std::vector<CalibrationProfile>& shipped_calibration_profiles() {
  static const std::vector<CalibrationProfile> profiles = [] {
    std::vector<CalibrationProfile> all;
    for (const auto& f : files_with_extension(data_root() / "kernels_profile/calibrations", ".yaml")) {
      CalibrationProfile p = load_calibration_profile(f);
      for (const CalibrationProfile& q : all) {
        if (q.name == p.name) throw InputError(f.string(), "name", in_quotes(p.name) + " is also the name of " + q.file + ": each shipped profile has its own");
      }
      all.push_back(std::move(p));
    }
    return all;
  }();
  return profiles;
}

namespace {

enum class Choice { kShipped, kNone, kOne };
struct InForce {
  std::mutex mutex;
  Choice choice = Choice::kShipped;
  CalibrationProfile one;
};
InForce& in_force() {
  static InForce s;
  return s;
}

}  // namespace

void use_shipped_calibrations() {
  std::lock_guard lock(in_force().mutex);
  in_force().choice = Choice::kShipped;
}

void use_no_calibration() {
  std::lock_guard lock(in_force().mutex);
  in_force().choice = Choice::kNone;
}

void use_calibration_profile(CalibrationProfile profile) {
  std::lock_guard lock(in_force().mutex);
  in_force().choice = Choice::kOne;
  in_force().one = std::move(profile);
}

void use_calibration(const std::string& arg) {
  if (arg == "none") return use_no_calibration();
  if (arg == "shipped") return use_shipped_calibrations();
  // An empty value is an unset variable more often than a choice: never silently the default.
  if (arg.empty()) throw InputError("--calibration", "", "empty: give shipped, none or a calibration profile file");
  use_calibration_profile(load_calibration_profile(resolve_input(arg, "kernels_profile/calibrations", "calibration profile")));
}

CalibrationScope::CalibrationScope(const std::string& arg) {
  {
    std::lock_guard lock(in_force().mutex);
    choice_ = static_cast<int>(in_force().choice);
    one_ = in_force().one;
  }
  use_calibration(arg);
}

CalibrationScope::~CalibrationScope() {
  std::lock_guard lock(in_force().mutex);
  in_force().choice = static_cast<Choice>(choice_);
  in_force().one = std::move(one_);
}

bool shipped_calibrations_in_force() {
  std::lock_guard lock(in_force().mutex);
  return in_force().choice == Choice::kShipped;
}

const CalibrationProfile* calibration_file_in_force() { return in_force().choice == Choice::kOne ? &in_force().one : nullptr; }

std::optional<CalibrationProfile> calibration_for(std::string_view device) {
  InForce& s = in_force();
  std::unique_lock lock(s.mutex);
  if (s.choice == Choice::kNone) return std::nullopt;
  if (s.choice == Choice::kOne) return s.one.covers(device) ? std::optional(s.one) : std::nullopt;
  lock.unlock();
  // The profile of the most recent software era that lists it; of one era, one fitted on this GPU type
  // before one transferred to it, then the most recently fitted; of two fitted the same day, the one
  // for fewer GPU types (the more specific), then the first by name.
  const auto before = [device](const CalibrationProfile& x, const CalibrationProfile& y) {
    if (x.era != y.era) return x.era > y.era;
    const bool x_fitted = x.transfer_to(device) == nullptr, y_fitted = y.transfer_to(device) == nullptr;
    if (x_fitted != y_fitted) return x_fitted;
    if (x.fitted != y.fitted) return x.fitted > y.fitted;
    if (x.devices.size() != y.devices.size()) return x.devices.size() < y.devices.size();
    return x.name < y.name;
  };
  const CalibrationProfile* best = nullptr;
  for (const CalibrationProfile& p : shipped_calibration_profiles()) {
    if (p.covers(device) && (best == nullptr || before(p, *best))) best = &p;
  }
  return best ? std::optional(*best) : std::nullopt;
}

std::string profile_identity(const CalibrationProfile& p) {
  for (const CalibrationProfile& q : shipped_calibration_profiles()) {
    if (q.name != p.name) continue;
    const bool same = q.parameters.size() == p.parameters.size() &&
                      std::equal(q.parameters.begin(), q.parameters.end(), p.parameters.begin(),
                                 [](const FittedParameter& a, const FittedParameter& b) { return a.name == b.name && a.value == b.value; });
    return same ? p.name : p.name + " (" + (p.file.empty() ? std::string("not the shipped values") : p.file) + ")";
  }
  return p.name;
}

std::set<std::string> profiles_in_force(const std::set<std::string>& devices) {
  std::set<std::string> out;
  for (const std::string& d : devices) {
    const std::optional<CalibrationProfile> p = calibration_for(d);
    out.insert(p ? profile_identity(*p) : "none");
  }
  return out;
}

std::optional<CalibrationProfile> calibration_applying(std::string_view device, bool moe) {
  std::optional<CalibrationProfile> p = calibration_for(device);
  if (p && !moe) {
    FittedCosts f = p->fitted_costs_on(device);
    f.moe_layer_s = f.expert_gemm_s = 0;
    const TransferredDevice* t = p->transfer_to(device);
    if (f == FittedCosts{} && (t == nullptr || t->parameters.empty())) p.reset();
  }
  return p;
}

void apply_calibration(Device& device) {
  const std::optional<CalibrationProfile> p = calibration_for(device.name);
  device.fitted = p ? p->fitted_costs_on(device.name) : FittedCosts{};
  device.calibration = p ? p->describe_on(device.name) : "";
}

}  // namespace hetsim
