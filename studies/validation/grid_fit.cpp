// File: studies/validation/grid_fit.cpp
#include "studies/validation/grid_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace hetsim {

size_t grid_size(size_t params, size_t axis) {
  size_t n = 1;
  for (size_t j = 0; j < params; ++j) n *= axis;
  return n;
}

namespace {

double objective(const std::vector<std::vector<double>>& logp, const std::vector<double>& logm, const std::vector<double>& scales,
                 const std::vector<double>& axis, const std::vector<size_t>& rows, const std::vector<double>& theta) {
  double f = 0;
  for (const size_t i : rows) {
    const double r = interpolate(logp[i], scales, axis, theta) - logm[i];
    f += r * r;
  }
  return f;
}

}  // namespace

double interpolate(const std::vector<double>& on_grid, const std::vector<double>& scales, const std::vector<double>& axis,
                   const std::vector<double>& theta) {
  const size_t p = scales.size();
  std::vector<size_t> cell(p);
  std::vector<double> t(p);
  for (size_t j = 0; j < p; ++j) {
    const double x = std::clamp(theta[j] / scales[j], axis.front(), axis.back());
    size_t k = 0;
    while (k + 2 < axis.size() && x > axis[k + 1]) ++k;
    cell[j] = k;
    t[j] = (x - axis[k]) / (axis[k + 1] - axis[k]);
  }
  double v = 0;
  for (size_t corner = 0; corner < (size_t{1} << p); ++corner) {
    double w = 1;
    size_t g = 0;
    for (size_t j = 0; j < p; ++j) {
      const bool up = (corner >> j) & 1;
      w *= up ? t[j] : 1 - t[j];
      g = g * axis.size() + cell[j] + (up ? 1 : 0);
    }
    if (w > 0) v += w * std::exp(on_grid[g]);
  }
  return std::log(v);
}

GridFit fit_on_grid(const std::vector<std::vector<double>>& logp, const std::vector<double>& logm, const std::vector<double>& scales,
                    const std::vector<double>& axis, const std::vector<bool>& used, const std::vector<size_t>& rows) {
  const size_t p = scales.size();
  std::vector<size_t> free;
  for (size_t j = 0; j < p; ++j) {
    if (used[j]) free.push_back(j);
  }
  GridFit fit;
  fit.values.assign(p, 0);
  fit.uncertainties.assign(p, 0);
  // A search on a fine grid of the box (64 steps a parameter; fewer past four free parameters, so
  // that it stays under 2e7 points), then Gauss-Newton from its best point.
  size_t steps = 64;
  while (steps > 4 && std::pow(static_cast<double>(steps + 1), static_cast<double>(free.size())) > 2e7) steps /= 2;
  std::vector<double> best(p, 0);
  double best_f = objective(logp, logm, scales, axis, rows, best);
  const size_t points = grid_size(free.size(), steps + 1);
  for (size_t g = 0; g < points; ++g) {
    std::vector<double> theta(p, 0);
    size_t rest = g;
    for (size_t k = free.size(); k-- > 0;) {
      theta[free[k]] = axis.back() * scales[free[k]] * static_cast<double>(rest % (steps + 1)) / steps;
      rest /= steps + 1;
    }
    if (const double f = objective(logp, logm, scales, axis, rows, theta); f < best_f) {
      best_f = f;
      best = theta;
    }
  }
  // Jacobian of the residuals in units of each parameter's scale (central differences, one-sided at the box's edges).
  auto jacobian = [&](const std::vector<double>& theta) {
    Eigen::MatrixXd J(rows.size(), free.size());
    for (size_t k = 0; k < free.size(); ++k) {
      const size_t j = free[k];
      const double h = 1e-6 * scales[j];  // small: a one-sided difference at the box's edge agrees with a central one
      std::vector<double> lo = theta, hi = theta;
      lo[j] = std::max(0.0, theta[j] - h);
      hi[j] = std::min(axis.back() * scales[j], theta[j] + h);
      const double span = (hi[j] - lo[j]) / scales[j];
      for (size_t r = 0; r < rows.size(); ++r) {
        const auto& g = logp[rows[r]];
        J(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(k)) =
            span > 0 ? (interpolate(g, scales, axis, hi) - interpolate(g, scales, axis, lo)) / span : 0;
      }
    }
    return J;
  };
  for (int it = 0; it < 30 && !free.empty(); ++it) {
    const Eigen::MatrixXd J = jacobian(best);
    Eigen::VectorXd res(static_cast<Eigen::Index>(rows.size()));
    for (size_t r = 0; r < rows.size(); ++r) {
      res(static_cast<Eigen::Index>(r)) = interpolate(logp[rows[r]], scales, axis, best) - logm[rows[r]];
    }
    Eigen::MatrixXd A = J.transpose() * J;
    A.diagonal().array() += 1e-9;
    const Eigen::VectorXd step = A.ldlt().solve(-J.transpose() * res);
    std::vector<double> next = best;
    for (size_t k = 0; k < free.size(); ++k) {
      const size_t j = free[k];
      next[j] = std::clamp(best[j] + step(static_cast<Eigen::Index>(k)) * scales[j], 0.0, axis.back() * scales[j]);
    }
    const double f = objective(logp, logm, scales, axis, rows, next);
    if (!(f < best_f - 1e-15)) break;
    best_f = f;
    best = next;
  }
  fit.values = best;
  fit.rss = best_f;
  if (!free.empty()) {
    const Eigen::MatrixXd J = jacobian(best);
    fit.column_norms.assign(p, 0);
    for (size_t k = 0; k < free.size(); ++k) fit.column_norms[free[k]] = J.col(static_cast<Eigen::Index>(k)).norm();
  }
  // One standard deviation: the residuals' variance times (JᵀJ)⁻¹, in each parameter's units.
  if (!free.empty() && rows.size() > free.size()) {
    const Eigen::MatrixXd J = jacobian(best);
    const Eigen::MatrixXd A = J.transpose() * J;
    const double sigma2 = best_f / static_cast<double>(rows.size() - free.size());
    Eigen::FullPivLU<Eigen::MatrixXd> lu(A);
    lu.setThreshold(1e-8);
    fit.separable = lu.isInvertible();
    if (fit.separable) {
      const Eigen::MatrixXd cov = sigma2 * lu.inverse();
      for (size_t k = 0; k < free.size(); ++k) {
        const double var = cov(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k));
        fit.uncertainties[free[k]] = var > 0 && std::isfinite(var) ? std::sqrt(var) * scales[free[k]] : 0;
      }
    }
  }
  return fit;
}

}  // namespace hetsim
