// File: studies/validation/calibration_fit.hpp
// `hetsim calibrate`: fits a calibration profile's parameters (kernels_profile/calibration_profile.hpp)
// to measured training and collective runs, and says how well it predicts runs it was not fitted on.
//
// Each run is simulated on a grid of parameter values (0, 1, 2 and 4 times each parameter's typical
// value, every combination); its predicted time (a rate's inverse: busbw, throughput) is
// interpolated multilinearly between the grid's points, which is exact where a parameter adds time
// in proportion to its value (host and fixed times; shares of some kernels' time). The fit
// minimises the sum of squared log errors over the runs (each run weighs one) inside the grid's
// box: a search on a fine grid, then Gauss-Newton steps (Eigen). A
// parameter whose every run's prediction moves by less than 0.1 % over its range, or that the runs
// cannot tell from another, is refused by name. Uncertainties are one standard deviation from the
// residuals and the Jacobian. The fitted values are then checked by simulating every run at them
// (in-sample errors), and leave-one-source-out: for each source (ValidationRun::source_group), the
// parameters are fitted on the other sources' runs (a parameter they leave unconstrained held at 0)
// and that source's runs simulated at them: the honest error.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels_profile/calibration_profile.hpp"
#include "kernels_profile/cost_model.hpp"
#include "sim/executor.hpp"
#include "studies/validation/grid_fit.hpp"
#include "studies/validation/run_file.hpp"

namespace hetsim {

struct CalibrateOptions {
  std::vector<std::string> parameters;  // names to fit (empty: every parameter)
  std::string name = "calibrated";      // the profile's name
  std::string software;                 // the stack the runs ran
  std::string date;                     // ISO date of the fit
  std::string era;                      // ISO date of the stack (empty: the fit's date)
  // Parameters held through the fit (in every simulation: the runs as they are, the grid, each fold),
  // not fitted: at measured values (FittedParameter::measured) or at another profile's fitted ones
  // (FittedParameter::held_from), written into the profile as given.
  std::vector<FittedParameter> measured;
};

// A fitted profile, its parameters refused (one message each) and the predictions it made.
struct CalibrationFit {
  CalibrationProfile profile;
  std::vector<std::string> refused;
  std::vector<std::string> left_out;  // runs not fitted on, and why
};

// Fits on the training and collective runs of `runs` with a time-like measured figure (busbw is one:
// its inverse is a time; others are left out, and
// so are runs that fail to predict at the grid's origin). Throws InputError when no run is left or
// no parameter is constrained, or the runs are of one source. `progress`(done, total, unit) after
// each simulation; the fit runs in phases (the runs as they are, each parameter alone, the grid),
// each with its own unit and total.
using CalibrationProgress = std::function<void(size_t done, size_t total, const std::string& unit)>;
[[nodiscard]] CalibrationFit fit_calibration(const std::vector<ValidationRun>& runs, const CostModel& cost,
                                             const SimOptions& sim, const CalibrateOptions& options,
                                             const CalibrationProgress& progress = {});

}  // namespace hetsim
