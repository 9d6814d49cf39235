// File: studies/sweep/results_db.cpp
#include "studies/sweep/results_db.hpp"

#include <sqlite3.h>

#include <stdexcept>

#include "base/input_error.hpp"

namespace hetsim {
namespace {

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

// A prepared statement, finalised on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) {
      throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db));
    }
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return st_; }

 private:
  sqlite3_stmt* st_ = nullptr;
};

std::string text_at(sqlite3_stmt* st, int col) {
  const unsigned char* t = sqlite3_column_text(st, col);
  return t != nullptr ? reinterpret_cast<const char*>(t) : "";
}

}  // namespace

ResultsDb::ResultsDb(const std::filesystem::path& path, Mode mode) : path_(path) {
  const int flags = mode == Mode::kRead ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  std::error_code ec;
  const bool had[2] = {std::filesystem::exists(path.string() + "-wal", ec), std::filesystem::exists(path.string() + "-shm", ec)};
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(path.string(), "--db", "cannot open the results database: " + msg);
  }
  sqlite3_busy_timeout(db_, 10000);
  if (mode == Mode::kRead) {
    int rc = SQLITE_ERROR;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'scenarios'", -1, &s, nullptr) == SQLITE_OK) {
      rc = sqlite3_step(s);
    }
    const std::string why = rc == SQLITE_DONE ? "no scenarios table" : sqlite3_errmsg(db_);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW) {
      sqlite3_close(db_);
      db_ = nullptr;
      for (const char* suffix : {"-wal", "-shm"}) {  // what opening a file that says WAL left beside it
        const std::filesystem::path p = path.string() + suffix;
        if (!had[suffix[1] == 'w' ? 0 : 1]) std::filesystem::remove(p, ec);
      }
      throw InputError(path.string(), "", "not a hetsim results database (" + why + "); hetsim sweep or hetsim size writes one");
    }
    return;
  }
  try {
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");  // WAL + NORMAL: a committed row survives a crash of hetsim
    exec(kSchema);
  } catch (const std::runtime_error& e) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(path.string(), "--db", std::string("not a hetsim results database: ") + e.what());
  }
}

ResultsDb::~ResultsDb() { sqlite3_close(db_); }

void ResultsDb::exec(const char* sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    throw std::runtime_error(msg);
  }
}

std::set<std::string> ResultsDb::keys() const {
  Statement st(db_, "SELECT scenario FROM scenarios");
  std::set<std::string> out;
  while (sqlite3_step(st.get()) == SQLITE_ROW) out.insert(text_at(st.get(), 0));
  return out;
}

void ResultsDb::put(const ScenarioRow& r) {
  Statement st(db_,
               "INSERT OR REPLACE INTO scenarios (scenario, study, position, axes, status, error, iteration_time_s, "
               "samples_per_s, mfu, efficiency, peak_memory_bytes, report, wall_s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  sqlite3_stmt* s = st.get();
  sqlite3_bind_text(s, 1, r.scenario.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 2, r.study.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 3, r.position);
  sqlite3_bind_text(s, 4, r.axes.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 5, r.status.c_str(), -1, SQLITE_TRANSIENT);
  if (r.error.empty()) sqlite3_bind_null(s, 6); else sqlite3_bind_text(s, 6, r.error.c_str(), -1, SQLITE_TRANSIENT);
  const bool figures = r.status == "ok";
  const double values[] = {r.iteration_time_s, r.samples_per_s, r.mfu, r.efficiency, r.peak_memory_bytes};
  for (int i = 0; i < 5; ++i) {
    if (figures) sqlite3_bind_double(s, 7 + i, values[i]); else sqlite3_bind_null(s, 7 + i);
  }
  if (r.report.empty()) sqlite3_bind_null(s, 12); else sqlite3_bind_text(s, 12, r.report.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(s, 13, r.wall_s);
  if (sqlite3_step(s) != SQLITE_DONE) throw std::runtime_error(std::string("sqlite insert: ") + sqlite3_errmsg(db_));
}

std::vector<ScenarioRow> ResultsDb::rows() const {
  Statement st(db_,
               "SELECT scenario, study, position, axes, status, error, iteration_time_s, samples_per_s, mfu, efficiency, "
               "peak_memory_bytes, report, wall_s FROM scenarios ORDER BY study, position");
  std::vector<ScenarioRow> out;
  while (sqlite3_step(st.get()) == SQLITE_ROW) {
    sqlite3_stmt* s = st.get();
    ScenarioRow r;
    r.scenario = text_at(s, 0);
    r.study = text_at(s, 1);
    r.position = sqlite3_column_int64(s, 2);
    r.axes = text_at(s, 3);
    r.status = text_at(s, 4);
    r.error = text_at(s, 5);
    r.iteration_time_s = sqlite3_column_double(s, 6);
    r.samples_per_s = sqlite3_column_double(s, 7);
    r.mfu = sqlite3_column_double(s, 8);
    r.efficiency = sqlite3_column_double(s, 9);
    r.peak_memory_bytes = sqlite3_column_double(s, 10);
    r.report = text_at(s, 11);
    r.wall_s = sqlite3_column_double(s, 12);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace hetsim
