// File: tests/studies/sweep_test.cpp
// Studies: expansion of the axes, the worker pool surviving a crashing job, and `hetsim sweep`
// resuming after a kill without running a finished scenario again.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/data_dir.hpp"
#include "base/field_override.hpp"
#include "base/input_error.hpp"
#include "base/temp_dir.hpp"
#include "studies/sweep/results_db.hpp"
#include "studies/sweep/study_file.hpp"
#include "studies/sweep/worker_pool.hpp"
#include "studies/sweep_support.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

using test::cache_dir;
using test::scratch;
using test::start_sweep;
using test::temp;
using test::wait_for;
using test::write_study;

const char* kStudy = R"(name: t
cluster: a100-v100-2x2
model: gpt3-1.3b
run: simulate
strategy: dp-proportional
vary:
  - set: cluster.node_types[*].nic.bandwidth
    values: [50Gbps, 100Gbps, 200Gbps, 400Gbps]
  - set: model.training.global_batch
    values: [128, 256, 512]
)";

TEST(Study, AxesExpandToTheirProductLastAxisFastest) {
  const Study s = load_study(write_study("expand", std::string(kStudy) + "  - flags: [[], [--no-lp]]\n"));
  ASSERT_EQ(scenario_count(s), 24u);
  std::vector<Scenario> all;
  for (size_t i = 0; i < scenario_count(s); ++i) all.push_back(scenario_at(s, i));
  EXPECT_EQ(all[0].sets, (std::vector<std::string>{"cluster.node_types[*].nic.bandwidth=50Gbps", "model.training.global_batch=128"}));
  EXPECT_TRUE(all[0].flags.empty());
  EXPECT_EQ(all[1].flags, std::vector<std::string>{"--no-lp"});
  EXPECT_EQ(all[23].axes["model.training.global_batch"], "512");
  EXPECT_EQ(all[23].axes["cluster.node_types[*].nic.bandwidth"], "400Gbps");
  EXPECT_EQ(all[23].axes["flags"], "--no-lp");
}

// What loading the study `text` throws (empty: it loads).
std::string study_error(const std::string& text) {
  try {
    (void)load_study(write_study("bad", text));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string();
}

TEST(Study, BadStudiesNameFileLineAndField) {
  const auto error = study_error;
  EXPECT_NE(error("name: x\ncluster: c\nmodel: m\nrun: simulate\n").find("simulate needs strategy"), std::string::npos);
  EXPECT_NE(error("name: x\ncluster: c\nmodel: m\nvary:\n  - set: nodes.x\n    values: [1]\n").find(":5:10: error: vary[0].set: a field path starts with cluster. or model."),
            std::string::npos)
      << error("name: x\ncluster: c\nmodel: m\nvary:\n  - set: nodes.x\n    values: [1]\n");
  EXPECT_NE(error("name: x\ncluster: c\nmodel: m\nvary:\n  - flags: [--no-lp]\n").find("each alternative is a list"), std::string::npos);
  EXPECT_NE(error("name: x\ncluster: c\nmodel: m\nvray: []\n").find("did you mean \"vary\""), std::string::npos);
}

TEST(Study, AProductPastAnyIntegerIsCountedNotWrappedAround) {
  // Seven axes of 1000 values make 1e21 scenarios: the refusal said -9223372036854775808 (a double
  // past 2^63 cast to a 64-bit integer, undefined behaviour).
  std::string text = "name: x\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\nvary:\n";
  const std::vector<std::string> fields{"nic.bandwidth", "nic.latency", "intra_node.latency", "intra_node.bandwidth"};
  for (int axis = 0; axis < 7; ++axis) {
    text += "  - set: cluster.node_types[" + std::to_string(axis % 2) + "]." + fields[static_cast<size_t>(axis / 2)] + "\n    values: [";
    const std::string unit = fields[static_cast<size_t>(axis / 2)].ends_with("latency") ? "us" : "GBps";
    for (int v = 1; v <= 1000; ++v) text += (v > 1 ? ", " : "") + std::to_string(v + 1000 * (axis % 2)) + unit;
    text += "]\n";
  }
  const std::string e = study_error(text);
  EXPECT_NE(e.find("error: vary: the axes make 1e+21 scenarios; at most 1000000"), std::string::npos) << e.substr(0, 400);
  EXPECT_EQ(e.find("-9223372036854775808"), std::string::npos);
}

TEST(Study, NamedAlternativesAreTheRowsAxesAndTheirValuesTheEdits) {
  // Issue 36: a node type replaced whole printed the whole mapping in every row and plot label.
  const Study s = load_study(write_study("named", "name: n\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nvary:\n"
                                                  "  - set: cluster.node_types[*].nic.bandwidth\n"
                                                  "    values: {slow: 100Gbps, fast: 400Gbps}\n"
                                                  "  - flags: {search: [], no-lp: [--no-lp]}\n"));
  ASSERT_EQ(scenario_count(s), 4u);
  EXPECT_EQ(s.axes[0].names, (std::vector<std::string>{"slow", "fast"}));  // file order
  const Scenario last = scenario_at(s, 3);
  EXPECT_EQ(last.sets, std::vector<std::string>{"cluster.node_types[*].nic.bandwidth=400Gbps"});
  EXPECT_EQ(last.flags, std::vector<std::string>{"--no-lp"});
  EXPECT_EQ(last.axes["cluster.node_types[*].nic.bandwidth"], "fast");
  EXPECT_EQ(last.axes["flags"], "no-lp");
  // The shipped what-if names its node types.
  const Study what_if = load_study(test::source_dir() / "studies/what-if/what-if.yaml");
  EXPECT_EQ(scenario_at(what_if, 5).axes["cluster.node_types[1]"], "mi250x");
  // A name twice, an empty or unprintable one, a mapping as a name, and a value twice under two names.
  const std::string head = "name: n\ncluster: c\nmodel: m\nvary:\n  - set: model.training.global_batch\n";
  EXPECT_NE(study_error(head + "    values: {a: 128, a: 256}\n").find(":6:22: error: vary[0].values.a: written twice (first on line 6)"),
            std::string::npos)
      << study_error(head + "    values: {a: 128, a: 256}\n");
  EXPECT_NE(study_error(head + "    values: {\"\": 128}\n").find("vary[0].values: a name of an alternative is a word of 1 to 64"),
            std::string::npos);
  EXPECT_NE(study_error(head + "    values: {\"a\\x1b[31m\": 128}\n").find("a name of an alternative"), std::string::npos);
  EXPECT_NE(study_error(head + "    values: {[x]: 128}\n").find("a key must be a plain name"), std::string::npos);
  EXPECT_NE(study_error(head + "    values: {a: 128, b: 128}\n").find("is listed twice"), std::string::npos);
  EXPECT_NE(study_error(head + "    values: {}\n").find("a mapping of names to values"), std::string::npos);
}

TEST(WorkerPool, AJobThatKillsItsWorkerIsReportedAndTheRestRun) {
  std::map<size_t, JobOutcome> got;
  run_in_workers(
      8, 2,
      [](size_t job) -> std::string {
        if (job == 3) std::abort();
        return "job" + std::to_string(job);
      },
      [&](const JobOutcome& o) { got[o.job] = o; });
  ASSERT_EQ(got.size(), 8u);
  for (size_t j = 0; j < 8; ++j) {
    EXPECT_EQ(got[j].died, j == 3) << j;
    if (j != 3) {
      EXPECT_EQ(got[j].output, "job" + std::to_string(j));
    }
  }
  EXPECT_NE(got[3].output.find("signal 6"), std::string::npos) << got[3].output;
}

TEST(Study, AReplacedNodeTypeAndAFieldOfEveryNodeTypeApplyInAxisOrder) {
  // Issue 35: the shipped what-if (swap the V100 nodes, and also change every NIC) was refused as
  // two axes on one field.
  const Study what_if = load_study(test::source_dir() / "studies/what-if/what-if.yaml");
  ASSERT_EQ(what_if.notes.size(), 1u);
  EXPECT_EQ(what_if.notes[0], "vary[0] (cluster.node_types[1]) and vary[1] (cluster.node_types[*].nic.bandwidth) edit one node "
                              "type; they apply in axis order, so vary[1]'s nic.bandwidth holds on the replacing node type too");
  ASSERT_EQ(scenario_count(what_if), 6u);
  const Scenario fifth = scenario_at(what_if, 5);
  // Scenario 5: MI250X nodes (their own NICs 200Gbps) and every NIC at 400Gbps: 400 Gb/s = 50 GB/s on both types.
  std::vector<FieldOverride> sets;
  for (const std::string& set : fifth.sets) sets.push_back(parse_override(set));
  const Cluster c = load_cluster(test::shipped("topologies", "a100-v100-2x2"), overrides_for(sets, "cluster"));
  ASSERT_EQ(c.node_types.size(), 2u);
  EXPECT_EQ(c.node_types[1].name, "mi250x-node");
  for (const NodeType& t : c.node_types) EXPECT_DOUBLE_EQ(t.nic.bandwidth_Bps, 50e9) << t.name;
  // The other order is allowed too, and says that the replacing node type keeps its own field.
  const auto reversed = write_study("reversed", "name: r\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nvary:\n"
                                                "  - set: cluster.node_types[*].nic.bandwidth\n    values: [400Gbps]\n"
                                                "  - set: cluster.node_types[1]\n    values: [\"{name: x}\"]\n");
  const Study r = load_study(reversed);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("the replacing node type keeps its own nic.bandwidth"), std::string::npos) << r.notes[0];
  std::filesystem::remove(reversed);
}

// The upper bounds' cache of the sweeps these tests start.
TEST(Sweep, KilledHalfWayResumesWithoutRunningAFinishedScenarioAgain) {
  const auto study = write_study("resume", kStudy);
  const auto db = temp("resume.db");
  std::filesystem::remove(db);
  const pid_t pid = start_sweep({study.string(), "--db", db.string(), "--jobs", "1"});
  // Kill the sweep (not its worker: that one finds its pipe closed and leaves) after 3 rows.
  size_t seen = 0;
  for (int i = 0; i < 3000 && seen < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!std::filesystem::exists(db)) continue;
    try {  // read as `hetsim report` does, beside the sweep; before the sweep made its table, refused
      seen = ResultsDb(db, ResultsDb::Mode::kRead).rows().size();
    } catch (const InputError& e) {
      ASSERT_NE(std::string(e.what()).find("no scenarios table"), std::string::npos) << e.what();
    }
  }
  ASSERT_GE(seen, 3u);
  ::kill(pid, SIGKILL);
  (void)wait_for(pid);
  const std::vector<ScenarioRow> before = ResultsDb(db).rows();
  ASSERT_LT(before.size(), 12u) << "the sweep finished before it could be killed";
  ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db.string(), "--jobs", "2"})), 0);
  const std::vector<ScenarioRow> after = ResultsDb(db).rows();
  ASSERT_EQ(after.size(), 12u);
  std::set<long> positions;
  for (const ScenarioRow& r : after) {
    positions.insert(r.position);
    EXPECT_EQ(r.status, "ok") << r.error;
  }
  EXPECT_EQ(positions.size(), 12u);  // every scenario exactly once
  for (const ScenarioRow& b : before) {  // finished rows untouched: not run again
    const auto it = std::find_if(after.begin(), after.end(), [&](const ScenarioRow& a) { return a.scenario == b.scenario; });
    ASSERT_NE(it, after.end());
    EXPECT_EQ(it->wall_s, b.wall_s);
    EXPECT_EQ(it->report, b.report);
  }
  // One worker or two: the same rows (wall-clock time aside).
  const auto db1 = temp("one.db");
  std::filesystem::remove(db1);
  ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db1.string(), "--jobs", "1"})), 0);
  const std::vector<ScenarioRow> one = ResultsDb(db1).rows();
  ASSERT_EQ(one.size(), after.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].scenario, after[i].scenario);
    EXPECT_EQ(one[i].axes, after[i].axes);
    EXPECT_EQ(one[i].report, after[i].report);
    EXPECT_EQ(one[i].iteration_time_s, after[i].iteration_time_s);
  }
  for (const auto& p : {study, db, db1}) std::filesystem::remove(p);
  for (const char* ext : {"-wal", "-shm"}) {
    std::filesystem::remove(db.string() + ext);
    std::filesystem::remove(db1.string() + ext);
  }
}

TEST(Sweep, AFailingScenarioIsRecordedNotFatal) {
  // The model loads with either recipe, but A100s have no mxfp8: that scenario fails when it runs
  // and is an error row, the other is ok.
  const auto study = write_study("fail", "name: f\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                                         "vary:\n  - set: model.training.gemm_precision\n    values: [fp16, mxfp8]\n");
  const auto db = temp("fail.db");
  std::filesystem::remove(db);
  ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db.string(), "--jobs", "2"})), 0);
  const std::vector<ScenarioRow> rows = ResultsDb(db).rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, "ok");
  EXPECT_EQ(rows[1].status, "error");
  EXPECT_NE(rows[1].error.find("--set model.training.gemm_precision=mxfp8: error"), std::string::npos) << rows[1].error;
  std::filesystem::remove(study);
  std::filesystem::remove(db);
}

TEST(Sweep, AFlagsAxisThatWritesFilesOrCannotLoadIsRefusedBeforeAnythingRuns) {
  // Each alternative once passed the check as a valid command line and then failed every scenario
  // that had it (the runner's own --report given twice, a --set value no model takes), each an
  // error row, exit 0.
  const auto study = write_study("badflags", "name: f\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                                             "vary:\n  - flags: [[], [--report=r.json], [--set=model.training.global_batch=abc], [--trace=t.json]]\n");
  const test::CliRun r = test::run_hetsim("sweep " + study.string() + " --dry-run", test::Capture::kStderr);
  EXPECT_EQ(r.rc, 2);
  const std::string at = study.string() + ":7:12: error: vary[0].flags: ";
  const std::string no_file = ": a scenario's report goes to the results database and it writes no file of its own; leave ";
  EXPECT_EQ(r.output, at + "[--report=r.json]" + no_file + "--report out\n" + at +
                          "[--set=model.training.global_batch=abc]: \"abc\" is not a whole number\n" + at + "[--trace=t.json]" + no_file +
                          "--trace out\n")
      << r.output;
  // An option's value written as a word of its own is no flag: said with the word.
  const auto apart = write_study("apart", "name: f\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                                          "vary:\n  - flags: [[], [--global-batch, \"64\"]]\n");
  const test::CliRun w = test::run_hetsim("sweep " + apart.string() + " --dry-run", test::Capture::kStderr);
  EXPECT_EQ(w.rc, 2);
  EXPECT_EQ(w.output, apart.string() + ":7:12: error: vary[0].flags: \"64\" is not a flag: each starts with -- (an option's value goes "
                                       "with it: --global-batch=64)\n")
      << w.output;
  // A kept plan that is no plan file failed every scenario of a plan study (audit 2026-12-03).
  const auto kept = write_study("kept", "name: f\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: plan\n"
                                        "vary:\n  - flags: [[], [--keep-plan=/etc/hostname], [--keep-plan=nothere.yaml]]\n");
  const test::CliRun k = test::run_hetsim("sweep " + kept.string() + " --dry-run", test::Capture::kStderr);
  EXPECT_EQ(k.rc, 2);
  EXPECT_NE(k.output.find(":6:12: error: vary[0].flags: [--keep-plan=/etc/hostname]: "), std::string::npos) << k.output;
  EXPECT_NE(k.output.find(":6:12: error: vary[0].flags: [--keep-plan=nothere.yaml]: "), std::string::npos) << k.output;
  std::filesystem::remove(study);
  std::filesystem::remove(apart);
  std::filesystem::remove(kept);
}

TEST(Sweep, AnAxisValueNoScenarioCouldLoadIsRefusedAtTheStudysLine) {
  // "fast" is no bandwidth: every scenario with it would fail the same way. Refused before
  // anything runs (and by --dry-run), at the axis, naming the value.
  const auto study = write_study("badvalue", "name: f\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                                             "vary:\n  - set: cluster.node_types[0].nic.bandwidth\n    values: [7Gbps, fast]\n");
  for (const char* dry : {" --dry-run", ""}) {
    const test::CliRun r = test::run_hetsim("sweep " + study.string() + dry + " --db " + temp("badvalue.db").string(),
                                            test::Capture::kStderr);
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.output, study.string() + ":7:10: error: vary[0].values[1]: fast: \"fast\" is not a rate; write e.g. \"25GBps\"\n")
        << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(temp("badvalue.db")));
  std::filesystem::remove(study);
}

TEST(Sweep, MpirunWithTwoRanksGivesTheRowsOfJobsTwo) {
#ifndef HETSIM_TEST_MPIRUN
  GTEST_SKIP() << "hetsim was built without MPI (scripts/setup-deps installs OpenMPI)";
#else
  const auto study = write_study("mpi", kStudy);
  const auto db_mpi = temp("mpi.db"), db_jobs = temp("jobs.db");
  for (const auto& p : {db_mpi, db_jobs}) std::filesystem::remove(p);
  // The environment lets OpenMPI run as root (CI runs as root); --oversubscribe in case of 1 slot.
  const std::string cmd = "HETSIM_CACHE_DIR='" + cache_dir() + "' OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " HETSIM_TEST_MPIRUN
                          " --oversubscribe -np 2 " + test::hetsim_binary() + " -q sweep " + study.string() + " --db " +
                          db_mpi.string() + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db_jobs.string(), "--jobs", "2"})), 0);
  const std::vector<ScenarioRow> mpi = ResultsDb(db_mpi).rows(), jobs = ResultsDb(db_jobs).rows();
  ASSERT_EQ(mpi.size(), 12u);
  ASSERT_EQ(jobs.size(), 12u);
  for (size_t i = 0; i < mpi.size(); ++i) {  // identical rows, wall-clock time aside
    EXPECT_EQ(mpi[i].scenario, jobs[i].scenario);
    EXPECT_EQ(mpi[i].position, jobs[i].position);
    EXPECT_EQ(mpi[i].axes, jobs[i].axes);
    EXPECT_EQ(mpi[i].status, jobs[i].status);
    EXPECT_EQ(mpi[i].iteration_time_s, jobs[i].iteration_time_s);
    EXPECT_EQ(mpi[i].samples_per_s, jobs[i].samples_per_s);
    EXPECT_EQ(mpi[i].peak_memory_bytes, jobs[i].peak_memory_bytes);
    EXPECT_EQ(mpi[i].report, jobs[i].report);
  }
  for (const auto& p : {study, db_mpi, db_jobs}) std::filesystem::remove(p);
#endif
}

TEST(Sweep, LauncherVariablesWithoutTheLauncherAreRefused) {
#ifndef HETSIM_TEST_MPIRUN
  GTEST_SKIP() << "hetsim was built without MPI (scripts/setup-deps installs OpenMPI)";
#else
  // A copied environment that says rank 1 of 2 without mpirun: that rank once waited for ever for
  // a rank 0, and "rank 0 of 2" alone ran nothing and said it had. MPI starts a world of one here.
  const auto study = write_study("stray", kStudy);
  for (const char* vars : {"OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2"}) {
    const std::string cmd = std::string("HETSIM_CACHE_DIR=off OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ") + vars +
                            " timeout 60 " + test::hetsim_binary() + " -q sweep " + study.string() + " --db " + temp("stray.db").string() +
                            " 2> " + temp("stray.err").string();
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << cmd;
    EXPECT_EQ(WEXITSTATUS(status), 2) << cmd;
    EXPECT_NE(slurp(temp("stray.err")).find("run the sweep under mpirun, or unset those variables"), std::string::npos) << slurp(temp("stray.err"));
  }
  std::filesystem::remove(study);
#endif
}

TEST(Sweep, AStudysClusterAndModelFilesAreFoundBesideIt) {
  // cluster: and model: paths are relative to the study file, from whatever folder the sweep runs.
  const std::filesystem::path dir = temp("beside");
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(test::shipped("topologies", "a100-v100-2x2"), dir / "mine.yaml", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(test::shipped("workloads", "gpt3-1.3b"), dir / "m.yaml", std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "study.yaml") << "name: b\ncluster: mine.yaml\nmodel: m.yaml\nrun: simulate\nstrategy: dp-even\n"
                                       "vary:\n  - set: model.training.global_batch\n    values: [128]\n";
  const Study s = load_study(dir / "study.yaml");
  EXPECT_EQ(s.cluster, (dir / "mine.yaml").string());
  EXPECT_EQ(s.model, (dir / "m.yaml").string());
  const test::CliRun r = test::run_hetsim("sweep " + (dir / "study.yaml").string() + " --dry-run", test::Capture::kStderr);
  EXPECT_EQ(r.rc, 0) << r.output;
  std::filesystem::remove_all(dir);
}

TEST(Sweep, ReportPlotsAFigureAgainstAnAxisOrSaysWhatIsMissing) {
  const auto study = write_study("plot", "name: p\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                                         "vary:\n  - set: cluster.node_types[*].nic.bandwidth\n    values: [50Gbps, 400Gbps]\n"
                                         "  - set: model.training.global_batch\n    values: [128, 256]\n");
  const auto db = temp("plot.db"), png = temp("plot.png");
  std::filesystem::remove(db);
  std::filesystem::remove(png);
  ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db.string(), "--jobs", "2"})), 0);
  const test::CliRun r = test::run_hetsim("report " + db.string() + " --plot " + png.string(), test::Capture::kStdout);
  const bool matplotlib = std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || python3 -c 'import matplotlib' 2>/dev/null") == 0;
  if (matplotlib) {  // scripts/setup-deps installs it: the PNG is written
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.output.find("samples_per_s against cluster.node_types[*].nic.bandwidth, one line per model.training.global_batch"),
              std::string::npos) << r.output;
    std::ifstream in(png, std::ios::binary);
    char magic[8] = {};
    in.read(magic, 8);
    EXPECT_EQ(std::string(magic + 1, 3), "PNG");
    // Named values are the user's text: a "$" in one is not a formula for matplotlib to parse.
    const auto named = write_study("plot-dollars", "name: d\ncluster: a100-v100-2x2\nmodel: bert-base\nrun: simulate\n"
                                                   "strategy: dp-even\nvary:\n  - set: cluster.node_types[*].nic.bandwidth\n"
                                                   "    values: {\"$\\\\frac{a$\": 100Gbps, \"$^^$\": 400Gbps}\n");
    const auto named_db = temp("plot-dollars.db");
    std::filesystem::remove(named_db);
    ASSERT_EQ(wait_for(start_sweep({named.string(), "--db", named_db.string(), "--jobs", "2"})), 0);
    const test::CliRun d = test::run_hetsim("report " + named_db.string() + " --plot " + png.string(), test::Capture::kStderr);
    EXPECT_EQ(d.rc, 0) << d.output;
    for (const auto& p : {named, named_db}) std::filesystem::remove(p);
  } else {
    const test::CliRun e = test::run_hetsim("report " + db.string() + " --plot " + png.string(), test::Capture::kStderr);
    EXPECT_EQ(e.rc, 2);  // a missing resource, not a bug
    EXPECT_NE(e.output.find("needs python3 with matplotlib"), std::string::npos) << e.output;
  }
  const test::CliRun bad = test::run_hetsim("report " + db.string() + " --plot " + png.string() + " --x nic", test::Capture::kStderr);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.output.find("\"nic\" is not an axis of this study"), std::string::npos) << bad.output;
  for (const auto& p : {study, db, png}) std::filesystem::remove(p);
}

TEST(Sweep, AHeldPlanRunsTheBaselinesPlanAndAReplannedOneKeepsIt) {
  // Issue 34: a what-if that doubled every NIC once showed a loss, because re-planning missed the
  // previous winner. Held: the baseline's plan on every scenario; re-planned: the baseline's plan
  // among each scenario's candidates. Either way the faster NICs are never slower.
  const std::string axes = "vary:\n  - set: cluster.node_types[*].nic.bandwidth\n    values: [100Gbps, 400Gbps]\n";
  for (const bool hold : {true, false}) {
    const auto study = write_study(hold ? "held" : "replanned", std::string("name: w\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: plan\n") +
                                                                    (hold ? "hold_plan: true\n" : "") + axes);
    const auto db = temp(hold ? "held.db" : "replanned.db");
    std::filesystem::remove(db);
    ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db.string(), "--jobs", "2"})), 0);
    const std::vector<ScenarioRow> rows = ResultsDb(db).rows();
    ASSERT_EQ(rows.size(), 2u);
    for (const ScenarioRow& r : rows) {
      ASSERT_EQ(r.status, "ok") << r.error;
      const nlohmann::json j = nlohmann::json::parse(r.report);
      EXPECT_EQ(j["plans"], hold ? "held" : "re-planned");
      EXPECT_EQ(r.report.find("/tmp"), std::string::npos);  // the baseline's plan by name: the same rows wherever it ran
      if (hold) {
        EXPECT_EQ(j["strategy"], "plan the baseline's plan");
      } else {
        ASSERT_TRUE(j["kept_plan"]["applies"].get<bool>());
        EXPECT_LE(r.iteration_time_s, j["kept_plan"]["iteration_time_s"].get<double>());
      }
    }
    EXPECT_LE(rows[1].iteration_time_s, rows[0].iteration_time_s);  // 400 Gb/s against 100 Gb/s
    const test::CliRun report = test::run_hetsim("report " + db.string(), test::Capture::kStdout);
    ASSERT_EQ(report.rc, 0) << report.output;
    EXPECT_NE(report.output.find("  plans "), std::string::npos) << report.output;
    EXPECT_NE(report.output.find("baseline_plan_samples_per_s"), std::string::npos) << report.output;
    EXPECT_NE(report.output.find(hold ? "  held" : "  re-planned"), std::string::npos) << report.output;
    for (const auto& p : {study, db}) std::filesystem::remove(p);
  }
  // A held plan with planner flags, or in a simulate study, is refused at its line.
  const auto error = study_error;
  EXPECT_NE(error("name: x\ncluster: c\nmodel: m\nhold_plan: true\nvary:\n  - flags: [[], [--no-lp]]\n")
                .find(":4:12: error: hold_plan: a held plan is never re-planned, so planner flags would change nothing"),
            std::string::npos);
  EXPECT_NE(error("name: x\ncluster: c\nmodel: m\nrun: simulate\nstrategy: dp-even\nhold_plan: true\n")
                .find(":6:12: error: hold_plan: hold_plan goes with run: plan"),
            std::string::npos);
  EXPECT_NE(error("name: x\ncluster: c\nmodel: m\nhold_plan: maybe\n").find(":4:12: error: hold_plan:"), std::string::npos);
}

TEST(Sweep, ReportSaysEachRowsChangeAgainstABaselineRow) {
  // An ablation as one table: --baseline names a row (AXIS=VALUE, or its number) and every row gets
  // its samples/s change against it.
  const auto study = write_study("base", "name: b\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                                         "vary:\n  - set: model.training.global_batch\n    values: [128, 256]\n");
  const auto db = temp("base.db");
  std::filesystem::remove(db);
  ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db.string()})), 0);
  for (const std::string& which : {std::string("model.training.global_batch=256"), std::string("2")}) {
    const test::CliRun r = test::run_hetsim("report " + db.string() + " --csv --baseline " + which, test::Capture::kStdout);
    ASSERT_EQ(r.rc, 0) << r.output;
    std::istringstream in(r.output);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line.substr(line.rfind(',') + 1), "samples_per_s_vs_baseline");
    std::vector<std::pair<double, double>> rows;  // samples/s, change
    while (std::getline(in, line)) {
      std::vector<std::string> cells;
      std::istringstream cs(line);
      for (std::string c; std::getline(cs, c, ',');) cells.push_back(c);
      rows.emplace_back(std::stod(cells[4]), std::stod(cells.back()));
    }
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1].second, 0);  // the baseline itself
    EXPECT_DOUBLE_EQ(rows[0].second, rows[0].first / rows[1].first - 1);
  }
  const test::CliRun none = test::run_hetsim("report " + db.string() + " --baseline model.training.global_batch=64", test::Capture::kStderr);
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.output.find("--baseline: error: model.training.global_batch=64 names no row of this study"), std::string::npos)
      << none.output;
  for (const auto& p : {study, db}) std::filesystem::remove(p);
}

TEST(Sweep, AHeldPlanThatDoesNotFitAScenarioIsAnInfeasibleResult) {
  // Audit 2026-12-03: recorded as an error naming the sweep's deleted scratch file.
  const auto study = write_study("heldfit", "name: h\ncluster: a100-v100-2x2\nmodel: bert-base\nrun: plan\nhold_plan: true\n"
                                            "vary:\n  - set: cluster.node_types[*].count\n    values: [1, 2]\n");
  const auto db = temp("heldfit.db");
  std::filesystem::remove(db);
  ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db.string(), "--jobs", "2"})), 0);
  const std::vector<ScenarioRow> rows = ResultsDb(db, ResultsDb::Mode::kRead).rows();
  ASSERT_EQ(rows.size(), 2u);
  for (const ScenarioRow& r : rows) {
    const bool baseline = r.axes.find("2") != std::string::npos;
    EXPECT_EQ(r.status, baseline ? "ok" : "infeasible") << r.axes << ": " << r.error;
    if (!baseline) {
      EXPECT_EQ(r.error.rfind("the baseline's plan does not fit this scenario: the baseline's plan:", 0), 0u) << r.error;
      EXPECT_EQ(r.error.find(".plan.yaml"), std::string::npos) << r.error;
    }
  }
  for (const auto& p : {study, db}) std::filesystem::remove(p);
}

TEST(Sweep, AnAblationsBaselineIsNamedAsTheStudyWritesItsFlags) {
  // Audit 2026-12-03: docs/ablations.md's --baseline 'flags=[]' named no row (the cell reads "").
  const auto study = write_study("abl", "name: a\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                                        "vary:\n  - flags: [[], [--no-interference, --every-step]]\n");
  const auto db = temp("abl.db");
  std::filesystem::remove(db);
  ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db.string()})), 0);
  for (const std::string which : {"'flags=[]'", "flags=", "'flags=[--no-interference, \"--every-step\"]'", "'flags=--no-interference --every-step'"}) {
    const test::CliRun r = test::run_hetsim("report " + db.string() + " --baseline " + which, test::Capture::kStdout);
    EXPECT_EQ(r.rc, 0) << which << "\n" << r.output;
  }
  const test::CliRun none = test::run_hetsim("report " + db.string() + " --baseline 'flags=[--no-lp]'", test::Capture::kStderr);
  EXPECT_EQ(none.rc, 2) << none.output;
  // A plot given the database's own path would have replaced the results with a PNG.
  const test::CliRun over = test::run_hetsim("report " + db.string() + " --plot " + db.string(), test::Capture::kStderr);
  EXPECT_EQ(over.rc, 2) << over.output;
  EXPECT_NE(over.output.find("is the results database this run reads; it would be overwritten"), std::string::npos) << over.output;
  EXPECT_EQ(ResultsDb(db, ResultsDb::Mode::kRead).rows().size(), 2u);
  for (const auto& p : {study, db}) std::filesystem::remove(p);
}

}  // namespace
}  // namespace hetsim
