// File: cli/commands/calibrate_command.hpp
// `hetsim calibrate --runs FILE... --out PROFILE`: fits a calibration profile to measured runs
// (studies/validation/calibration_fit.hpp), prints each parameter with its uncertainty, the
// parameters the runs leave unconstrained, and the in-sample and leave-one-source-out error per
// class, and writes the profile that simulate, plan and validate take with --calibration.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace hetsim::cli {

struct CalibrateArgs {
  std::vector<std::string> runs;
  std::vector<std::string> only;  // every text in the run's name
  std::vector<std::string> skip;  // no text in the run's name
  std::string out;
  std::vector<std::string> parameters;
  std::string name = "calibrated";
  std::string software;
  std::string date;  // not given: today (UTC)
  std::string era;   // not given: the date
  bool date_given = false, era_given = false;
  std::vector<std::string> measured;  // NAME=VALUE: held at a measured value, not fitted
  std::string measured_source;        // where those were measured
  std::vector<std::string> hold;      // NAME=PROFILE: held at the value another profile fitted, not fitted
};

void add_calibrate_options(CLI::App* cmd, CalibrateArgs& a);
int run_calibrate(const CalibrateArgs& a);

}  // namespace hetsim::cli
