// File: tests/studies/results_db_test.cpp
// The results database refuses what it cannot trust: damaged pages (found by PRAGMA quick_check
// when it opens, not read as fewer rows) and a database of another schema. Both are bad inputs
// (exit 2) for `report` and `sweep`, with SQLite's own words.
#include "studies/sweep/results_db.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "base/input_error.hpp"
#include "test_support.hpp"

namespace hetsim {
namespace {

namespace fs = std::filesystem;

struct Folder {
  fs::path dir = fs::temp_directory_path() / ("hetsim-results-db-test-" + std::to_string(::getpid()));
  Folder() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Folder() { fs::remove_all(dir); }
  [[nodiscard]] fs::path study() const {
    const fs::path p = dir / "s.yaml";
    std::ofstream(p) << "name: s\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: simulate\nstrategy: dp-even\n"
                        "vary:\n  - set: model.training.global_batch\n    values: [128, 256]\n";
    return p;
  }
};

void sql(const fs::path& db, const char* text) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, text, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
  sqlite3_close(h);
}

TEST(ResultsDb, DamagedPagesAreRefusedByReportAndSweep) {
  const Folder f;
  const fs::path db = f.dir / "r.db";
  {
    ResultsDb w(db);
    ScenarioRow row;  // strings assigned as strings: GCC 12 warns (-Wrestrict, bug 105329) on short literals
    row.study = std::string("s");
    row.axes = std::string("{}");
    row.status = std::string("ok");
    for (int i = 0; i < 200; ++i) {  // ~100 pages of 4 KiB: rows, reports and the key index
      row.scenario = "key-" + std::to_string(i);
      row.position = i;
      row.report = std::string(2000, static_cast<char>('a' + i % 26));
      w.put(row);
    }
  }
  ASSERT_EQ(ResultsDb(db, ResultsDb::Mode::kRead).rows().size(), 200u);
  const auto size = fs::file_size(db);
  ASSERT_GT(size, 100u * 1024);
  {  // 8 KiB of garbage in the middle of the file: two pages' headers and cells
    std::fstream io(db, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));
    const std::string junk(8192, '\x5a');
    io.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  EXPECT_THROW((void)ResultsDb(db, ResultsDb::Mode::kRead), InputError);
  // report printed "0 scenario(s)" and exited 0; sweep said every scenario was done.
  const test::CliRun report = test::run_hetsim("report " + db.string(), test::Capture::kStderr);
  EXPECT_EQ(report.rc, 2) << report.output;
  EXPECT_EQ(report.output.rfind(db.string() + ": error: the results database is damaged (", 0), 0u) << report.output;
  const test::CliRun sweep = test::run_hetsim("sweep " + f.study().string() + " --db " + db.string(), test::Capture::kStderr);
  EXPECT_EQ(sweep.rc, 2) << sweep.output;
  EXPECT_NE(sweep.output.find(db.string() + ": error: the results database is damaged"), std::string::npos) << sweep.output;
}

TEST(ResultsDb, ADatabaseOfAnotherSchemaIsRefusedAndLeftAsItWas) {
  const Folder f;
  const fs::path theirs = f.dir / "theirs.db", notes = f.dir / "notes.db";
  sql(theirs, "CREATE TABLE scenarios (id INTEGER, name TEXT); INSERT INTO scenarios VALUES (1, 'x');");
  sql(notes, "CREATE TABLE notes (text TEXT);");
  const std::string other_columns = theirs.string() + ": error: its scenarios table is not hetsim's (columns: id, name); "
                                                      "hetsim sweep or hetsim size writes one\n";
  // Both gave "internal error: sqlite: no such column" (report) or wrote into the file (sweep).
  EXPECT_EQ(test::run_hetsim("report " + theirs.string(), test::Capture::kStderr).output, other_columns);
  const test::CliRun sweep = test::run_hetsim("sweep " + f.study().string() + " --db " + theirs.string(), test::Capture::kStderr);
  EXPECT_EQ(sweep.rc, 2);
  EXPECT_EQ(sweep.output, other_columns);
  const test::CliRun into_notes = test::run_hetsim("sweep " + f.study().string() + " --db " + notes.string(), test::Capture::kStderr);
  EXPECT_EQ(into_notes.rc, 2);
  EXPECT_EQ(into_notes.output, notes.string() + ": error: not a hetsim results database (no scenarios table; it holds notes); "
                                                "hetsim sweep or hetsim size writes one\n");
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(notes.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_master", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 1);  // still only its own table
  sqlite3_finalize(st);
  sqlite3_close(h);
}

TEST(ResultsDb, FiguresNoRunCouldHaveWrittenAreRefused) {
  // Rows edited by hand: report printed inf, -inf, inf% and -500.0 %, a NaN (stored as NULL) as 0,
  // and blank axes for axes that are no JSON, exit 0; sweep took those rows for done.
  const Folder f;
  struct Case {
    const char* edit;
    const char* says;
  };
  for (const Case& c : {Case{"iteration_time_s = 9e999", "'s iteration_time_s is not a finite figure from 0 to 1e+09"},
                        Case{"samples_per_s = -9e999", "'s samples_per_s is not a finite figure from 0 to 1e+12"},
                        Case{"mfu = -5", "'s mfu is not a finite figure from 0 to 100"},
                        Case{"efficiency = 'fast'", "'s efficiency is not a finite figure from 0 to 100"},
                        Case{"iteration_time_s = NULL", "'s iteration_time_s is not a finite figure from 0 to 1e+09"},
                        // Finite but beyond any simulation: printed "inf%" and broke the plot (audit 2026-12-03).
                        Case{"mfu = 1e308", "'s mfu is not a finite figure from 0 to 100"},
                        Case{"peak_memory_bytes = 1.7e308", "'s peak_memory_bytes is not a finite figure from 0 to 1e+18"},
                        Case{"report = '{'", "'s report is not a JSON object"},
                        Case{"axes = '{not json'", "'s axes are not a JSON object"}}) {
    SCOPED_TRACE(c.edit);
    const fs::path db = f.dir / "edited.db";
    fs::remove(db);
    {
      ResultsDb w(db);
      ScenarioRow row;
      row.study = std::string("s");
      row.axes = std::string("{}");
      row.status = std::string("ok");
      row.scenario = std::string("k1");
      row.iteration_time_s = 1.5;
      row.samples_per_s = 10;
      w.put(row);
    }
    ASSERT_EQ(ResultsDb(db, ResultsDb::Mode::kRead).rows().size(), 1u);
    sql(db, (std::string("UPDATE scenarios SET ") + c.edit + ";").c_str());
    const test::CliRun report = test::run_hetsim("report " + db.string(), test::Capture::kStderr);
    EXPECT_EQ(report.rc, 2) << report.output;
    EXPECT_EQ(report.output, db.string() + ": error: scenario k1" + c.says +
                                 " (the database was edited by hand or damaged); restore it from a copy, or run the study into a new one (--db)\n");
    // A sweep resumed into it refuses it too (it took the edited rows as done; audit 2026-12-03).
    // Reports are not read back by a sweep: an edited report is for `hetsim report` to find.
    if (std::string(c.edit).starts_with("report")) continue;
    const test::CliRun sweep = test::run_hetsim("sweep " + f.study().string() + " --db " + db.string(), test::Capture::kStderr);
    EXPECT_EQ(sweep.rc, 2) << sweep.output;
    EXPECT_NE(sweep.output.find(db.string() + ": error: scenario k1" + c.says), std::string::npos) << sweep.output;
  }
}

// One ok row (scenario "key" of study "s") written as a sweep writes it: in WAL mode.
ScenarioRow put_one_row(const fs::path& db) {
  ScenarioRow row;  // strings assigned as strings: GCC 12 warns (-Wrestrict, bug 105329) on short literals
  row.study = std::string("s");
  row.axes = std::string("{}");
  row.status = std::string("ok");
  row.scenario = std::string("key");
  ResultsDb(db).put(row);
  return row;
}

TEST(ResultsDb, AReaderLeavesNoWalOrShmAndWritesNothing) {
  const Folder f;
  const fs::path db = f.dir / "r.db";
  ScenarioRow row = put_one_row(db);  // a sweep's database, in WAL mode
  for (const char* ext : {"-wal", "-shm"}) ASSERT_FALSE(fs::exists(db.string() + ext)) << ext;
  {
    ResultsDb r(db, ResultsDb::Mode::kRead);
    EXPECT_EQ(r.rows().size(), 1u);
    row.scenario = std::string("other");
    EXPECT_THROW(r.put(row), InputError);  // query_only: a report cannot change the file
  }
  for (const char* ext : {"-wal", "-shm"}) EXPECT_FALSE(fs::exists(db.string() + ext)) << ext;
  fs::permissions(db, fs::perms::owner_read | fs::perms::group_read);  // a file it may only read
  EXPECT_EQ(ResultsDb(db, ResultsDb::Mode::kRead).rows().size(), 1u);
}

TEST(ResultsDb, AReportReadsADatabaseInAFolderItCannotWrite) {
  // A sweep's WAL database shared read-only (file and folder): SQLite cannot make the -shm a WAL
  // read needs, and no sweep can be writing there, so the report reads it as immutable. Run as an
  // unprivileged user (root may write anywhere): nobody, through su, when the tests run as root.
  const Folder f;
  const fs::path db = f.dir / "r.db";
  put_one_row(db);
  fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  // As nobody, a copy of the binary beside the database (the build tree may be where nobody cannot
  // go; `report` reads no shipped data).
  fs::path binary = test::hetsim_binary();
  if (::geteuid() == 0) {
    fs::copy_file(binary, f.dir / "hetsim");
    binary = f.dir / "hetsim";
  }
  fs::permissions(f.dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  std::string command = binary.string() + " -q report '" + db.string() + "' --csv 2>&1";
  if (::geteuid() == 0) command = "su nobody -s /bin/sh -c \"" + command + "\"";
  const test::CliRun r = test::run_shell(command);
  fs::permissions(f.dir, fs::perms::owner_all);  // for the clean-up
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("\ns,ok,"), std::string::npos) << r.output;  // the row, read
  for (const char* ext : {"-wal", "-shm"}) EXPECT_FALSE(fs::exists(db.string() + ext)) << ext;
}

TEST(ResultsDb, WritersAndReadersOpeningAFreshDatabaseAtOnceAllGetIn) {
  // A CI run failed on "database is locked": a sweep creating its database while another
  // connection opened it too. Writers that start together (two sweeps on one file) and readers
  // polling beside them wait their turn; none is refused.
  const Folder f;
  for (int round = 0; round < 20; ++round) {
    const fs::path db = f.dir / ("race-" + std::to_string(round) + ".db");
    std::vector<pid_t> children;
    for (int c = 0; c < 6; ++c) {
      const pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        int code = 0;
        try {
          if (c % 2 == 0) {
            ResultsDb w(db);
            ScenarioRow row;
            row.study = std::string("s");
            row.axes = std::string("{}");
            row.status = std::string("ok");
            row.scenario = "key-" + std::to_string(c);
            w.put(row);
          } else {
            for (int i = 0; i < 200 && !fs::exists(db); ++i) ::usleep(200);
            try {
              (void)ResultsDb(db, ResultsDb::Mode::kRead).rows();
            } catch (const InputError& e) {  // a reader may come before the table: that refusal only
              if (std::string(e.what()).find("no scenarios table") == std::string::npos) throw;
            }
          }
        } catch (const std::exception& e) {
          std::fprintf(stderr, "child %d: %s\n", c, e.what());
          code = 1;
        }
        std::_Exit(code);
      }
      children.push_back(pid);
    }
    for (const pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
    EXPECT_EQ(ResultsDb(db, ResultsDb::Mode::kRead).rows().size(), 3u) << "round " << round;
  }
}

}  // namespace
}  // namespace hetsim
