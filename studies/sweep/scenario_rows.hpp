// File: studies/sweep/scenario_rows.hpp
// What a worker returns for a scenario (a sweep's point, a sizing's mix), made into a results row.
// (A scenario's key in a results database is base/digest.hpp's digest of its resolved inputs.)
#pragma once

#include <string>

#include "studies/sweep/results_db.hpp"
#include "studies/sweep/worker_pool.hpp"

namespace hetsim {

// Fills `row`'s status, error, figures and report from what a worker returned for it (the JSON a
// scenario run returns, or how the worker died). Output that is not that JSON (a worker that
// failed before it could write it) is an error row quoting it, never an exception. True where the
// error is a limit of this machine (its memory, ulimit -v, the tasks its memory holds), not of the
// scenario: such a row is not kept, so the scenario runs again on the next resume.
[[nodiscard]] bool fill_row(ScenarioRow& row, const JobOutcome& outcome);

}  // namespace hetsim
