// File: cli/commands/calibrate_command.cpp
#include "cli/commands/calibrate_command.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

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
  cmd->add_option("--skip", a.skip, "leave out the runs whose name contains this text (repeatable: any of them)");
  cmd->add_option("--out", a.out, "write the profile here (docs/formats/calibration-profile.md)")->required()->check(output_file());
  cmd->add_option("--parameters", a.parameters, "fit only these parameters (default: every one the runs constrain, at most six)")->delimiter(',');
  cmd->add_option("--name", a.name, "the profile's name")->capture_default_str();
  cmd->add_option("--software", a.software, "the software stack the runs ran, e.g. \"Megatron-Core 0.16, NGC 26.04\"")->required();
  cmd->add_option("--date", a.date, "the fit's date, YYYY-MM-DD (default: today, UTC)")->each([&a](const std::string&) { a.date_given = true; });
  cmd->add_option("--era", a.era,
                  "the software stack's date, YYYY-MM-DD (its newest container or code the runs used; default: --date): "
                  "each GPU type's default profile is the one of the most recent era")
      ->each([&a](const std::string&) { a.era_given = true; });
  cmd->add_option("--measured", a.measured,
                  "hold a parameter at a measured value instead of fitting it, e.g. pass_host=842us (repeatable; "
                  "needs --measured-source)");
  cmd->add_option("--measured-source", a.measured_source,
                  "where the --measured values were measured (file, GPU, date), written into the profile beside them");
  cmd->add_option("--hold", a.hold,
                  "hold a parameter at the value another profile fitted (its uncertainty kept) instead of fitting it, e.g. "
                  "moe_layer_host=kernels_profile/calibrations/megatron-core-2026.yaml: where it carries over and these runs "
                  "cannot pin it (repeatable)");
}

namespace {

std::string pct(double x) { return format_double("%.1f %%", 100 * x); }

// The parameter `name` that `flag` gives, or an error naming the known ones.
const ParameterInfo& named_parameter(const std::string& flag, const std::string& name) {
  if (const ParameterInfo* info = find_calibration_parameter(name)) return *info;
  std::vector<std::string> known;
  for (const ParameterInfo& p : calibration_parameters()) known.emplace_back(p.name);
  throw InputError(flag, "", "unknown parameter " + in_quotes(name) + " (known: " + join(known) + ")" + did_you_mean(name, known));
}

// --measured NAME=VALUE, each a parameter within its bounds, with --measured-source saying where.
std::vector<FittedParameter> measured_parameters(const CalibrateArgs& a) {
  if (a.measured.empty() != is_blank(a.measured_source)) {
    throw InputError(a.measured.empty() ? "--measured-source" : "--measured", "",
                     a.measured.empty() ? "says where values were measured, but no --measured NAME=VALUE gives one"
                                        : "needs --measured-source: the file, GPU and date the values were measured on");
  }
  if (std::any_of(a.measured_source.begin(), a.measured_source.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    throw InputError("--measured-source", "", "holds a control character (a line break, a tab, an escape): give plain text on one line");
  }
  std::vector<FittedParameter> out;
  for (const std::string& m : a.measured) {
    const std::string flag = "--measured " + m;
    const size_t eq = m.find('=');
    if (eq == std::string::npos) throw InputError(flag, "", "is not NAME=VALUE, e.g. pass_host=842us");
    const std::string name = m.substr(0, eq), text = m.substr(eq + 1);
    const ParameterInfo* info = &named_parameter(flag, name);
    if (std::any_of(out.begin(), out.end(), [&](const FittedParameter& f) { return f.name == name; })) {
      throw InputError(flag, "", in_quotes(name) + " is measured twice");
    }
    double value = 0;
    if (info->unit == ParameterUnit::kTime) {
      const ParsedQuantity q = parse_quantity(text, Unit::kTime);
      if (!q.ok()) throw InputError(flag, "", q.error);
      value = q.value;
    } else {
      // As a profile file's number is read: decimal only (no hex float, no "inf", no spaces).
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
        throw InputError(flag, "", in_quotes(text) + " is not a share (a number from 0 to " + info->format(info->max) + ")");
      }
    }
    if (!(value <= info->max)) throw InputError(flag, "", info->format(value) + " is over " + info->format(info->max) + ", " + std::string(info->beyond));
    out.push_back({name, value + 0.0, 0, a.measured_source});  // -0 is written 0
  }
  return out;
}

// --hold NAME=PROFILE, each a parameter that profile holds, appended to `held` (the --measured ones):
// its value and uncertainty, and where they come from (a value the other profile held itself keeps
// its own provenance).
void add_held_parameters(const CalibrateArgs& a, std::vector<FittedParameter>& held) {
  for (const std::string& h : a.hold) {
    const std::string flag = "--hold " + h;
    const size_t eq = h.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == h.size()) {
      throw InputError(flag, "", "is not NAME=PROFILE, e.g. moe_layer_host=kernels_profile/calibrations/megatron-core-2026.yaml");
    }
    const std::string name = h.substr(0, eq), file = h.substr(eq + 1);
    (void)named_parameter(flag, name);
    if (std::any_of(held.begin(), held.end(), [&](const FittedParameter& f) { return f.name == name; })) {
      throw InputError(flag, "", in_quotes(name) + " is held twice (--measured or --hold)");
    }
    const CalibrationProfile from = load_calibration_profile(file);
    const auto it = std::find_if(from.parameters.begin(), from.parameters.end(), [&](const FittedParameter& f) { return f.name == name; });
    if (it == from.parameters.end()) {
      std::vector<std::string> has;
      for (const FittedParameter& f : from.parameters) has.push_back(f.name);
      throw InputError(flag, "", from.name + " (" + file + ") does not hold " + in_quotes(name) + "; it holds " + join(has));
    }
    FittedParameter f = *it;
    if (f.measured.empty() && f.held_from.empty()) {
      f.held_from = from.name + " (" + std::filesystem::path(file).filename().string() + ", fitted " + from.fitted + " on " +
                    counted(from.fitted_on.size(), "run") + " of " + join(from.devices) + ")";
    }
    held.push_back(std::move(f));
  }
}

}  // namespace

int run_calibrate(const CalibrateArgs& a) {
  CalibrateOptions o;
  o.parameters = a.parameters;
  o.name = a.name;
  o.software = a.software;
  // A profile's name and stack are what reports say of it: text on one line, never empty.
  for (const auto& [flag, text] : {std::pair<const char*, const std::string*>{"--name", &a.name}, {"--software", &a.software}}) {
    if (is_blank(*text)) throw InputError(flag, "", "is empty: every report the profile is used in names it");
    if (utf8_error(*text)) throw InputError(flag, "", "is not UTF-8 text; the profile file it is written into must be");
    if (std::any_of(text->begin(), text->end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
      throw InputError(flag, "", "holds a control character (a line break, a tab, an escape): give plain text on one line");
    }
  }
  if (a.name.size() > 256) throw InputError("--name", "", "has " + std::to_string(a.name.size()) + " characters; a name is 1 to 256");
  o.date = a.date_given ? a.date : utc_today();
  if (const std::string why = fitted_date_problem(o.date); !why.empty()) throw InputError("--date", "", in_quotes(o.date) + why);
  o.measured = measured_parameters(a);
  add_held_parameters(a, o.measured);
  o.era = a.era_given ? a.era : "";
  if (const std::string why = a.era_given ? era_problem(o.era, o.date) : ""; !why.empty()) throw InputError("--era", "", in_quotes(o.era) + why);
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const std::string& f : a.runs) inputs.emplace_back("a run file", f);
  check_paths_apart({{"--out", a.out}}, inputs);
  std::vector<ValidationRun> runs;
  for (ValidationRun& x : load_run_files(a.runs)) {
    const auto named = [&](const std::string& t) { return x.name.find(t) != std::string::npos; };
    if (std::all_of(a.only.begin(), a.only.end(), named) && std::none_of(a.skip.begin(), a.skip.end(), named)) runs.push_back(std::move(x));
  }
  // The files the runs read (clusters, models, plans), before the fit rather than after it.
  for (const ValidationRun& r : runs) {
    for (const auto& [what, path] : {std::pair{"a run's cluster", r.cluster}, std::pair{"a run's model", r.training.model},
                                     std::pair{"a run's plan", r.training.plan}, std::pair{"a run's model", r.layer.model}}) {
      if (!path.empty()) inputs.emplace_back(what, path.string());
    }
  }
  check_paths_apart({{"--out", a.out}}, inputs);
  check_writable(a.out, "--out");  // a fit can take many minutes: say so now, not after it
  if (runs.empty() && a.only.empty() && a.skip.empty()) throw InputError("--runs", "", "the run files hold no run");
  if (runs.empty()) {
    std::vector<std::string> only, skip;
    for (const std::string& t : a.only) only.push_back(in_quotes(t));
    for (const std::string& t : a.skip) skip.push_back(in_quotes(t));
    const std::string named = only.empty() ? "no run name" : "no run name contains all of " + join(only);
    throw InputError(a.only.empty() ? "--skip" : "--only", "",
                     skip.empty() ? named : named + (only.empty() ? " is free of " : " and none of ") + join(skip));
  }
  std::cout << "hetsim calibrate: " << counted(runs.size(), "run") << ", fitted " << o.date << " (--date sets it)\n";
  const CostModel cost = CostModel::shipped();
  const SimOptions sim;
  std::optional<Progress> bar;
  std::string bar_unit;
  const auto began = std::chrono::steady_clock::now();  // a fit of seconds shows no bar
  // A bar a phase: the runs as they are, each parameter alone (a screen), then the grid of those
  // the runs move and the leave-one-source-out fits.
  const auto fit = [&] {
    try {
      return fit_calibration(runs, cost, sim, o, [&](size_t done, size_t total, const std::string& unit) {
        if (!bar || unit != bar_unit) {
          if (bar) bar->finish();
          const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
          bar.emplace(total, unit, std::max(0.0, kProgressAfterS - elapsed));
          bar_unit = unit;
        }
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
    if (!f.measured.empty()) {
      std::printf("  %-24s %12s   measured, not fitted (%s)\n", f.name.c_str(), info->format(f.value).c_str(), f.measured.c_str());
      continue;
    }
    if (!f.held_from.empty()) {
      std::printf("  %-24s %12s ± %s   held from %s, not fitted here\n", f.name.c_str(), info->format(f.value).c_str(),
                  info->format(f.uncertainty).c_str(), f.held_from.c_str());
      continue;
    }
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
  std::set<std::string> sources, unfitted_sources;
  size_t unfitted = 0;
  for (const CrossValidatedRun& r : p.runs) {
    std::printf("  %-50s %+9.1f%% %+9.1f%%%s %s\n", printable(r.run).c_str(), 100 * r.in_sample_error, 100 * r.loso_error,
                r.loso_unfitted ? "*" : " ", printable(r.source).substr(0, 80).c_str());
    sources.insert(r.source);
    if (r.loso_unfitted) unfitted_sources.insert(r.source);
    unfitted += r.loso_unfitted;
  }
  // A fold that fitted nothing tests nothing: its runs' loso errors are the raw model's.
  if (sources.size() == 1) {
    std::cout << "  * every run is of one source (" << in_quotes(*sources.begin()) << "): leaving it out leaves no run to fit on, so the\n"
                 "    loso errors are the unfitted model's, not a test of this fit; the in-sample errors, optimistic, are the\n"
                 "    only figures of it here. Runs of a second source (another campaign) give the honest figure.\n";
  } else if (unfitted > 0) {
    std::cout << "  * " << counted(unfitted, "run") << " of " << counted(unfitted_sources.size(), "source")
              << ": the other sources' runs constrain no parameter, or are fewer than the parameters\n    they would fit, so their loso errors are the unfitted model's, not a test of this fit\n";
  }
  write_file(a.out, calibration_profile_text(p), "--out");
  std::cout << "\nwrote " << printable(a.out) << " (simulate, plan and validate take it with --calibration " << printable(a.out) << ")\n";
  return 0;
}

}  // namespace hetsim::cli
