// File: cli/commands/mix_planner.hpp
// How `hetsim size` plans mixes (the planning studies/sizing's run_sizing is given): `hetsim plan`
// on each mix's cluster in worker processes, each result kept in the results database under a
// key of its inputs and hetsim's version, so a second run plans only what is new.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"
#include "cli/commands/size_command.hpp"
#include "studies/sizing/sizing.hpp"
#include "studies/sweep/results_db.hpp"

namespace hetsim::cli {

// Plans mixes in worker processes, each result kept in the database under its key.
class MixPlanner {
 public:
  MixPlanner(const Sizing& s, std::string model_path, const SizeArgs& a);
  MixPlanner(const MixPlanner&) = delete;
  MixPlanner& operator=(const MixPlanner&) = delete;

  [[nodiscard]] std::string cluster_yaml(const Mix& m) const { return mix_cluster_yaml(s_, m.counts, s_.name + "-" + mix_name(s_, m)); }

  // Plans every mix not yet in the database; returns the rows in the order of `mixes`.
  std::vector<PlannedMix> plan(const std::vector<Mix>& mixes, const std::string& what);
  [[nodiscard]] std::string db_path() const { return db_.path().string(); }

 private:
  // The plan's inputs and hetsim's version: the cluster, the model file, the switches.
  [[nodiscard]] std::string key(const Mix& m) const;

  const Sizing& s_;
  std::string model_path_;
  std::string model_text_;
  ResultsDb db_;
  int jobs_;
  TempDir dir_;  // the mixes' cluster files and the workers' reports
  std::map<std::string, ScenarioRow> rows_;
};

}  // namespace hetsim::cli
