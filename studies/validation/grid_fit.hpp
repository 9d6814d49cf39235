// File: studies/validation/grid_fit.hpp
// A least-squares fit on a grid surrogate (hetsim calibrate, calibration_fit.hpp): each run's log
// predicted time at every point of a grid of parameter values (each axis `axis` x the parameter's
// scale) is interpolated multilinearly in between and fitted to the logs of the measured times.
#pragma once

#include <cstddef>
#include <vector>

namespace hetsim {

// Points on a grid of `params` axes of `axis` values each.
[[nodiscard]] size_t grid_size(size_t params, size_t axis);

// The fit: `log_predicted`[run][grid point] (points in row-major order over the parameters, the last
// fastest) fitted to `log_measured`[run] over `rows`; `used` marks the parameters fitted (the others
// held at 0). The values, one standard deviation each, and how well the runs separate them.
struct GridFit {
  std::vector<double> values;
  std::vector<double> uncertainties;
  double rss = 0;
  bool separable = true;              // the fitted parameters' effects are not in proportion on these runs
  std::vector<double> column_norms;   // each parameter's effect on the runs (0 where not fitted)
};
[[nodiscard]] GridFit fit_on_grid(const std::vector<std::vector<double>>& log_predicted, const std::vector<double>& log_measured,
                                  const std::vector<double>& scales, const std::vector<double>& axis,
                                  const std::vector<bool>& used, const std::vector<size_t>& rows);
// The log of the multilinear interpolation of one run's times at `theta`, its grid holding their logs.
[[nodiscard]] double interpolate(const std::vector<double>& on_grid, const std::vector<double>& scales,
                                 const std::vector<double>& axis, const std::vector<double>& theta);

}  // namespace hetsim
