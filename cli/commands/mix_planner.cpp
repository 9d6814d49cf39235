// File: cli/commands/mix_planner.cpp
#include "cli/commands/mix_planner.hpp"

#include "base/data_dir.hpp"
#include "base/digest.hpp"
#include "base/log.hpp"
#include "base/progress.hpp"
#include "base/text.hpp"
#include "cli/commands/scenario_run.hpp"
#include "studies/sweep/scenario_rows.hpp"
#include "studies/sweep/worker_pool.hpp"

namespace hetsim::cli {

MixPlanner::MixPlanner(const Sizing& s, std::string model_path, const SizeArgs& a)
    : s_(s), model_path_(std::move(model_path)), db_(a.db.empty() ? std::filesystem::path(a.sizing).replace_extension(".db")
                                                                  : std::filesystem::path(a.db)),
      jobs_(a.jobs), dir_("size") {
  for (ScenarioRow& r : db_.rows()) {
    if (a.retry_errors && r.status == "error") continue;
    rows_.emplace(r.scenario, std::move(r));
  }
  model_text_ = slurp(model_path_);
}

// Plans every mix not yet in the database; returns the rows in the order of `mixes`.
std::vector<PlannedMix> MixPlanner::plan(const std::vector<Mix>& mixes, const std::string& what) {
  std::vector<std::string> keys;
  std::vector<size_t> pending;
  for (size_t i = 0; i < mixes.size(); ++i) {
    keys.push_back(key(mixes[i]));
    if (!rows_.contains(keys.back())) pending.push_back(i);
  }
  if (!pending.empty()) {
    log_info("planning " + std::to_string(pending.size()) + " " + what + " (" + std::to_string(mixes.size() - pending.size()) +
             " already in " + db_path() + ") on " + std::to_string(jobs_) + " worker(s)");
    std::vector<std::filesystem::path> files;
    for (size_t i : pending) files.push_back(dir_.new_file("mix", ".yaml", cluster_yaml(mixes[i])));
    Progress bar(pending.size(), "plans");
    size_t finished = 0, failed = 0;
    run_in_workers(
        pending.size(), jobs_,
        [&](size_t j) {
          std::vector<std::string> args{"plan", "--cluster", files[j].string(), "--model", model_path_};
          args.insert(args.end(), s_.flags.begin(), s_.flags.end());
          return run_scenario_here(args, dir_, true);
        },
        [&](const JobOutcome& o) {
          const Mix& m = mixes[pending[o.job]];
          ScenarioRow row;
          row.scenario = keys[pending[o.job]];
          row.study = s_.name;
          row.position = static_cast<long>(pending[o.job]);
          row.axes = nlohmann::json{{"nodes", mix_nodes_json(s_, m)}}.dump();
          row.wall_s = o.wall_s;
          const bool machine_limit = fill_row(row, o);
          failed += row.status == "error";
          if (!machine_limit) db_.put(row);  // a limit of this machine: planned again on the next run
          rows_[row.scenario] = row;
          bar.update(++finished, failed > 0 ? std::to_string(failed) + " failed" : "");
        });
    bar.finish();
  }
  std::vector<PlannedMix> out;
  for (const std::string& k : keys) {
    const ScenarioRow& r = rows_.at(k);
    PlannedMix p;
    p.status = r.status;
    p.error = r.error;
    p.samples_per_s = r.samples_per_s;
    p.mfu = r.mfu;
    p.efficiency = r.efficiency;
    p.iteration_time_s = r.iteration_time_s;
    if (!r.report.empty()) p.report = nlohmann::json::parse(r.report, nullptr, false);
    out.push_back(std::move(p));
  }
  return out;
}


// The plan's inputs and hetsim's version: the cluster, the model file, the switches.
std::string MixPlanner::key(const Mix& m) const {
  std::string text = std::string("hetsim ") + HETSIM_VERSION + " size\n" + cluster_yaml(m) + "--- model\n" + model_text_ + "--- flags\n";
  for (const std::string& f : s_.flags) text += f + "\n";
  return digest(text);
}

}  // namespace hetsim::cli
