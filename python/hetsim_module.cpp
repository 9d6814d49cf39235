// File: python/hetsim_module.cpp
// The `hetsim` Python module (docs/python.md): load clusters and models, plan, simulate, sweep a
// study and read its results, through the library as the CLI calls it (a study's scenarios through
// the hetsim program: python_sweep.hpp); bad input raises hetsim.InputError.
#include <pybind11/iostream.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "base/data_dir.hpp"
#include "base/field_override.hpp"
#include "base/input_error.hpp"
#include "base/log.hpp"
#include "kernels_profile/calibration_profile.hpp"
#include "planner/planner.hpp"
#include "python/python_runs.hpp"
#include "python/python_sweep.hpp"
#include "studies/sweep/results_db.hpp"
#include "studies/sweep/worker_pool.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace py = pybind11;

namespace hetsim::python {
namespace {

// JSON to Python through Python's own json.loads: the same objects, floats bit for bit, as a
// script gets from json.load of the file `--report` writes.
py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// `sets` ("PATH=VALUE", as --set takes them) of one input; an edit of another input is refused.
std::vector<FieldOverride> edits_of(const std::optional<std::vector<std::string>>& sets, const std::string& input) {
  return sets ? parse_overrides(*sets, {input}) : std::vector<FieldOverride>{};
}

// A shipped name (hetsim list clusters / models) or a path, as the CLI's --cluster and --model.
Cluster load_cluster_py(const std::filesystem::path& arg, const std::optional<std::vector<std::string>>& sets) {
  return load_cluster(resolve_input(arg.string(), "topologies", "cluster"), edits_of(sets, "cluster"));
}
ModelSpec load_model_py(const std::filesystem::path& arg, const std::optional<std::vector<std::string>>& sets) {
  return load_model(resolve_input(arg.string(), "workloads", "model"), edits_of(sets, "model"));
}

// "32 x A100-SXM4-40GB + 16 x V100-SXM2-32GB" (GPU types in node-type order).
std::string gpu_mix(const Cluster& c) {
  std::string out;
  for (const NodeType& t : c.node_types) {
    out += (out.empty() ? "" : " + ") + std::to_string(static_cast<long>(t.count) * t.gpus_per_node) + " x " + t.gpu.name;
  }
  return out;
}

py::list node_types(const Cluster& c) {
  py::list out;
  for (const NodeType& t : c.node_types) {
    py::dict d;
    d["name"] = t.name;
    d["count"] = t.count;
    d["gpu"] = t.gpu.name;
    d["gpus_per_node"] = t.gpus_per_node;
    d["nic_count"] = t.nic.count;
    d["nic_bandwidth_Bps"] = t.nic.bandwidth_Bps;
    out.append(d);
  }
  return out;
}

// plan()'s keyword switches: each a PlannerOptions field, named as the CLI's flag without "--no-"
// (spmd=False is --no-spmd). Unknown names are a TypeError, as for any Python function.
PlannerOptions planner_options(int candidates, bool upper_bound, const std::optional<std::filesystem::path>& keep_plan,
                               const py::kwargs& switches) {
  if (candidates < 1 || candidates > 20) throw InputError("candidates", "", std::to_string(candidates) + " is outside 1 to 20");
  PlannerOptions o;
  o.candidates = candidates;
  o.upper_bound = upper_bound;
  if (keep_plan) o.keep_plan = keep_plan->string();
  HybridOptions& h = o.hybrid;
  SearchOptions& s = o.spmd_options.search;
  const std::vector<std::pair<const char*, bool*>> flags{
      {"spmd", &o.spmd},
      {"pipeline", &o.pipeline},
      {"lp", &o.spmd_options.lp},
      {"sfb", &s.sfb},
      {"grouped_collectives", &s.grouped_collectives},
      {"memory_limit", &s.memory_limit},
      {"uniform_layers", &h.uniform_layers},
      {"mixed_stages", &h.mixed_stages},
      {"stage_synthesis", &h.stage_synthesis},
      {"cross_mesh", &h.cross_mesh},
      {"sequence_parallel", &h.sequence_parallel},
      {"zero1", &h.zero1},
      {"tp_overlap", &h.tp_comm_overlap},
      {"overlap", &h.overlap},
      {"context_parallel", &h.context_parallel},
      {"moe_parallel", &h.moe_parallel},
  };
  auto choice = [](const std::string& key, const py::handle& value, const std::vector<std::string>& allowed) {
    const std::string v = py::cast<std::string>(value);
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
    std::string known;
    for (const std::string& a : allowed) known += (known.empty() ? "" : ", ") + a;
    throw InputError(key, "", "\"" + v + "\" is not one of " + known);
  };
  std::string names;
  for (const auto& flag : flags) names += std::string(names.empty() ? "" : ", ") + flag.first;
  for (const auto& [key_handle, value] : switches) {
    const std::string key = py::cast<std::string>(key_handle);
    const auto flag = std::find_if(flags.begin(), flags.end(), [&](const auto& f) { return key == f.first; });
    if (flag != flags.end()) {
      if (!py::isinstance<py::bool_>(value)) throw py::type_error("plan(): switch " + key + " takes True or False");
      *flag->second = value.cast<bool>();
    } else if (key == "heuristic") {
      s.heuristic = choice(key, value, {"admissible", "zero"}) == "zero" ? Heuristic::kZero : Heuristic::kAdmissible;
    } else if (key == "cost") {
      s.cost = choice(key, value, {"overlap", "barrier"}) == "barrier" ? CostMode::kBarrier : CostMode::kOverlap;
    } else if (key == "schedule") {
      h.schedule = schedule_from_name(choice(key, value, schedule_names()));
    } else if (key == "moe_dispatcher") {
      h.moe_dispatcher = moe_dispatcher_from_name(choice(key, value, moe_dispatcher_names()));
    } else {
      throw py::type_error("plan() got an unexpected keyword argument '" + key + "' (switches: " + names +
                           ", heuristic, cost, schedule, moe_dispatcher)");
    }
  }
  if (!h.overlap) h.tp_comm_overlap = false;  // as --no-overlap: none of Megatron-Core's overlaps
  return o;
}

// A sweep's rows: the study and position, each axis as a column, the status, the figures (None
// where the scenario did not run to the end) and the error. A DataFrame where pandas imports and
// `frame`; else a list of dicts.
py::object results(const std::filesystem::path& db, bool frame) {
  const std::vector<ScenarioRow> rows = ResultsDb(db, ResultsDb::Mode::kRead).rows();
  const py::object loads = py::module_::import("json").attr("loads");
  py::list table;
  std::vector<std::string> columns{"study", "position"};
  std::vector<std::string> axes;
  for (const ScenarioRow& r : rows) {
    py::dict d;
    d["study"] = r.study;
    d["position"] = r.position;
    const py::dict axis_values = loads(r.axes.empty() ? std::string("{}") : r.axes);
    for (const auto& [k, v] : axis_values) {
      const std::string name = py::cast<std::string>(k);
      if (std::find(axes.begin(), axes.end(), name) == axes.end()) axes.push_back(name);
      d[k] = v;
    }
    d["status"] = r.status;
    const bool ok = r.status == "ok";
    const std::pair<const char*, double> figures[] = {{"iteration_time_s", r.iteration_time_s}, {"samples_per_s", r.samples_per_s},
                                                      {"mfu", r.mfu}, {"efficiency", r.efficiency}, {"peak_memory_bytes", r.peak_memory_bytes}};
    for (const auto& [name, value] : figures) {
      d[name] = ok ? py::object(py::float_(value)) : py::object(py::none());
    }
    d["error"] = r.error;
    table.append(d);
  }
  columns.insert(columns.end(), axes.begin(), axes.end());
  for (const char* c : {"status", "iteration_time_s", "samples_per_s", "mfu", "efficiency", "peak_memory_bytes", "error"}) columns.push_back(c);
  if (!frame) return py::object(std::move(table));
  py::object pandas;
  try {
    pandas = py::module_::import("pandas");
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_ImportError)) throw;
    return py::object(std::move(table));
  }
  return pandas.attr("DataFrame")(table, py::arg("columns") = columns);
}

// hetsim sweep STUDY: what it says goes to sys.stdout (a notebook shows it), the progress bar to
// stderr; Ctrl-C stops the workers and keeps every finished row, then raises KeyboardInterrupt.
py::dict sweep_py(const std::filesystem::path& study, const std::optional<std::filesystem::path>& db, int jobs, bool retry_errors,
                  bool dry_run) {
  if (jobs < 1 || jobs > 4096) throw InputError("jobs", "", std::to_string(jobs) + " is outside 1 to 4096");
  const ScenarioRunner runner = program_scenario_runner();
  SweepOutcome o;
  {
    const py::scoped_ostream_redirect to_python(std::cout, py::module_::import("sys").attr("stdout"));
    try {
      o = sweep(study, SweepOptions{db.value_or(std::filesystem::path()), jobs, retry_errors, dry_run}, runner, std::cout);
    } catch (const Interrupted&) {
      std::cout.flush();
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    }
  }
  py::dict d;
  d["study"] = o.study;
  d["scenarios"] = o.scenarios;
  d["already"] = o.already;
  d["ok"] = o.ok;
  d["infeasible"] = o.infeasible;
  d["errors"] = o.errors;
  d["db"] = o.db.empty() ? py::object(py::none()) : py::object(py::str(o.db.string()));
  return d;
}

}  // namespace
}  // namespace hetsim::python

PYBIND11_MODULE(hetsim, m) {
  using namespace hetsim;
  using namespace hetsim::python;
  m.doc() = "Plan and simulate training on heterogeneous GPU clusters (docs/python.md).";
  m.attr("__version__") = HETSIM_VERSION;
  // A user's mistake, said as the CLI says it (file:line:col: error: field: message); a ValueError.
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);

  py::class_<Cluster>(m, "Cluster", "A cluster as loaded by hetsim.load_cluster (read-only).")
      .def_property_readonly("name", [](const Cluster& c) { return c.name; })
      .def_property_readonly("file", [](const Cluster& c) { return c.file; })
      .def_property_readonly("gpu_count", &Cluster::gpu_count)
      .def_property_readonly("node_count", &Cluster::node_count)
      .def_property_readonly("node_types", &node_types, "one dict per node type: name, count (nodes), gpu, gpus_per_node, nic_count, nic_bandwidth_Bps")
      .def("__repr__", [](const Cluster& c) {
        return "<hetsim.Cluster " + c.name + ": " + std::to_string(c.gpu_count()) + " GPUs (" + gpu_mix(c) + ")>";
      });

  py::class_<ModelSpec>(m, "Model", "A model as loaded by hetsim.load_model (read-only).")
      .def_property_readonly("name", [](const ModelSpec& s) { return s.name; })
      .def_property_readonly("file", [](const ModelSpec& s) { return s.file; })
      .def_property_readonly("family", [](const ModelSpec& s) { return std::string(family_name(s.family)); })
      .def_property_readonly("layers", [](const ModelSpec& s) { return s.layers; })
      .def_property_readonly("hidden", [](const ModelSpec& s) { return s.hidden; })
      .def_property_readonly("heads", [](const ModelSpec& s) { return s.heads; })
      .def_property_readonly("seq_len", [](const ModelSpec& s) { return s.seq_len; })
      .def_property_readonly("global_batch", [](const ModelSpec& s) { return s.training.global_batch; })
      .def_property_readonly("micro_batch", [](const ModelSpec& s) { return s.training.micro_batch; })
      .def("__repr__", [](const ModelSpec& s) {
        return "<hetsim.Model " + s.name + ": " + std::to_string(s.layers) + " layers, global batch " +
               std::to_string(s.training.global_batch) + ">";
      });

  m.def("load_cluster", &load_cluster_py, py::arg("name_or_path"), py::arg("sets") = py::none(),
        "A shipped cluster name (hetsim list clusters) or a cluster file; sets: [\"cluster.PATH=VALUE\", ...] as --set.");
  m.def("load_model", &load_model_py, py::arg("name_or_path"), py::arg("sets") = py::none(),
        "A shipped model name (hetsim list models) or a model file; sets: [\"model.PATH=VALUE\", ...] as --set.");
  m.def(
      "plan",
      [](const Cluster& cluster, const ModelSpec& model, int candidates, bool upper_bound,
         const std::optional<std::filesystem::path>& keep_plan, const py::kwargs& switches) {
        const PlannerOptions o = planner_options(candidates, upper_bound, keep_plan, switches);
        return to_python(plan_report(model, cluster, o));
      },
      py::arg("cluster"), py::arg("model"), py::arg("candidates") = 3, py::arg("upper_bound") = true,
      py::arg("keep_plan") = py::none(),
      "hetsim plan: the --report JSON as a dict, plus 'chosen' (strategy name or None) and 'plan' (--emit-plan's YAML).");
  m.def(
      "simulate",
      [](const Cluster& cluster, const ModelSpec& model, const std::optional<std::string>& strategy,
         const std::optional<std::filesystem::path>& plan, bool upper_bound) {
        if (strategy && plan) throw InputError("strategy", "", "give a strategy or a plan, not both");
        return to_python(simulate_report(model, cluster, strategy.value_or("dp-proportional"), plan ? plan->string() : "", upper_bound));
      },
      py::arg("cluster"), py::arg("model"), py::arg("strategy") = py::none(), py::arg("plan") = py::none(),
      py::arg("upper_bound") = true, "hetsim simulate: the --report JSON as a dict (strategy default dp-proportional).");
  m.def("sweep", &sweep_py, py::arg("study"), py::arg("db") = py::none(), py::arg("jobs") = 1, py::arg("retry_errors") = false,
        py::arg("dry_run") = false,
        "hetsim sweep: every scenario of a study file the database lacks, run in `jobs` worker processes; returns the counts "
        "(study, scenarios, already, ok, infeasible, errors) and db, the database's path (None after a dry run).");
  m.def("results", &results, py::arg("db_path"), py::arg("frame") = true,
        "A sweep's results database as a pandas DataFrame (a list of dicts where pandas is absent, or with frame=False).");
  m.def(
      "set_progress", [](bool on) { set_log_level(on ? LogLevel::kInfo : LogLevel::kQuiet); }, py::arg("on").noconvert(),
      "Progress lines on stderr (\"hetsim: planning ...\"), on by default as in the CLI; False silences them (--quiet).");
  m.def("use_calibration", &use_calibration, py::arg("profile"),
        "\"shipped\", \"none\" or a profile file: in force for clusters loaded from now on.");
}
