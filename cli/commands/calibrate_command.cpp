// File: cli/commands/calibrate_command.cpp
#include "cli/commands/calibrate_command.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <optional>

#include "base/input_error.hpp"
#include "base/iso_date.hpp"
#include "base/progress.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/common_args.hpp"
#include "cli/input_files.hpp"
#include "studies/validation/calibration_fit.hpp"
#include "studies/validation/run_file.hpp"

namespace hetsim::cli {

void add_calibrate_options(CLI::App* cmd, CalibrateArgs& a) {
  cmd->add_option("--runs", a.runs, "measured runs to fit on (validation run files, docs/formats/validation-runs.md)")->required();
  cmd->add_option("--only", a.only, "only the runs whose name contains this text (repeatable: every one of them)");
  cmd->add_option("--out", a.out, "write the profile here (docs/formats/calibration-profile.md)")->required()->check(output_file());
  cmd->add_option("--parameters", a.parameters, "fit only these parameters (default: every one the runs constrain, at most six)")->delimiter(',');
  cmd->add_option("--name", a.name, "the profile's name")->capture_default_str();
  cmd->add_option("--software", a.software, "the software stack the runs ran, e.g. \"Megatron-Core 0.16, NGC 26.04\"")->required();
  cmd->add_option("--date", a.date, "the fit's date, YYYY-MM-DD (default: today, UTC)")->each([&a](const std::string&) { a.date_given = true; });
  cmd->add_option("--era", a.era,
                  "the software stack's date, YYYY-MM-DD (its newest container or code the runs used; default: --date): "
                  "each GPU type's default profile is the one of the most recent era")
      ->each([&a](const std::string&) { a.era_given = true; });
}

namespace {

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &utc);
  return buf;
}

std::string pct(double x) { return format_double("%.1f %%", 100 * x); }

}  // namespace

int run_calibrate(const CalibrateArgs& a) {
  CalibrateOptions o;
  o.parameters = a.parameters;
  o.name = a.name;
  o.software = a.software;
  // A profile's name and stack are what reports say of it: text on one line, never empty.
  for (const auto& [flag, text] : {std::pair<const char*, const std::string*>{"--name", &a.name}, {"--software", &a.software}}) {
    if (is_blank(*text)) throw InputError(flag, "", "is empty: every report the profile is used in names it");
    if (std::any_of(text->begin(), text->end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
      throw InputError(flag, "", "holds a control character (a line break or tab): give text on one line");
    }
  }
  if (a.name.size() > 256) throw InputError("--name", "", "has " + std::to_string(a.name.size()) + " characters; a name is 1 to 256");
  o.date = a.date_given ? a.date : today();
  if (const std::string why = iso_date_problem(o.date); !why.empty()) throw InputError("--date", "", in_quotes(o.date) + why);
  o.era = a.era_given ? a.era : "";
  if (const std::string why = a.era_given ? era_problem(o.era, o.date) : ""; !why.empty()) throw InputError("--era", "", in_quotes(o.era) + why);
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const std::string& f : a.runs) inputs.emplace_back("a run file", f);
  check_paths_apart({{"--out", a.out}}, inputs);
  std::vector<ValidationRun> runs;
  for (ValidationRun& x : load_run_files(a.runs)) {
    const bool all = std::all_of(a.only.begin(), a.only.end(), [&](const std::string& t) { return x.name.find(t) != std::string::npos; });
    if (all) runs.push_back(std::move(x));
  }
  if (runs.empty() && a.only.empty()) throw InputError("--runs", "", "the run files hold no run");
  if (runs.empty()) {
    std::vector<std::string> quoted;
    for (const std::string& t : a.only) quoted.push_back(in_quotes(t));
    throw InputError("--only", "", "no run name contains all of " + join(quoted));
  }
  std::cout << "hetsim calibrate: " << counted(runs.size(), "run") << ", fitted " << o.date << " (--date sets it)\n";
  const CostModel cost = CostModel::shipped();
  const SimOptions sim;
  std::optional<Progress> bar;
  // The total is first an upper estimate (every asked parameter on the grid), then, once each
  // parameter was simulated alone, the grid of those the runs move.
  const auto fit = [&] {
    try {
      return fit_calibration(runs, cost, sim, o, [&](size_t done, size_t total) {
        if (!bar) bar.emplace(total, "simulations");
        bar->set_total(total);
        bar->update(done);
      });
    } catch (...) {
      if (bar) bar->finish();  // the error on a line of its own
      throw;
    }
  }();
  if (bar) bar->finish();
  const CalibrationProfile& p = fit.profile;
  std::cout << "\nfitted on " << counted(p.fitted_on.size(), "run") << " of " << join(p.devices) << ":\n";
  for (const FittedParameter& f : p.parameters) {
    const ParameterInfo* info = find_calibration_parameter(f.name);
    std::printf("  %-24s %12s ± %s\n", f.name.c_str(), info->format(f.value).c_str(), info->format(f.uncertainty).c_str());
  }
  for (const std::string& r : fit.refused) std::cout << "  refused " << r << "\n";
  for (const std::string& r : fit.left_out) std::cout << "  left out " << r << "\n";
  std::cout << "\n|error| per class (in sample: fitted on every run; leave one source out: each source's runs predicted by\n"
               "a fit without them, the honest figure):\n";
  std::printf("  %-40s %5s %10s %10s %10s %10s\n", "class", "rows", "in mean", "in max", "loso mean", "loso max");
  for (const CrossValidatedClass& c : p.classes) {
    std::printf("  %-40s %5d %10s %10s %10s %10s\n", printable(c.name).c_str(), c.rows, pct(c.in_sample_mean).c_str(),
                pct(c.in_sample_max).c_str(), pct(c.loso_mean).c_str(), pct(c.loso_max).c_str());
  }
  std::printf("\n  %-50s %10s %10s  %s\n", "run", "in sample", "loso", "source");
  for (const CrossValidatedRun& r : p.runs) {
    std::printf("  %-50s %+9.1f%% %+9.1f%%  %s\n", printable(r.run).c_str(), 100 * r.in_sample_error, 100 * r.loso_error,
                printable(r.source).substr(0, 80).c_str());
  }
  write_file(a.out, calibration_profile_text(p), "--out");
  std::cout << "\nwrote " << a.out << " (simulate, plan and validate take it with --calibration " << a.out << ")\n";
  return 0;
}

}  // namespace hetsim::cli
