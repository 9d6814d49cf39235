// File: studies/sweep/results_db.cpp
#include "studies/sweep/results_db.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>

#include "base/input_error.hpp"
#include "base/text.hpp"

namespace hetsim {
namespace {

constexpr int kBusyMs = 10000;  // how long a connection waits for another's lock before failing

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS scenarios (
  scenario TEXT PRIMARY KEY,
  study TEXT NOT NULL,
  position INTEGER NOT NULL,
  axes TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'infeasible', 'error')),
  error TEXT,
  iteration_time_s REAL,
  samples_per_s REAL,
  mfu REAL,
  efficiency REAL,
  peak_memory_bytes REAL,
  report TEXT,
  wall_s REAL
))sql";

constexpr const char* kColumns[] = {"scenario", "study", "position", "axes", "status", "error", "iteration_time_s",
                                    "samples_per_s", "mfu", "efficiency", "peak_memory_bytes", "report", "wall_s"};

// `path` as an SQLite URI that opens it immutable (no locks, no -wal or -shm): absolute, with
// %, ?, # and bytes outside printable ASCII percent-encoded.
std::string immutable_uri(const std::filesystem::path& path) {
  static const char* hex = "0123456789ABCDEF";
  std::error_code ec;
  std::string uri = "file:";
  for (const char c : std::filesystem::absolute(path, ec).string()) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '%' || c == '?' || c == '#' || u < 0x20 || u >= 0x7f) {
      uri.append("%").append(1, hex[u >> 4]).append(1, hex[u & 0xf]);
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

// What SQLite says went wrong, with its result code ("database disk image is malformed, SQLite
// code 11").
std::string sqlite_error(sqlite3* db, int rc) {
  return std::string(db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) + ", SQLite code " + std::to_string(rc);
}

}  // namespace

// A prepared statement, finalised on scope exit; every step and bind checked.
class ResultsDb::Statement {
 public:
  Statement(const ResultsDb& owner, const char* sql) : owner_(owner) {
    const int rc = sqlite3_prepare_v2(owner.db_, sql, -1, &st_, nullptr);
    if (rc != SQLITE_OK) owner.fail(rc);
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  [[nodiscard]] sqlite3_stmt* get() const { return st_; }
  // True for a row, false when done; anything else (a damaged page, a full disk) throws.
  bool step() const {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) owner_.fail(rc);
    return false;
  }
  void check_bind(int rc) const {
    if (rc != SQLITE_OK) owner_.fail(rc);
  }
  [[nodiscard]] std::string text(int col) const {
    const unsigned char* t = sqlite3_column_text(st_, col);
    return t != nullptr ? reinterpret_cast<const char*>(t) : "";
  }

 private:
  const ResultsDb& owner_;
  sqlite3_stmt* st_ = nullptr;
};

void ResultsDb::fail(int rc) const {
  if ((rc & 0xff) == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
    damaged_ = true;
    throw InputError(path_.string(), "", "the results database is damaged (" + sqlite_error(db_, rc) + "); " + kRestoreResults);
  }
  throw InputError(path_.string(), "", "the results database cannot be used: " + sqlite_error(db_, rc));
}

ResultsDb::ResultsDb(const std::filesystem::path& path, Mode mode) : path_(path) {
  std::error_code ec;
  const bool had[2] = {std::filesystem::exists(path.string() + "-wal", ec), std::filesystem::exists(path.string() + "-shm", ec)};
  std::string why;
  auto open = [&](const std::string& name, int flags) {
    const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
    if (rc == SQLITE_OK) return true;
    why = sqlite_error(db_, rc);
    sqlite3_close(db_);
    db_ = nullptr;
    return false;
  };
  // A reader opens read-write (query_only on, below) where this user may write the file and its
  // folder: the last read-write connection to a WAL database checkpoints and removes the -wal and
  // -shm (SQLite's own rule, safe beside a running sweep), which a read-only one never does. In a
  // folder it cannot write with no -wal or -shm there, no sweep can be writing the database (a
  // writer keeps its -wal beside it): it is read as immutable, which needs neither. Elsewhere
  // read-only.
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const bool folder_writable = ::access(folder.c_str(), W_OK) == 0;
  const bool writable = folder_writable && ::access(path.c_str(), W_OK) == 0;
  const std::string name = path.string();
  bool opened = false;
  if (mode == Mode::kWrite) opened = open(name, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  else if (writable) opened = open(name, SQLITE_OPEN_READWRITE) || open(name, SQLITE_OPEN_READONLY);
  else if (!folder_writable && !had[0] && !had[1]) {
    opened = open(immutable_uri(path), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI) || open(name, SQLITE_OPEN_READONLY);
  } else {
    opened = open(name, SQLITE_OPEN_READONLY);
  }
  if (!opened) throw InputError(path.string(), "--db", "cannot open the results database: " + why);
  sqlite3_busy_timeout(db_, kBusyMs);
  // Refusing leaves the file as it was: a report never leaves a -wal or -shm beside it. SQLite
  // removes them itself when the last connection closes a sound database, and keeps them while a
  // sweep still has it open (a report refusing the table-less database a starting sweep is
  // setting up, or finding it locked, must not take that sweep's log away: committed rows were
  // lost so, ResultsDb.WritersAndReadersOpeningAFreshDatabaseAtOnceAllGetIn). Only a damaged file,
  // which SQLite cannot checkpoint, is cleaned up by hand.
  auto close = [&](bool damaged) {
    sqlite3_close(db_);
    db_ = nullptr;
    if (mode == Mode::kRead && damaged) {
      for (const char* suffix : {"-wal", "-shm"}) {
        if (!had[suffix[1] == 'w' ? 0 : 1]) std::filesystem::remove(path.string() + suffix, ec);
      }
    }
  };
  auto refuse = [&](const std::string& why, bool damaged) {
    close(damaged);
    throw InputError(path.string(), "", why);
  };
  try {
    if (mode == Mode::kRead) exec("PRAGMA query_only=1");
    if (const int rc = sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr); rc == SQLITE_NOTADB) {
      refuse("not a hetsim results database (" + std::string(sqlite3_errmsg(db_)) + "); hetsim sweep or hetsim size writes one", true);
    }
    // Damaged pages would otherwise read as fewer rows (a report of 0 scenarios, a sweep that
    // thinks everything is done): the whole file is checked first (a results database is small).
    std::vector<std::string> problems;
    {
      const Statement check(*this, "PRAGMA quick_check(5)");
      while (check.step()) problems.push_back(check.text(0));
    }
    if (problems != std::vector<std::string>{"ok"}) {
      std::string text;
      for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
      refuse("the results database is damaged (PRAGMA quick_check: " + text + "); " + kRestoreResults, true);
    }
    std::vector<std::string> tables;
    {
      const Statement list(*this, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
      while (list.step()) tables.push_back(list.text(0));
    }
    const bool ours = std::find(tables.begin(), tables.end(), "scenarios") != tables.end();
    if (!ours && (mode == Mode::kRead || !tables.empty())) {
      std::string names;
      for (const std::string& t : tables) names += (names.empty() ? "" : ", ") + t;
      refuse("not a hetsim results database (no scenarios table" + (tables.empty() ? std::string() : "; it holds " + names) +
             "); hetsim sweep or hetsim size writes one", false);
    }
    if (mode == Mode::kWrite) {
      // While another connection sets the same fresh file up (two sweeps started at once), SQLite
      // can answer this SQLITE_BUSY at once, without its busy handler: retried as long as that
      // handler would wait (a CI run's sweep failed so on "database is locked").
      for (int waited_ms = 0;; waited_ms += 5) {
        const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
        if (rc == SQLITE_OK) break;
        if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= kBusyMs) fail(rc);
        ::usleep(5000);
      }
      exec("PRAGMA synchronous=NORMAL");  // WAL + NORMAL: a committed row survives a crash of hetsim
      exec(kSchema);
    }
    std::vector<std::string> columns;
    {
      const Statement info(*this, "PRAGMA table_info(scenarios)");
      while (info.step()) columns.push_back(info.text(1));
    }
    if (!std::equal(columns.begin(), columns.end(), std::begin(kColumns), std::end(kColumns))) {
      std::string names;
      for (const std::string& c : columns) names += (names.empty() ? "" : ", ") + c;
      refuse("its scenarios table is not hetsim's (columns: " + names + "); hetsim sweep or hetsim size writes one", false);
    }
  } catch (const InputError&) {
    if (db_ != nullptr) close(damaged_);
    throw;
  }
}

ResultsDb::~ResultsDb() { sqlite3_close(db_); }

void ResultsDb::exec(const char* sql) const {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc);
}

std::set<std::string> ResultsDb::keys() const {
  // Each row read and checked as a report reads it (a sweep resumed into a hand-edited database
  // took its rows as done), its report left out: a million rows' reports would not fit in memory.
  std::set<std::string> out;
  for (ScenarioRow& r : read_rows(false)) out.insert(std::move(r.scenario));
  return out;
}

void ResultsDb::put(const ScenarioRow& r) {
  const Statement st(*this,
                     "INSERT OR REPLACE INTO scenarios (scenario, study, position, axes, status, error, iteration_time_s, "
                     "samples_per_s, mfu, efficiency, peak_memory_bytes, report, wall_s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  sqlite3_stmt* s = st.get();
  st.check_bind(sqlite3_bind_text(s, 1, r.scenario.c_str(), -1, SQLITE_TRANSIENT));
  st.check_bind(sqlite3_bind_text(s, 2, r.study.c_str(), -1, SQLITE_TRANSIENT));
  st.check_bind(sqlite3_bind_int64(s, 3, r.position));
  st.check_bind(sqlite3_bind_text(s, 4, r.axes.c_str(), -1, SQLITE_TRANSIENT));
  st.check_bind(sqlite3_bind_text(s, 5, r.status.c_str(), -1, SQLITE_TRANSIENT));
  st.check_bind(r.error.empty() ? sqlite3_bind_null(s, 6) : sqlite3_bind_text(s, 6, r.error.c_str(), -1, SQLITE_TRANSIENT));
  const bool figures = r.status == "ok";
  const double values[] = {r.iteration_time_s, r.samples_per_s, r.mfu, r.efficiency, r.peak_memory_bytes};
  for (int i = 0; i < 5; ++i) st.check_bind(figures ? sqlite3_bind_double(s, 7 + i, values[i]) : sqlite3_bind_null(s, 7 + i));
  st.check_bind(r.report.empty() ? sqlite3_bind_null(s, 12) : sqlite3_bind_text(s, 12, r.report.c_str(), -1, SQLITE_TRANSIENT));
  st.check_bind(sqlite3_bind_double(s, 13, r.wall_s));
  (void)st.step();
}

std::vector<ScenarioRow> ResultsDb::rows() const { return read_rows(true); }

std::vector<ScenarioRow> ResultsDb::read_rows(bool with_reports) const {
  const Statement st(*this, with_reports ? "SELECT scenario, study, position, axes, status, error, iteration_time_s, samples_per_s, mfu, "
                                           "efficiency, peak_memory_bytes, report, wall_s FROM scenarios ORDER BY study, position"
                                         : "SELECT scenario, study, position, axes, status, error, iteration_time_s, samples_per_s, mfu, "
                                           "efficiency, peak_memory_bytes, '', wall_s FROM scenarios ORDER BY study, position");
  std::vector<ScenarioRow> out;
  while (st.step()) {
    sqlite3_stmt* s = st.get();
    ScenarioRow r;
    r.scenario = st.text(0);
    r.study = st.text(1);
    r.position = sqlite3_column_int64(s, 2);
    r.axes = st.text(3);
    r.status = st.text(4);
    r.error = st.text(5);
    // Figures hetsim writes are finite and not negative, and an ok row has them all: anything else
    // was written by another hand (sqlite3 holds inf, and stores a NaN as NULL).
    // Each also within what any simulation could give (a hand's 1e308 printed "inf%" and broke the plot).
    const auto figure = [&](int col, const char* name, double most) {
      const int type = sqlite3_column_type(s, col);
      const double v = sqlite3_column_double(s, col);
      const bool missing = type == SQLITE_NULL;
      if ((type != SQLITE_FLOAT && type != SQLITE_INTEGER && !missing) || (missing && r.status == "ok") || !std::isfinite(v) || v < 0 ||
          v > most) {
        throw InputError(path_.string(), "", "scenario " + printable(r.scenario.substr(0, 32)) + "'s " + name +
                                                 " is not a finite figure from 0 to " + format_double("%g", most) +
                                                 " (the database was edited by hand or damaged); " + kRestoreResults);
      }
      return v;
    };
    r.iteration_time_s = figure(6, "iteration_time_s", 1e9);  // 30 years
    r.samples_per_s = figure(7, "samples_per_s", 1e12);
    r.mfu = figure(8, "mfu", 100);  // shares (an FP4 run's MFU of a bf16 peak passes 1)
    r.efficiency = figure(9, "efficiency", 100);
    r.peak_memory_bytes = figure(10, "peak_memory_bytes", 1e18);  // an exabyte
    r.report = st.text(11);
    r.wall_s = figure(12, "wall_s", 1e9);
    const nlohmann::json axes = nlohmann::json::parse(r.axes, nullptr, false);
    if (!axes.is_object() && !axes.is_null()) {
      throw InputError(path_.string(), "", "scenario " + printable(r.scenario.substr(0, 32)) +
                                               "'s axes are not a JSON object (the database was edited by hand or damaged); " + kRestoreResults);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace hetsim
