// File: tests/studies/sweep_signals_test.cpp
// A sweep's workers end with it: killed (SIGKILL) they do not run on, and stopped (SIGTERM) the
// sweep stops them first and keeps every finished row, so a resumed sweep runs only the rest.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "studies/sweep/results_db.hpp"
#include "studies/sweep_support.hpp"

namespace hetsim {
namespace {

using test::start_sweep;
using test::temp;
using test::wait_for;
using test::write_study;

// A study whose scenarios each plan for about 3 s: long enough to kill the sweep mid-scenario.
// Scenarios of a few seconds each, so a kill lands inside one; each with a planner flag, so no
// baseline plan is planned before the scenarios' workers start (it keeps to scenarios without).
const char* kSlowStudy = R"(name: slow
cluster: a100-8x8
model: gpt3-2.7b
run: plan
vary:
  - flags: [[--candidates=3]]
  - set: model.training.global_batch
    values: [256, 512, 1024, 2048, 4096, 8192]
)";

// The processes whose parent is `pid` (from /proc), zombies left out.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    std::getline(in, line);
    const size_t close = line.rfind(')');  // after "pid (comm)": state, ppid
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    std::istringstream(line.substr(close + 1)) >> state >> ppid;
    if (ppid == pid && state != 'Z') out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// Whether `pid` still runs (a zombie waiting for its reaper does not).
bool running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

std::vector<pid_t> wait_for_workers(pid_t sweep, size_t n) {
  // Up to a minute: a plan study plans its baseline first, in one worker, before the scenarios'
  // workers start (seconds here, tens of seconds under the sanitizers).
  std::vector<pid_t> workers;
  for (int i = 0; i < 6000 && workers.size() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    workers = children_of(sweep);
  }
  return workers;
}

TEST(Sweep, WorkersDieWithTheSweepWhenItIsKilled) {
  // Issue 35: after a SIGKILL of the sweep its workers ran their scenario on under PID 1.
  const auto study = write_study("orphans", kSlowStudy);
  const auto db = temp("orphans.db");
  std::filesystem::remove(db);
  const pid_t pid = start_sweep({study.string(), "--db", db.string(), "--jobs", "2"});
  const std::vector<pid_t> workers = wait_for_workers(pid, 2);
  if (workers.size() != 2u) {  // never leave the sweep running past the test
    ::kill(pid, SIGKILL);
    (void)wait_for(pid);
  }
  ASSERT_EQ(workers.size(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into their first scenario (about 3 s each)
  ::kill(pid, SIGKILL);
  (void)wait_for(pid);
  for (pid_t w : workers) {
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {  // within 1 s, long before the scenario would end
      gone = !running(w);
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone) << "worker " << w << " outlived the sweep";
    if (!gone) ::kill(w, SIGKILL);
  }
  for (const auto& p : {study, db}) std::filesystem::remove(p);
  for (const char* ext : {"-wal", "-shm"}) std::filesystem::remove(db.string() + ext);
}

TEST(Sweep, SigtermStopsTheWorkersAndKeepsEveryFinishedRow) {
  // Issue 35: SIGTERM killed the sweep at once and left its workers running.
  const auto study = write_study("sigterm", kSlowStudy);
  const auto db = temp("sigterm.db");
  std::filesystem::remove(db);
  const pid_t pid = start_sweep({study.string(), "--db", db.string(), "--jobs", "2"});
  const std::vector<pid_t> workers = wait_for_workers(pid, 2);
  ASSERT_EQ(workers.size(), 2u);
  size_t seen = 0;
  for (int i = 0; i < 6000 && seen < 1; ++i) {  // up to a minute (under the sanitizers)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (std::filesystem::exists(db)) seen = ResultsDb(db, ResultsDb::Mode::kRead).rows().size();
  }
  ASSERT_GE(seen, 1u);
  const std::vector<pid_t> now = children_of(pid);
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_for(pid), 128 + SIGTERM);  // exited, after stopping its workers
  for (pid_t w : now) EXPECT_FALSE(running(w)) << "worker " << w;
  const std::vector<ScenarioRow> kept = ResultsDb(db, ResultsDb::Mode::kRead).rows();  // opens: quick_check passed
  ASSERT_GE(kept.size(), seen);
  ASSERT_LT(kept.size(), 6u) << "the sweep finished before it could be stopped";
  for (const ScenarioRow& r : kept) EXPECT_EQ(r.status, "ok") << r.error;  // no stopped scenario recorded as an error
  ASSERT_EQ(wait_for(start_sweep({study.string(), "--db", db.string(), "--jobs", "2"})), 0);
  EXPECT_EQ(ResultsDb(db, ResultsDb::Mode::kRead).rows().size(), 6u);
  for (const auto& p : {study, db}) std::filesystem::remove(p);
  for (const char* ext : {"-wal", "-shm"}) std::filesystem::remove(db.string() + ext);
}

}  // namespace
}  // namespace hetsim
