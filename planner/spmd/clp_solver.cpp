// File: planner/spmd/clp_solver.cpp
// The only file that includes COIN-OR CLP: loads an LpModel in bulk and solves it.
#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>

#include <cmath>

#include "planner/spmd/lp_model.hpp"

namespace hetsim {

namespace {
double clp_bound(double v) { return std::isinf(v) ? (v > 0 ? COIN_DBL_MAX : -COIN_DBL_MAX) : v; }
}  // namespace

LpSolution solve_lp(const LpModel& m) {
  LpSolution out;
  if (m.cols() == 0) {
    out.status = LpStatus::kOptimal;
    return out;
  }
  const CoinPackedMatrix matrix(/*colordered=*/false, m.a_row.data(), m.a_col.data(), m.a_value.data(),
                                static_cast<CoinBigIndex>(m.a_value.size()));
  std::vector<double> cl(m.col_lower), cu(m.col_upper), rl(m.row_lower), ru(m.row_upper);
  for (double& v : cl) v = clp_bound(v);
  for (double& v : cu) v = clp_bound(v);
  for (double& v : rl) v = clp_bound(v);
  for (double& v : ru) v = clp_bound(v);
  ClpSimplex solver;
  solver.setLogLevel(0);
  // The matrix may have fewer rows/columns than the model when trailing ones are empty.
  CoinPackedMatrix full(matrix);
  full.setDimensions(m.rows(), m.cols());
  solver.loadProblem(full, cl.data(), cu.data(), m.cost.data(), rl.data(), ru.data());
  solver.dual();
  switch (solver.status()) {
    case 0: out.status = LpStatus::kOptimal; break;
    case 1: out.status = LpStatus::kInfeasible; break;
    case 2: out.status = LpStatus::kUnbounded; break;
    default: out.status = LpStatus::kFailed; break;
  }
  if (out.status == LpStatus::kOptimal) {
    out.objective = solver.objectiveValue();
    out.x.assign(solver.primalColumnSolution(), solver.primalColumnSolution() + m.cols());
  }
  return out;
}

}  // namespace hetsim
