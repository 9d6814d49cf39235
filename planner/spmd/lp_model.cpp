// File: planner/spmd/lp_model.cpp
#include "planner/spmd/lp_model.hpp"

#include <sstream>

#include "base/text.hpp"

namespace hetsim {

int LpModel::add_col(double lower, double upper, double cost_coeff, std::string name) {
  col_lower.push_back(lower);
  col_upper.push_back(upper);
  cost.push_back(cost_coeff);
  col_names.push_back(name.empty() ? indexed_name("x", cost.size() - 1) : std::move(name));
  return cols() - 1;
}

int LpModel::add_row(double lower, double upper, const std::vector<std::pair<int, double>>& terms) {
  const int r = rows();
  row_lower.push_back(lower);
  row_upper.push_back(upper);
  for (const auto& [col, v] : terms) {
    a_row.push_back(r);
    a_col.push_back(col);
    a_value.push_back(v);
  }
  return r;
}

std::string_view lp_status_name(LpStatus s) {
  switch (s) {
    case LpStatus::kOptimal: return "optimal";
    case LpStatus::kInfeasible: return "infeasible";
    case LpStatus::kUnbounded: return "unbounded";
    case LpStatus::kFailed: return "failed";
  }
  return "?";
}

std::string LpModel::str() const {
  std::ostringstream out;
  out << "minimise";
  for (int c = 0; c < cols(); ++c) {
    if (cost[c] != 0) out << " + " << cost[c] << " " << col_names[c];
  }
  std::vector<std::vector<std::pair<int, double>>> by_row(rows());
  for (size_t i = 0; i < a_value.size(); ++i) by_row[a_row[i]].push_back({a_col[i], a_value[i]});
  for (int r = 0; r < rows(); ++r) {
    out << "\n  " << row_lower[r] << " <=";
    for (const auto& [c, v] : by_row[r]) out << " + " << v << " " << col_names[c];
    out << " <= " << row_upper[r];
  }
  for (int c = 0; c < cols(); ++c) out << "\n  " << col_lower[c] << " <= " << col_names[c] << " <= " << col_upper[c];
  return out.str();
}

}  // namespace hetsim
