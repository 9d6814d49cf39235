// File: studies/validation/calibration_fit.cpp
#include "studies/validation/calibration_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/input_error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "kernels_profile/device.hpp"
#include "studies/validation/calibration.hpp"
#include "studies/validation/run_evaluation.hpp"

namespace hetsim {

namespace {

// Multiples of a parameter's typical value the grid holds.
const std::vector<double> kAxis = {0, 1, 2, 4};
// A parameter no run's prediction moves by this much (in log) over its range is unconstrained.
constexpr double kLeastEffect = 1e-3;

// The most parameters one fit takes: a grid of 4^6 = 4096 simulations a setting.
constexpr size_t kMostFitted = 6;

// Grid point `g` as parameter values (row-major, the last parameter fastest).
std::vector<double> grid_point(size_t g, const std::vector<double>& scales, const std::vector<double>& axis) {
  std::vector<double> theta(scales.size());
  for (size_t j = scales.size(); j-- > 0;) {
    theta[j] = axis[g % axis.size()] * scales[j];
    g /= axis.size();
  }
  return theta;
}

// How far `run`'s log-prediction moves as parameter j goes over its range, the others at 0 or at
// their largest value.
double effect(const std::vector<double>& on_grid, const std::vector<double>& scales, const std::vector<double>& axis, size_t j) {
  double most = 0;
  for (const double others : {0.0, axis.back()}) {
    std::vector<double> lo(scales.size()), hi(scales.size());
    for (size_t k = 0; k < scales.size(); ++k) lo[k] = hi[k] = others * scales[k];
    lo[j] = 0;
    hi[j] = axis.back() * scales[j];
    most = std::max(most, std::fabs(interpolate(on_grid, scales, axis, hi) - interpolate(on_grid, scales, axis, lo)));
  }
  return most;
}

struct Row {
  const ValidationRun* run = nullptr;
  size_t figure = 0;  // index of its time-like figure
  double measured = 0;
  std::string cls;
  const ValidationRun* setting = nullptr;  // the first run of its setting (same_setting), which predicts for it
  std::set<std::string> gpus;              // the GPU types it runs
  bool rate = false;                       // the figure is a rate (busbw, throughput): its inverse is a time
};

// A figure that is a time ("iteration_time_s", "forward_s"); the others of kind time are rates
// ("busbw_Bps", "samples_per_s", "tflops"), whose inverses are.
bool is_time(const std::string& key) { return key.ends_with("_s") && !key.ends_with("_per_s"); }

// Runs whose predictions are the same: a training run on the same cluster and nodes, with the same
// model, plan and settings, the same kinds of figures measured in the same order.
bool same_setting(const ValidationRun& a, const ValidationRun& b) {
  const auto keys = [](const ValidationRun& r) {
    std::vector<std::string> k;
    for (const MeasuredFigure& f : r.measured) k.push_back(f.key);
    return k;
  };
  return a.kind == RunKind::kTraining && b.kind == RunKind::kTraining && a.cluster == b.cluster && a.nodes == b.nodes &&
         a.training == b.training && keys(a) == keys(b);
}

class Fitter {
 public:
  Fitter(const CostModel& cost, const SimOptions& sim, std::vector<std::string> devices, std::vector<const ParameterInfo*> params,
         std::vector<FittedParameter> measured)
      : cost_(cost), sim_(sim), devices_(std::move(devices)), params_(std::move(params)), measured_(std::move(measured)) {}

  // The run's predicted figure with the parameters at `theta` (0 when it fails), remembered per
  // setting: runs of one setting share it (published tables repeat a layout across releases).
  // A parameter inert for a setting (it did not move the setting's prediction at all at the top of its
  // grid, the others at 0: a Mamba scan's share on a model without Mamba layers, a MoE host time on a
  // dense model) is taken as 0 there, so that the grid simulates each setting only over the parameters
  // that act on it. No effect there is taken as none anywhere in the box: true where the run lacks the
  // parameter's operators, and for a host time the kernels hide, since the others only lengthen kernels.
  double predict(const Row& row, const std::vector<double>& given) {
    std::vector<double> theta = given;
    if (const auto in = inert_.find(row.setting); in != inert_.end()) {
      for (size_t j = 0; j < theta.size(); ++j) theta[j] = in->second[j] ? 0 : theta[j];
    }
    auto key = std::make_pair(row.setting, std::move(theta));
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    CalibrationProfile trial;
    trial.name = "trial";
    trial.devices = devices_;
    for (size_t j = 0; j < params_.size(); ++j) trial.parameters.push_back({std::string(params_[j]->name), key.second[j], 0, ""});
    trial.parameters.insert(trial.parameters.end(), measured_.begin(), measured_.end());
    use_calibration_profile(std::move(trial));
    const RunResult r = evaluate_run(*row.run, cost_, sim_);  // at key.second: theta, inert ones at 0
    const double v = r.failure.empty() && row.figure < r.figures.size() ? r.figures[row.figure].predicted : 0;
    memo_.emplace(std::move(key), v);
    if (on_simulation_) on_simulation_();
    return v;
  }

  // A prediction made elsewhere, by the same simulation.
  void remember(const Row& row, const std::vector<double>& theta, double v) { memo_.emplace(std::make_pair(row.setting, theta), v); }

  // Parameters (a flag each) that do not act on `setting`'s runs.
  void set_inert(const ValidationRun* setting, std::vector<bool> inert) { inert_[setting] = std::move(inert); }

  std::function<void()> on_simulation_;  // called after each simulation (not for a remembered one)

 private:
  const CostModel& cost_;
  const SimOptions& sim_;
  std::vector<std::string> devices_;
  std::vector<const ParameterInfo*> params_;
  std::vector<FittedParameter> measured_;  // held at their values in every trial
  std::map<std::pair<const ValidationRun*, std::vector<double>>, double> memo_;
  std::map<const ValidationRun*, std::vector<bool>> inert_;
};

// Why a parameter is refused when no run moves it.
std::string unconstrained(const ParameterInfo& p) {
  return std::string(p.name) + ": no run's prediction moves by " + format_double("%.1f", 100 * kLeastEffect) + " % over 0-" +
         format_double("%g", kAxis.back()) + " x " + p.format(p.scale) + ", so these runs do not constrain it; it needs " +
         std::string(p.constrained_by);
}

// The runs left out, for a refusal that ends the fit (the first three, then how many more).
std::string left_out_said(const std::vector<std::string>& left_out) {
  if (left_out.empty()) return "";
  std::string s = " (left out: ";
  for (size_t i = 0; i < left_out.size() && i < 3; ++i) s += (i > 0 ? "; " : "") + left_out[i];
  if (left_out.size() > 3) s += "; and " + counted(left_out.size() - 3, "more run");
  return s + ")";
}

std::vector<const ParameterInfo*> chosen_parameters(const CalibrateOptions& o) {
  std::vector<const ParameterInfo*> out;
  std::vector<std::string> known;
  for (const ParameterInfo& p : calibration_parameters()) known.emplace_back(p.name);
  const auto held = [&](std::string_view name) {
    return std::any_of(o.measured.begin(), o.measured.end(), [&](const FittedParameter& m) { return m.name == name; });
  };
  for (const ParameterInfo& p : calibration_parameters()) {
    if (held(p.name)) continue;  // measured or held from another profile, not fitted
    if (o.parameters.empty() || std::find(o.parameters.begin(), o.parameters.end(), p.name) != o.parameters.end()) out.push_back(&p);
  }
  for (size_t i = 0; i < o.parameters.size(); ++i) {
    const std::string& name = o.parameters[i];
    if (std::find(o.parameters.begin(), o.parameters.begin() + static_cast<std::ptrdiff_t>(i), name) != o.parameters.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw InputError("--parameters", "", in_quotes(name) + " is named twice");
    }
    if (!find_calibration_parameter(name)) {
      throw InputError("--parameters", "", "unknown parameter " + in_quotes(name) + " (known: " + join(known) + ")" + did_you_mean(name, known));
    }
    if (held(name)) throw InputError("--parameters", "", in_quotes(name) + " is held (--measured or --hold), not fitted");
  }
  return out;
}

}  // namespace

CalibrationFit fit_calibration(const std::vector<ValidationRun>& given, const CostModel& cost, const SimOptions& sim,
                               const CalibrateOptions& options, const CalibrationProgress& progress) {
  // The fit is of the raw model plus its trial parameters: a run's own `calibration` (the profile
  // it names, perhaps this very one, fitted before) is not put in force here.
  std::vector<ValidationRun> runs = given;
  for (ValidationRun& run : runs) run.calibration.clear();
  std::vector<const ParameterInfo*> params = chosen_parameters(options);
  const size_t fittable = static_cast<size_t>(std::count_if(runs.begin(), runs.end(), [](const ValidationRun& r) {
    return r.kind == RunKind::kTraining || r.kind == RunKind::kCollective;
  }));
  // The runs it can fit on, and the GPU types they run (the profile's devices): at the grid's origin.
  struct Restore {  // trial profiles are put in force while it runs; none is left after
    ~Restore() { use_no_calibration(); }
  } restore;
  const std::vector<FittedParameter>& measured = options.measured;
  CalibrationFit out;
  size_t unmoved = 0;  // parameters refused because no run moves them
  std::vector<Row> rows;
  std::vector<double> at_origin;  // each row's prediction without a profile
  std::set<std::string> gpus;
  // The grid's origin: the raw model with the measured parameters alone in force, on every GPU type.
  if (measured.empty()) {
    use_no_calibration();
  } else {
    CalibrationProfile held;
    held.name = "measured";
    held.devices = shipped_device_names();
    held.parameters = measured;
    use_calibration_profile(std::move(held));
  }
  size_t evaluated = 0;
  for (const ValidationRun& run : runs) {
    if (run.kind != RunKind::kTraining && run.kind != RunKind::kCollective) {
      out.left_out.push_back(run.name + ": a " + std::string(run_kind_name(run.kind)) +
                             " run checks a profile's kernels one at a time; training and collective runs are fitted on");
      continue;
    }
    const RunResult r = evaluate_run(run, cost, sim);
    if (progress) progress(++evaluated, fittable, "runs simulated as they are");
    if (!r.failure.empty()) {
      out.left_out.push_back(run.name + ": no prediction (" + r.failure + ")");
      continue;
    }
    const bool timed = std::any_of(r.figures.begin(), r.figures.end(),
                                   [](const FigureResult& f) { return quantity_of(f.key) == Quantity::kTime && f.measured > 0; });
    if (!timed) {
      out.left_out.push_back(run.name + ": it measures no time, throughput or bus bandwidth (a profile's parameters are times)");
      continue;
    }
    for (size_t f = 0; f < r.figures.size(); ++f) {
      if (quantity_of(r.figures[f].key) != Quantity::kTime || !(r.figures[f].measured > 0)) continue;
      const auto same = std::find_if(rows.begin(), rows.end(), [&](const Row& x) { return same_setting(*x.run, run); });
      rows.push_back({&run, f, r.figures[f].measured, run.class_name.empty() ? default_class_name(r) : run.class_name,
                      same == rows.end() ? &run : same->setting, r.scope.gpus, !is_time(r.figures[f].key)});
      at_origin.push_back(r.figures[f].predicted);
      gpus.insert(r.scope.gpus.begin(), r.scope.gpus.end());
      for (size_t g = f + 1; g < r.figures.size(); ++g) {  // one figure a run: say the others
        if (quantity_of(r.figures[g].key) == Quantity::kTime) {
          out.left_out.push_back(run.name + "'s " + r.figures[g].key + ": a run is fitted on one figure, its first (" + r.figures[f].key + ")");
        }
      }
      break;
    }
  }
  if (rows.empty()) {
    throw InputError("--runs", "", "no training or collective run with a measured time, throughput or bus bandwidth predicts: nothing to fit on" +
                                       left_out_said(out.left_out));
  }
  // Each parameter alone at the top of its grid first: one no run moves is refused before the grid,
  // whose size is 4 to the power of the parameters (simulations a setting).
  std::vector<std::pair<size_t, std::pair<size_t, double>>> screened;  // (kept parameter, (row, prediction alone))
  std::map<const ValidationRun*, std::vector<bool>> inert;  // per setting, per kept parameter: no effect at all
  std::set<const ValidationRun*> settings;                   // the distinct settings the rows run
  for (const Row& r : rows) settings.insert(r.setting);
  if (params.size() > 1) {
    const size_t most = params.size() * settings.size();
    const std::string unit = "simulations screening " + counted(params.size(), "parameter");
    size_t done = 0;
    Fitter screen(cost, sim, {gpus.begin(), gpus.end()}, params, measured);
    screen.on_simulation_ = [&] {
      if (progress) progress(++done, most, unit);
    };
    std::vector<const ParameterInfo*> kept;
    for (size_t j = 0; j < params.size(); ++j) {
      std::vector<double> theta(params.size(), 0);
      theta[j] = kAxis.back() * params[j]->scale;
      bool moves = false;
      std::map<const ValidationRun*, bool> untouched;  // the prediction exactly as at the origin
      for (size_t i = 0; i < rows.size(); ++i) {
        const double v = screen.predict(rows[i], theta);
        moves = moves || !(v > 0) || std::fabs(std::log(v / at_origin[i])) >= kLeastEffect;
        const auto [at, fresh] = untouched.emplace(rows[i].setting, v == at_origin[i]);
        if (!fresh) at->second = at->second && v == at_origin[i];
        screened.push_back({kept.size(), {i, v}});
      }
      if (moves) {
        kept.push_back(params[j]);
        for (const auto& [setting, same] : untouched) inert[setting].push_back(same);
      } else {
        while (!screened.empty() && screened.back().first == kept.size()) screened.pop_back();
        out.refused.push_back(unconstrained(*params[j]));
        ++unmoved;
      }
    }
    params = kept;
    if (progress) progress(most, most, unit);
  }
  const size_t p = params.size();
  if (p == 0) {
    std::string why;
    for (const std::string& r : out.refused) why += (why.empty() ? " " : "; ") + r;
    throw InputError("--runs", "", "the runs constrain no parameter:" + why);
  }
  if (p > kMostFitted) {  // 4^p simulations a setting: 7 take 16 384, hours for a Megatron run
    std::string names;
    for (const ParameterInfo* info : params) names += (names.empty() ? "" : ", ") + std::string(info->name);
    throw InputError("--parameters", "", std::to_string(p) + " parameters move these runs (" + names + "): the fit's grid would take 4^" +
                                             std::to_string(p) + " simulations a setting; choose at most " + std::to_string(kMostFitted) +
                                             " with --parameters");
  }
  std::vector<double> scales;
  for (const ParameterInfo* info : params) scales.push_back(info->scale);
  Fitter fitter(cost, sim, {gpus.begin(), gpus.end()}, params, measured);
  for (const auto& [setting, flags] : inert) fitter.set_inert(setting, flags);
  for (size_t i = 0; i < rows.size(); ++i) fitter.remember(rows[i], std::vector<double>(p, 0), at_origin[i]);
  for (const auto& [k, at] : screened) {  // the screen's points are the grid's too
    std::vector<double> theta(p, 0);
    theta[k] = kAxis.back() * scales[k];
    fitter.remember(rows[at.first], theta, at.second);
  }
  const size_t points = grid_size(p, kAxis.size());
  // Simulations to run: each distinct setting on the grid, at the fit, and at each fold's fit that
  // leaves its source out.
  const auto distinct = [&](const std::function<bool(const Row&)>& in) {
    std::set<const ValidationRun*> settings;
    for (const Row& r : rows) {
      if (in(r)) settings.insert(r.setting);
    }
    return settings.size();
  };
  std::set<std::string> sources;
  for (const Row& r : rows) sources.insert(r.run->source_group);
  // Each setting's grid spans the parameters that act on it (the origin is known already).
  const auto acting = [&](const ValidationRun* setting, size_t k) {
    const auto in = inert.find(setting);
    return in == inert.end() || !in->second[k];
  };
  size_t total = 0;
  for (const ValidationRun* setting : settings) {
    size_t active = 0;
    for (size_t k = 0; k < p; ++k) active += acting(setting, k) ? 1 : 0;
    total += grid_size(active, kAxis.size());
  }
  for (const std::string& g : sources) total += distinct([&](const Row& r) { return r.run->source_group == g; });
  std::set<std::pair<size_t, const ValidationRun*>> known;  // the screen's simulations the grid takes
  for (const auto& [k, at] : screened) {
    if (acting(rows[at.first].setting, k)) known.insert({k, rows[at.first].setting});
  }
  total -= std::min(total, known.size());
  size_t done = 0;
  fitter.on_simulation_ = [&] {
    if (progress) progress(++done, std::max(total, done), "simulations on the grid and the leave-one-source-out fits");
  };
  std::vector<std::vector<double>> logp(rows.size(), std::vector<double>(points, 0));
  std::vector<double> logm(rows.size());
  std::vector<bool> predicts(rows.size(), true);
  // Times as they are, a rate (busbw, throughput) as its inverse: the surrogate interpolates times.
  const auto sign = [&](size_t i) { return rows[i].rate ? -1.0 : 1.0; };
  for (size_t i = 0; i < rows.size(); ++i) logm[i] = sign(i) * std::log(rows[i].measured);
  // Point by point, every run at each: runs differ a hundredfold in what a simulation costs, and
  // this order keeps the pace even, so that the bar's ETA holds from the first points on.
  for (size_t g = 0; g < points; ++g) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const double v = fitter.predict(rows[i], grid_point(g, scales, kAxis));
      if (!(v > 0)) predicts[i] = false;
      else logp[i][g] = sign(i) * std::log(v);
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!predicts[i]) out.left_out.push_back(rows[i].run->name + ": no prediction at some of the grid's parameter values");
  }
  std::vector<size_t> all;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (predicts[i]) all.push_back(i);
  }
  // Which parameters these rows constrain: some run moves, and the runs tell it from the others.
  auto constrained = [&](const std::vector<size_t>& on) {
    std::vector<bool> used(p, false);
    for (size_t j = 0; j < p; ++j) {
      for (const size_t i : on) used[j] = used[j] || effect(logp[i], scales, kAxis, j) >= kLeastEffect;
    }
    return used;
  };
  std::vector<bool> used = constrained(all);
  // Runs no fitted parameter moves say nothing of the fit (their error is the raw model's whatever
  // the values): left out of it, of its uncertainty and of the profile's runs and GPU types.
  const auto keep_moved = [&] {
    std::vector<size_t> moved;
    for (const size_t i : all) {
      bool any = false;
      for (size_t j = 0; j < p; ++j) any = any || (used[j] && effect(logp[i], scales, kAxis, j) >= kLeastEffect);
      if (any) moved.push_back(i);
      else out.left_out.push_back(rows[i].run->name + ": no fitted parameter moves its prediction (its error is the raw model's)");
    }
    const bool changed = moved.size() != all.size();
    all = std::move(moved);
    return changed;
  };
  if (std::count(used.begin(), used.end(), true) > 0) keep_moved();
  for (size_t j = 0; j < p; ++j) {
    if (!used[j]) {
      out.refused.push_back(unconstrained(*params[j]));
      ++unmoved;
    }
  }
  GridFit fit = fit_on_grid(logp, logm, scales, kAxis, used, all);
  // Parameters the runs cannot tell apart (their effects on every run proportional): the weaker goes.
  while (!fit.separable && std::count(used.begin(), used.end(), true) > 1) {
    size_t weakest = p;
    for (size_t j = 0; j < p; ++j) {
      if (used[j] && (weakest == p || fit.column_norms[j] < fit.column_norms[weakest])) weakest = j;
    }
    used[weakest] = false;
    out.refused.push_back(std::string(params[weakest]->name) + ": these runs cannot tell it from the other parameters (their "
                          "effects on every run are in proportion); it needs " + std::string(params[weakest]->constrained_by));
    fit = fit_on_grid(logp, logm, scales, kAxis, used, all);
  }
  // A parameter the fit pushed to the top of the range it searches: the runs want more than the
  // profile may say (at the physical bound: the model is wrong there, not the framework). Refused,
  // the others fitted again without it.
  for (bool again = true; again;) {
    again = false;
    for (size_t j = 0; j < p; ++j) {
      const double top = kAxis.back() * scales[j];
      if (!used[j] || fit.values[j] < top * (1 - 1e-3)) continue;
      used[j] = false;
      again = true;
      out.refused.push_back(std::string(params[j]->name) + ": the fit reached the top of its range (" + params[j]->format(top) +
                            ") and these runs want more" +
                            (top >= params[j]->max * (1 - 1e-9) ? ": " + std::string(params[j]->beyond) : std::string()));
    }
    if (again && std::count(used.begin(), used.end(), true) > 0) fit = fit_on_grid(logp, logm, scales, kAxis, used, all);
  }
  // Beside others, a parameter the runs do not pin down: its uncertainty (one standard deviation)
  // exceeds its value, so they cannot tell it from none. The least pinned is refused and the others
  // fitted again, while more than one is left (one alone at 0 ± a little is a finding: no excess).
  while (std::count(used.begin(), used.end(), true) > 1) {
    size_t worst = p;
    double worst_ratio = 1;
    for (size_t j = 0; j < p; ++j) {
      if (!used[j] || !(fit.uncertainties[j] > fit.values[j])) continue;
      const double ratio = fit.uncertainties[j] / std::max(fit.values[j], 1e-12 * scales[j]);
      if (ratio > worst_ratio) {
        worst = j;
        worst_ratio = ratio;
      }
    }
    if (worst == p) break;
    used[worst] = false;
    out.refused.push_back(std::string(params[worst]->name) + ": its uncertainty (± " + params[worst]->format(fit.uncertainties[worst]) +
                          ") exceeds its value (" + params[worst]->format(fit.values[worst]) +
                          "): beside the others these runs cannot tell it from none; it needs " + std::string(params[worst]->constrained_by));
    fit = fit_on_grid(logp, logm, scales, kAxis, used, all);
  }
  // Alone or not, one whose uncertainty exceeds its whole range (0 to its physical bound) says
  // nothing: the runs do not constrain it (e.g. runs far faster than the raw model, which no
  // parameter's value can make faster, leave it at 0 with an uncertainty over its bound).
  for (size_t j = 0; j < p; ++j) {
    if (!used[j] || !(fit.uncertainties[j] > params[j]->max)) continue;
    used[j] = false;
    out.refused.push_back(std::string(params[j]->name) + ": its uncertainty (± " + params[j]->format(fit.uncertainties[j]) +
                          ") exceeds its whole range (0 to " + params[j]->format(params[j]->max) +
                          "): these runs do not constrain it; it needs " + std::string(params[j]->constrained_by));
    if (std::count(used.begin(), used.end(), true) > 0) fit = fit_on_grid(logp, logm, scales, kAxis, used, all);
  }
  size_t free = static_cast<size_t>(std::count(used.begin(), used.end(), true));
  if (free > 0 && keep_moved()) fit = fit_on_grid(logp, logm, scales, kAxis, used, all);  // a parameter refused above moved them
  if (free > 0 && all.size() <= free) {
    throw InputError("--runs", "", "fitting " + counted(free, "parameter") + " needs more than " + counted(free, "run") + " that " +
                                       (free == 1 ? "it moves" : "they move") + "; " + std::to_string(all.size()) + " left" +
                                       left_out_said(out.left_out));
  }
  if (free == 0) {
    std::string why;
    for (const std::string& r : out.refused) why += (why.empty() ? " " : "; ") + r;
    throw InputError("--runs", "", std::string(unmoved == out.refused.size() ? "the runs constrain no parameter:" : "no parameter is left to fit:") + why);
  }
  CalibrationProfile& prof = out.profile;
  prof.name = options.name;
  prof.software = options.software;
  prof.fitted = options.date;
  prof.era = options.era.empty() ? options.date : options.era;
  std::set<std::string> fitted_gpus;
  for (const size_t i : all) fitted_gpus.insert(rows[i].gpus.begin(), rows[i].gpus.end());
  prof.devices = {fitted_gpus.begin(), fitted_gpus.end()};
  for (size_t j = 0; j < p; ++j) {
    if (used[j]) prof.parameters.push_back({std::string(params[j]->name), fit.values[j], fit.uncertainties[j], ""});
  }
  prof.parameters.insert(prof.parameters.end(), measured.begin(), measured.end());
  // In sample: every run simulated at the fitted values; leave one source out: each source's runs at
  // the values fitted without them.
  std::map<std::string, std::vector<size_t>> by_source;
  for (const size_t i : all) by_source[rows[i].run->source_group].push_back(i);
  std::vector<double> in_sample(rows.size(), 0), loso(rows.size(), 0);
  std::vector<bool> unfitted(rows.size(), false);  // its fold fitted nothing: its loso error is the raw model's
  for (const size_t i : all) {
    in_sample[i] = fitter.predict(rows[i], fit.values) / rows[i].measured - 1;
  }
  for (const auto& [source, held_out] : by_source) {
    std::vector<size_t> rest;
    for (const size_t i : all) {
      if (rows[i].run->source_group != source) rest.push_back(i);
    }
    std::vector<bool> fold_used = rest.empty() ? std::vector<bool>(p, false) : constrained(rest);
    for (size_t j = 0; j < p; ++j) fold_used[j] = fold_used[j] && used[j];
    // A fold needs at least as many runs as parameters: fewer leave a line of equally good values,
    // and the left-out runs' error would be one arbitrary point of it. Such a fold fits nothing, and
    // its runs keep the raw model's error (loso_unfitted). (The whole fit needs more, to state its
    // uncertainties; a fold only predicts.)
    if (static_cast<size_t>(std::count(fold_used.begin(), fold_used.end(), true)) > rest.size()) fold_used.assign(p, false);
    const bool nothing = std::none_of(fold_used.begin(), fold_used.end(), [](bool u) { return u; });
    GridFit f;
    f.values.assign(p, 0);  // no other source, or fewer runs than parameters: every parameter held at 0
    if (!nothing) f = fit_on_grid(logp, logm, scales, kAxis, fold_used, rest);
    for (const size_t i : held_out) {
      loso[i] = fitter.predict(rows[i], f.values) / rows[i].measured - 1;
      unfitted[i] = nothing;
    }
  }
  // A run the fit leaves more than a profile holds off (kMaxProfileError) measured something other
  // than what it names: said at its entry, not written into a profile hetsim would refuse to read.
  std::vector<Diagnostic> absurd;
  for (const size_t i : all) {
    const double worst = std::max(in_sample[i], loso[i]);
    if (!(worst > kMaxProfileError)) continue;
    Diagnostic d = rows[i].run->where;
    d.field = "measured";
    d.message = "predicted " + format_double("%.0f", 1 + worst) + " times the measured figure even fitted: it cannot be of "
                "this run (a profile holds errors up to " + format_double("%.0f", 100 * kMaxProfileError) + " %)";
    absurd.push_back(std::move(d));
  }
  if (!absurd.empty()) throw InputError(absurd);
  std::map<std::string, CrossValidatedClass> classes;
  for (const size_t i : all) {
    prof.fitted_on.push_back(rows[i].run->name);
    prof.runs.push_back({rows[i].run->name, rows[i].run->source_group, in_sample[i], loso[i], unfitted[i]});
    CrossValidatedClass& c = classes[rows[i].cls];
    c.name = rows[i].cls;
    ++c.rows;
    c.in_sample_mean += std::fabs(in_sample[i]);
    c.loso_mean += std::fabs(loso[i]);
    c.in_sample_max = std::max(c.in_sample_max, std::fabs(in_sample[i]));
    c.loso_max = std::max(c.loso_max, std::fabs(loso[i]));
  }
  for (auto& [name, c] : classes) {
    c.in_sample_mean /= c.rows;
    c.loso_mean /= c.rows;
    prof.classes.push_back(c);
  }
  return out;
}

}  // namespace hetsim
