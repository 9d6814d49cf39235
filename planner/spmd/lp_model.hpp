// File: planner/spmd/lp_model.hpp
// A linear program as a plain value (struct of arrays, as HiGHS keeps it): built, copied,
// printed and tested without a solver. Solved by solve_lp() (clp_solver.cpp, the only file that
// includes COIN-OR CLP).
//   minimise cost . x   subject to   row_lower <= A x <= row_upper,   col_lower <= x <= col_upper
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace hetsim {

inline constexpr double kLpInfinity = std::numeric_limits<double>::infinity();

struct LpModel {
  std::vector<double> col_lower, col_upper, cost;
  std::vector<std::string> col_names;  // for printing
  std::vector<double> row_lower, row_upper;
  // Constraint matrix as triplets, loaded in bulk (adding rows one by one is O(n^2) in CLP).
  std::vector<int> a_row, a_col;
  std::vector<double> a_value;

  int add_col(double lower, double upper, double cost_coeff, std::string name = "");
  // Adds lower <= sum(coeff_i x_{col_i}) <= upper and returns its index.
  int add_row(double lower, double upper, const std::vector<std::pair<int, double>>& terms);
  [[nodiscard]] int cols() const { return static_cast<int>(cost.size()); }
  [[nodiscard]] int rows() const { return static_cast<int>(row_lower.size()); }
  [[nodiscard]] std::string str() const;  // human-readable, for debugging and tests
};

enum class LpStatus { kOptimal, kInfeasible, kUnbounded, kFailed };
[[nodiscard]] std::string_view lp_status_name(LpStatus s);

struct LpSolution {
  LpStatus status = LpStatus::kFailed;
  double objective = 0;
  std::vector<double> x;
};

// Solves with CLP's dual simplex. An infeasible or unbounded model is a status, not an error.
[[nodiscard]] LpSolution solve_lp(const LpModel& model);

}  // namespace hetsim
