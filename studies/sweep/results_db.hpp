// File: studies/sweep/results_db.hpp
// The results of a study in SQLite (docs/formats/study.md): table `scenarios`, one row per
// scenario keyed by a hash of its resolved inputs and the hetsim version. WAL mode; one writer
// (the process running the sweep), each row committed as it arrives, so a study killed
// half-way keeps every finished row.
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

struct sqlite3;

namespace hetsim {

// What to do with a results database found damaged or edited by hand, ending each such message.
inline constexpr const char* kRestoreResults = "restore it from a copy, or run the study into a new one (--db)";

struct ScenarioRow {
  std::string scenario;  // the key
  std::string study;
  long position = 0;     // index in the study's product
  std::string axes;      // JSON object
  std::string status;    // ok | infeasible | error
  std::string error;
  double iteration_time_s = 0, samples_per_s = 0, mfu = 0, efficiency = 0, peak_memory_bytes = 0;
  std::string report;    // the full report JSON ("" when none)
  double wall_s = 0;
};

class ResultsDb {
 public:
  // kWrite opens the database, creating it (and its table) when absent; kRead opens an existing
  // database read-only and never changes the file (a report must not turn any file it is given
  // into a database). Both check the whole file first (PRAGMA quick_check). Throws InputError
  // when it cannot open it, when the file is damaged, or when it is not one of hetsim's: no
  // scenarios table (kWrite accepts an empty database and creates it), or one with other columns.
  enum class Mode { kWrite, kRead };
  explicit ResultsDb(const std::filesystem::path& path, Mode mode = Mode::kWrite);
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  // Keys of the scenarios already recorded (every row checked as rows() checks it).
  [[nodiscard]] std::set<std::string> keys() const;
  // Inserts (or replaces) one row and commits it.
  void put(const ScenarioRow& row);
  // Every row, ordered by study and position.
  [[nodiscard]] std::vector<ScenarioRow> rows() const;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  class Statement;
  // rows(), with each report or without (left "").
  [[nodiscard]] std::vector<ScenarioRow> read_rows(bool with_reports) const;
  // Every SQLite failure (a damaged page, a full disk, a lock held too long) is an InputError
  // naming the file and giving SQLite's message: exit 2, never a silent short read.
  [[noreturn]] void fail(int sqlite_rc) const;
  void exec(const char* sql) const;
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  mutable bool damaged_ = false;  // fail() saw a damaged file: refusing it removes its -wal and -shm
};

}  // namespace hetsim
