// File: studies/sweep/sweep.cpp
#include "studies/sweep/sweep.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/digest.hpp"
#include "base/field_override.hpp"
#include "base/yaml_reader.hpp"
#include "base/input_error.hpp"
#include "base/log.hpp"
#include "base/progress.hpp"
#include "base/temp_dir.hpp"
#include "base/text.hpp"
#include "studies/sweep/mpi_pool.hpp"
#include "studies/sweep/results_db.hpp"
#include "studies/sweep/results_table.hpp"
#include "studies/sweep/scenario_rows.hpp"
#include "studies/sweep/study_file.hpp"
#include "studies/sweep/worker_pool.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {
namespace {

// The YAML tree of a study's cluster or model, or why it cannot be read (its scenarios then fail
// the same way). A tree that yaml_tree_problems refuses is never walked nor dumped: it may not end.
struct InputTree {
  YAML::Node root;
  std::string unreadable;
};
InputTree input_tree(const std::string& arg, const char* folder, const char* what) {
  try {
    return {YamlFile::load(resolve_input(arg, folder, what)).tree(), {}};  // (its size, shape and text checked)
  } catch (const InputError& e) {
    return {{}, e.diagnostics().front().str()};
  }
}

// The input as the scenario reads it: the file's YAML with the scenario's edits, re-emitted.
std::string resolved_yaml(const std::string& arg, const char* folder, const char* what, const std::vector<FieldOverride>& sets) {
  InputTree t = input_tree(arg, folder, what);
  if (!t.unreadable.empty()) return "unreadable: " + t.unreadable;
  try {
    OverrideMarks marks;
    apply_overrides(t.root, sets, marks);
    return YAML::Dump(t.root);
  } catch (const std::exception& e) {  // the scenario will fail the same way: key it by the text
    return std::string("unreadable: ") + e.what();
  }
}

// Every axis's field path leads somewhere in the study's own cluster or model, and each of its
// values, set alone, makes a cluster or model that loads: a path that does not would fail every
// scenario of the study the same way, and a bad value (top_k above the experts, a control
// character in a name) every scenario that has it, each recorded as an error.
void check_axes(const Study& study) {
  std::vector<Diagnostic> bad;
  for (size_t i = 0; i < study.axes.size() && bad.size() < 50; ++i) {
    const StudyAxis& axis = study.axes[i];
    if (axis.is_flags() || axis.values.empty()) continue;
    const bool cluster = axis.path.rfind("cluster.", 0) == 0;
    InputTree t = cluster ? input_tree(study.cluster, "topologies", "cluster") : input_tree(study.model, "workloads", "model");
    if (!t.unreadable.empty()) continue;  // the scenarios report it
    const std::string field = "vary[" + std::to_string(i) + "].values";
    try {
      const std::vector<FieldOverride> sets{parse_override(axis.path + "=" + axis.values.front())};
      OverrideMarks marks;
      apply_overrides(t.root, overrides_for(sets, cluster ? "cluster" : "model"), marks);
    } catch (const InputError& e) {
      bad.push_back({study.file, axis.line, axis.column, "vary[" + std::to_string(i) + "].set", e.diagnostics().front().message});
      continue;
    }
    for (size_t k = 0; k < axis.values.size() && bad.size() < 50; ++k) {
      try {
        const std::vector<FieldOverride> sets{parse_override(axis.path + "=" + axis.values[k])};
        if (cluster) {
          (void)load_cluster(resolve_input(study.cluster, "topologies", "cluster"), overrides_for(sets, "cluster"));
        } else {
          (void)load_model(resolve_input(study.model, "workloads", "model"), overrides_for(sets, "model"));
        }
      } catch (const InputError& e) {
        bad.push_back({study.file, axis.line, axis.column, field + "[" + std::to_string(k) + "]",
                       axis.values[k].substr(0, 80) + ": " + e.diagnostics().front().located_message()});
      }
    }
  }
  if (!bad.empty()) throw InputError(bad);
}

// Every alternative of a flags axis makes a valid command line with the study's run: an unknown
// or malformed flag would fail every scenario that has it, each recorded as an error.
void check_flags(const Study& study, const ScenarioRunner& runner) {
  std::vector<Diagnostic> bad;
  // The study's own cluster, model and command line, once (a cluster that is nowhere, or
  // strategy: dp-bogus, failed every scenario the same way).
  for (const auto& [field, arg, folder, where] : {std::tuple{"cluster", study.cluster, "topologies", study.cluster_where},
                                                   std::tuple{"model", study.model, "workloads", study.model_where}}) {
    try {
      (void)resolve_input(arg, folder, field);
    } catch (const InputError& e) {
      Diagnostic d = where.file.empty() ? Diagnostic{study.file, 0, 0, field, ""} : where;
      d.field = field;
      d.message = e.diagnostics().front().message;
      bad.push_back(std::move(d));
    }
  }
  if (!bad.empty()) throw InputError(bad);  // (the command line below would say it again)
  try {
    runner.check(scenario_args(study, Scenario{}));
  } catch (const InputError& e) {
    // A problem of the cluster, model or plan file as read there, with its line and field; one of
    // the run's options (no file of its own) at the study.
    for (const Diagnostic& d : e.diagnostics()) {
      const bool in_a_file = (d.line > 0 && !d.file.empty() && d.file.front() != '-') || (!study.plan.empty() && d.file == study.plan);
      bad.push_back(in_a_file ? d : Diagnostic{study.file, 0, 0, "", d.message});
    }
  }
  if (!bad.empty()) throw InputError(bad);
  for (size_t i = 0; i < study.axes.size(); ++i) {
    const StudyAxis& axis = study.axes[i];
    for (const std::vector<std::string>& alternative : axis.flags) {
      Scenario s;
      s.flags = alternative;
      try {
        runner.check(scenario_args(study, s));
      } catch (const InputError& e) {
        std::string text;
        for (const std::string& f : alternative) text += (text.empty() ? "" : ", ") + f;
        bad.push_back({study.file, axis.line, axis.column, "vary[" + std::to_string(i) + "].flags",
                       "[" + text + "]: " + e.diagnostics().front().located_message()});
      }
    }
  }
  if (!bad.empty()) throw InputError(bad);
}

// The scenario's key: its resolved cluster, model and plan, its command line and hetsim's version.
std::string scenario_key(const Study& study, const Scenario& s, const std::string& version) {
  std::vector<FieldOverride> sets;
  std::string text = "hetsim " + version + "\n";
  for (const std::string& set : s.sets) {
    try {
      sets.push_back(parse_override(set));
    } catch (const InputError& e) {
      text += std::string("bad set: ") + e.what() + "\n";
    }
  }
  for (const std::string& a : scenario_args(study, s)) text += a + "\n";
  if (study.run == "plan") text += study.hold_plan ? "plans: held\n" : "plans: re-planned, the baseline's kept\n";
  // Named alternatives: their names are the rows' axes (a study without names keys as before).
  if (std::any_of(study.axes.begin(), study.axes.end(), [](const StudyAxis& x) { return !x.names.empty(); })) {
    text += "axes: " + s.axes.dump() + "\n";
  }
  text += "--- cluster\n" + resolved_yaml(study.cluster, "topologies", "cluster", overrides_for(sets, "cluster"));
  text += "\n--- model\n" + resolved_yaml(study.model, "workloads", "model", overrides_for(sets, "model"));
  if (!study.plan.empty()) text += "\n--- plan\n" + slurp(study.plan);
  return digest(text);
}

// `text` with the baseline's plan file, `path`, named as "the baseline's plan" wherever it appears:
// the same study gives the same rows, bit for bit, whatever scratch folder it ran in.
std::string naming_the_baseline(std::string text, const std::string& path) {
  for (size_t at = text.find(path); at != std::string::npos; at = text.find(path, at)) text.replace(at, path.size(), "the baseline's plan");
  return text;
}

// Runs one scenario in this (worker) process; returns its row as JSON.
// A plan study's report says what the scenario did with plans (`plans`: held, or re-planned).
std::string run_scenario(const Study& study, const Scenario& s, const TempDir& scratch, const std::string& baseline_plan,
                         const ScenarioRunner& runner) {
  std::string out = runner.run(scenario_args(study, s, baseline_plan), scratch, false);
  if (study.run != "plan") return out;
  nlohmann::json row = nlohmann::json::parse(out, nullptr, false);
  if (study.hold_plan && !baseline_plan.empty() && row.is_object() && row.value("status", "") == "error" &&
      !row.value("machine_limit", false)) {
    // The held plan refused by this scenario's cluster or model (its GPUs, their count, the model's
    // operators): a result, not a failure of the run. Said without the scratch file's name.
    const std::string why = row.value("error", std::string());
    if (why.find(baseline_plan) != std::string::npos && !why.starts_with("internal error")) {  // a bug stays an error
      return nlohmann::json{{"status", "infeasible"},
                            {"error", "the baseline's plan does not fit this scenario: " + naming_the_baseline(why, baseline_plan)}}
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  if (!row.is_object() || !row.contains("report")) return out;
  nlohmann::json report = nlohmann::json::parse(row.value("report", std::string()), nullptr, false);
  if (!report.is_object()) return out;
  report["plans"] = study.hold_plan ? "held" : "re-planned";
  std::string text = report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!baseline_plan.empty()) {
    const std::string path = nlohmann::json(baseline_plan).dump();  // as the JSON text spells it
    text = naming_the_baseline(std::move(text), path.substr(1, path.size() - 2));
  }
  row["report"] = std::move(text);
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The baseline's plan (run: plan): the study's cluster and model as written, planned once, its plan
// written into `scratch`. Returns the file, or empty with `why` set where the baseline has none.
// `here`: plan in this process (an MPI rank's own, whose output is silenced); else in a worker.
std::string baseline_plan(const Study& study, const TempDir& scratch, bool here, std::string& why, const ScenarioRunner& runner) {
  if (study.run != "plan") return "";
  const auto plan_it = [&] { return runner.run(scenario_args(study, Scenario{}), scratch, /*with_plan=*/true); };
  std::string out;
  if (here) {
    out = plan_it();
  } else {
    run_in_workers(1, 1, [&](size_t) { return plan_it(); }, [&](const JobOutcome& o) { out = o.died ? std::string() : o.output; });
  }
  const nlohmann::json row = nlohmann::json::parse(out, nullptr, false);
  const nlohmann::json report = row.is_object() ? nlohmann::json::parse(row.value("report", std::string()), nullptr, false) : nlohmann::json();
  if (!report.is_object() || !report.contains("plan") || !report["plan"].is_string()) {
    why = row.is_object() ? row.value("error", std::string("no plan was chosen")) : "the baseline's planning failed";
    return "";
  }
  return scratch.new_file("baseline", ".plan.yaml", report["plan"].get<std::string>()).string();
}

}  // namespace

SweepOutcome sweep(const std::filesystem::path& study_file, const SweepOptions& a, const ScenarioRunner& runner, std::ostream& out) {
  // Under mpirun with several ranks: rank 0 coordinates and writes the database, the others run
  // scenarios (mpi_pool.hpp); every rank expands the study itself, jobs travel as positions.
  std::optional<MpiSession> mpi;
  if (mpi_launched()) {
    if (!mpi_built()) {
      throw InputError("mpirun", "", "this hetsim was built without MPI, so its ranks would each run the whole study; "
                                     "install libopenmpi-dev and rebuild, or use --jobs N");
    }
    mpi.emplace();
  }
  const Study study = load_study(study_file);
  check_axes(study);
  check_flags(study, runner);
  const size_t total = scenario_count(study);
  if (a.dry_run) {
    out << "study " << study.name << ": " << total << " scenario(s), checked; nothing run (--dry-run)\n";
    for (const std::string& note : study.notes) out << "note: " << note << "\n";
    if (study.run == "plan") out << plans_policy(study) << "\n";
    return {study.name, total, 0, 0, 0, 0, {}};
  }
  const TempDir scratch("sweep");  // the workers' reports; a TMPDIR that cannot hold it stops the sweep here
  std::string no_baseline;
  if (mpi && mpi->rank() != 0) {  // each rank plans the baseline itself (the same plan: deterministic)
    const std::string held = baseline_plan(study, scratch, /*here=*/true, no_baseline, runner);
    mpi->run({}, [&](size_t position) {
      if (study.hold_plan && held.empty()) {  // nothing to hold: each scenario says so, none silently re-planned
        return nlohmann::json{{"status", "error"}, {"error", "hold_plan: the baseline has no plan to hold: " + no_baseline}}.dump(
            -1, ' ', false, nlohmann::json::error_handler_t::replace);
      }
      return run_scenario(study, scenario_at(study, position), scratch, held, runner);
    }, {});
    return {study.name, total, 0, 0, 0, 0, {}};  // a worker rank: rank 0 reports
  }
  const std::filesystem::path db_path = a.db.empty() ? std::filesystem::path(study_file).replace_extension(".db") : a.db;
  ResultsDb db(db_path);
  std::set<std::string> done = db.keys();
  if (a.retry_errors) {
    for (const ScenarioRow& r : db.rows()) {
      if (r.status == "error") done.erase(r.scenario);
    }
  }
  std::vector<size_t> pending;  // positions of the scenarios to run, made again when they run
  std::vector<std::string> keys;
  for (size_t i = 0; i < total; ++i) {
    std::string key = scenario_key(study, scenario_at(study, i), runner.version);
    if (done.contains(key)) continue;
    pending.push_back(i);
    keys.push_back(std::move(key));
  }
  out << "study " << study.name << ": " << total << " scenario(s), " << total - pending.size()
            << " already in " << db_path.string() << ", " << pending.size() << " to run on "
            << (mpi ? std::to_string(mpi->size() - 1) + " MPI rank(s)" : std::to_string(a.jobs) + " worker(s)") << "\n";
  for (const std::string& note : study.notes) out << "note: " << note << "\n";
  if (study.run == "plan") out << plans_policy(study) << "\n";
  out.flush();
  std::string held;  // the baseline's plan, where there is something to run (MPI ranks plan their own)
  // Planned only where a scenario runs it: held, or re-planned without planner flags.
  const bool needs_baseline = study.run == "plan" && (study.hold_plan || std::any_of(pending.begin(), pending.end(), [&](size_t i) {
                                return scenario_at(study, i).flags.empty();
                              }));
  if (needs_baseline && !mpi) {
    log_info("planning the baseline (the study's cluster and model as written) ...");
    held = baseline_plan(study, scratch, /*here=*/false, no_baseline, runner);
    if (held.empty() && study.hold_plan) {
      throw InputError(study.file, "", "hold_plan: the baseline (the study's cluster and model as written) has no plan to hold: " + no_baseline);
    }
    if (held.empty()) out << "note: the baseline has no plan (" << printable(no_baseline) << "); scenarios are re-planned without it\n";
  }
  Progress bar(pending.size(), "scenarios");
  size_t finished = 0, failed = 0, infeasible = 0, limited = 0;
  std::string first_limit;
  CalibrationSpread spread;  // the scenarios run now (those already in the database were said when they ran)
  const auto record = [&](const JobOutcome& o) {
    const Scenario s = scenario_at(study, pending[o.job]);
    ScenarioRow row;
    row.scenario = keys[o.job];
    row.study = study.name;
    row.position = static_cast<long>(s.index);
    row.axes = s.axes.dump();
    row.wall_s = o.wall_s;
    if (fill_row(row, o)) {  // a limit of this machine: left for the next resume, not stored
      if (limited++ == 0) first_limit = row.error;
    } else {
      failed += row.status == "error";
      infeasible += row.status == "infeasible";
      if (row.status == "ok") spread.add(finished + 1, nlohmann::json::parse(row.report, nullptr, false));
      db.put(row);
    }
    ++finished;
    const size_t bad = failed + limited;
    bar.update(finished, bad > 0 ? std::to_string(bad) + " failed" : "");
  };
  if (mpi) {
    mpi->run(pending, {}, record);
  } else {
    run_in_workers(pending.size(), a.jobs, [&](size_t i) { return run_scenario(study, scenario_at(study, pending[i]), scratch, held, runner); }, record);
  }
  bar.finish();
  out << "ran " << finished << ": " << finished - failed - infeasible - limited << " ok, " << infeasible << " infeasible, " << failed
            << " error(s)" << (limited > 0 ? ", " + std::to_string(limited) + " not stored (a limit of this machine)" : "")
            << "; results in " << db_path.string() << " (hetsim report " << db_path.string() << ")\n";
  if (const std::string note = spread.note(false); !note.empty()) {
    out << "note: " << printable(note) << " (hetsim report " << db_path.string() << " names the rows)\n";
  }
  out.flush();
  if (limited > 0) {
    // Not an outcome of the scenarios: resuming the sweep (where more memory is) runs them again.
    throw InputError(db_path.string(), "",
                     std::to_string(limited) + " scenario(s) hit a limit of this machine and were not stored; the sweep runs them "
                     "again when resumed. The first: " + first_limit)
        .set_machine_limit();
  }
  return {study.name, total, total - pending.size(), finished - failed - infeasible, infeasible, failed, db_path};
}

}  // namespace hetsim
