"""Tests of the hetsim Python module (docs/python.md). Run by ctest (Python.Module) with PYTHONPATH
set to the module's build folder, HETSIM_BINARY to the CLI (run here only to compare with it) and
HETSIM_SOURCE to the source tree."""
import json
import os
import pathlib
import subprocess
import tempfile
import unittest

import hetsim

hetsim.set_progress(False)  # the tests' output is unittest's alone

SOURCE = pathlib.Path(os.environ.get("HETSIM_SOURCE", pathlib.Path(__file__).resolve().parents[2]))
BINARY = os.environ.get("HETSIM_BINARY", str(SOURCE / "build" / "cli" / "hetsim"))


def run_cli(*args, cwd=None):
    """The CLI's exit status and output, for comparisons (the module itself never runs it)."""
    return subprocess.run([BINARY, *args], cwd=cwd, capture_output=True, text=True, check=False)


def fixture_expectation(path):
    """A bad fixture's message: its `# expect:` lines, {file} being the path given (tests/bad_inputs_test.cpp)."""
    lines = [line[len("# expect: "):] for line in path.read_text().splitlines() if line.startswith("# expect: ")]
    return "\n".join(line.replace("{file}", str(path)) for line in lines)


class Inputs(unittest.TestCase):
    def test_version_is_the_binarys(self):
        out = run_cli("--version").stdout
        self.assertTrue(hetsim.__version__)
        self.assertIn("hetsim " + hetsim.__version__ + " ", out)

    def test_default_cluster_and_model_load_by_name(self):
        cluster = hetsim.load_cluster("a100-v100-2x2")
        model = hetsim.load_model("gpt3-1.3b")
        # 2 DGX A100 (8 GPUs each) + 2 DGX-1 V100 (8 each) = 32 GPUs on 4 nodes
        self.assertEqual((cluster.name, cluster.gpu_count, cluster.node_count), ("a100-v100-2x2", 32, 4))
        self.assertEqual([t["gpu"] for t in cluster.node_types], ["A100-SXM4-40GB", "V100-SXM2-32GB"])
        self.assertEqual((model.name, model.layers, model.global_batch), ("gpt3-1.3b", 24, 512))
        with self.assertRaises(AttributeError):  # read-only
            cluster.name = "other"

    def test_a_path_loads_as_a_name_does(self):
        by_path = hetsim.load_cluster(SOURCE / "topologies" / "a100-v100-2x2.yaml")
        self.assertEqual(by_path.gpu_count, 32)

    def test_sets_edit_the_inputs(self):
        model = hetsim.load_model("gpt3-1.3b", sets=["model.training.global_batch=64"])
        self.assertEqual(model.global_batch, 64)
        cluster = hetsim.load_cluster("a100-v100-2x2", sets=["cluster.node_types[*].nic.bandwidth=400Gbps"])
        # 400 Gbit/s = 50e9 B/s per NIC, every node type
        self.assertEqual([t["nic_bandwidth_Bps"] for t in cluster.node_types], [50e9, 50e9])

    def test_an_edit_of_the_other_input_is_refused(self):
        with self.assertRaises(hetsim.InputError):
            hetsim.load_cluster("a100-v100-2x2", sets=["model.training.global_batch=64"])

    def test_a_bad_file_raises_the_clis_message(self):
        bad = SOURCE / "tests" / "fixtures" / "bad" / "cluster_unknown_gpu.yaml"
        with self.assertRaises(hetsim.InputError) as caught:
            hetsim.load_cluster(bad)
        self.assertIsInstance(caught.exception, ValueError)
        self.assertEqual(str(caught.exception), fixture_expectation(bad))

    def test_an_unknown_name_raises_input_error(self):
        with self.assertRaises(hetsim.InputError) as caught:
            hetsim.load_model("no-such-model")
        self.assertIn("no-such-model", str(caught.exception))


class Runs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = hetsim.load_cluster("a100-v100-2x2")
        cls.model = hetsim.load_model("gpt3-1.3b")

    def test_simulate_matches_the_cli_bit_for_bit(self):
        with tempfile.TemporaryDirectory() as tmp:
            report = pathlib.Path(tmp) / "report.json"
            run = run_cli("simulate", "--strategy", "dp-even", "--report", str(report))
            self.assertEqual(run.returncode, 0, run.stderr)
            cli = json.loads(report.read_text())
        ours = hetsim.simulate(self.cluster, self.model, strategy="dp-even")
        self.assertEqual(ours["iteration_time_s"], cli["iteration_time_s"])  # exact, not approximate
        self.assertEqual(ours, cli)  # and every other figure of the report

    def test_a_faster_nic_is_no_slower(self):
        slow = hetsim.load_cluster("a100-v100-2x2", sets=["cluster.node_types[*].nic.bandwidth=10Gbps"])
        fast = hetsim.simulate(self.cluster, self.model, strategy="dp-even", upper_bound=False)
        edited = hetsim.simulate(slow, self.model, strategy="dp-even", upper_bound=False)
        # dp-even all-reduces 1.3B fp16 gradients (2.6 GB) across nodes: at 10 Gbit/s it cannot hide
        self.assertGreater(edited["iteration_time_s"], fast["iteration_time_s"])

    def test_plan_chooses_and_emits_a_plan(self):
        r = hetsim.plan(self.cluster, self.model, candidates=1, upper_bound=False)
        self.assertTrue(r["chosen"])
        self.assertIn("kind:", r["plan"])
        self.assertEqual(r["strategy"], r["chosen"])
        self.assertIn("error_bars", r)

    def test_a_planned_plan_simulates_as_planned(self):
        r = hetsim.plan(self.cluster, self.model, candidates=1, upper_bound=False, spmd=False)
        with tempfile.TemporaryDirectory() as tmp:
            plan_file = pathlib.Path(tmp) / "plan.yaml"
            plan_file.write_text(r["plan"])
            again = hetsim.simulate(self.cluster, self.model, plan=plan_file, upper_bound=False)
        self.assertEqual(again["iteration_time_s"], r["iteration_time_s"])

    def test_unknown_switches_and_strategies_are_refused(self):
        with self.assertRaises(TypeError):
            hetsim.plan(self.cluster, self.model, no_such_switch=True)
        with self.assertRaises(hetsim.InputError):
            hetsim.simulate(self.cluster, self.model, strategy="no-such-strategy")
        with self.assertRaises(hetsim.InputError):
            hetsim.plan(self.cluster, self.model, candidates=0)
        # set_progress takes True or False; None (read as False) is refused, not guessed at.
        with self.assertRaises(TypeError):
            hetsim.set_progress(None)
        hetsim.set_progress(False)


def nic_study(name, values):
    """A study of BERT-base, data parallel on the default cluster, over the NICs' bandwidth."""
    return (f"name: {name}\ncluster: a100-v100-2x2\nmodel: bert-base\nrun: simulate\nstrategy: dp-even\n"
            f"vary:\n  - set: cluster.node_types[*].nic.bandwidth\n    values: {values}\n")


class Results(unittest.TestCase):
    def test_a_sweeps_rows(self):
        study = nic_study("tiny", "[100Gbps, 400Gbps]")
        with tempfile.TemporaryDirectory() as tmp:
            (pathlib.Path(tmp) / "tiny.yaml").write_text(study)
            run = run_cli("sweep", "tiny.yaml", "--db", "tiny.db", cwd=tmp)
            self.assertEqual(run.returncode, 0, run.stderr)
            table = hetsim.results(pathlib.Path(tmp) / "tiny.db")
        try:
            import pandas
        except ImportError:
            pandas = None
        # A DataFrame where pandas imports (scripts/setup-deps installs python3-pandas), else a list of dicts.
        if pandas is not None:
            self.assertIsInstance(table, pandas.DataFrame)
            self.assertEqual(list(table.columns[:3]), ["study", "position", "cluster.node_types[*].nic.bandwidth"])
            rows = table.to_dict("records")
        else:
            self.assertIsInstance(table, list)
            rows = table
        axis = "cluster.node_types[*].nic.bandwidth"
        self.assertEqual([r[axis] for r in rows], ["100Gbps", "400Gbps"])
        self.assertEqual([r["status"] for r in rows], ["ok", "ok"])
        self.assertTrue(all(r["iteration_time_s"] > 0 and r["error"] == "" for r in rows))

    def test_sweep_writes_the_rows_the_cli_writes(self):
        study = nic_study("both", "{slow: 25Gbps, fast: 400Gbps}") + "  - set: model.training.global_batch\n    values: [64, 128]\n"
        import contextlib
        import io
        import sqlite3
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "both.yaml"
            path.write_text(study)
            said = io.StringIO()
            with contextlib.redirect_stdout(said):  # what it says goes to sys.stdout, as print's
                outcome = hetsim.sweep(path, db=pathlib.Path(tmp) / "module.db", jobs=2)
            self.assertIn("study both: 4 scenario(s), 0 already in", said.getvalue())
            self.assertEqual(outcome, {"study": "both", "scenarios": 4, "already": 0, "ok": 4, "infeasible": 0,
                                       "errors": 0, "db": str(pathlib.Path(tmp) / "module.db")})
            run = run_cli("-q", "sweep", "both.yaml", "--db", "cli.db", cwd=tmp)
            self.assertEqual(run.returncode, 0, run.stderr)

            def rows(name):
                with contextlib.closing(sqlite3.connect(pathlib.Path(tmp) / name)) as db:
                    return db.execute("SELECT scenario, position, axes, status, report FROM scenarios ORDER BY position").fetchall()
            # The same keys and reports, bit for bit (wall-clock time aside): the CLI resumes the
            # module's database with nothing left to run, and the module the CLI's.
            self.assertEqual(rows("module.db"), rows("cli.db"))
            again = run_cli("sweep", "both.yaml", "--db", "module.db", cwd=tmp)
            self.assertIn("4 already in", again.stdout)
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(hetsim.sweep(path, db=pathlib.Path(tmp) / "cli.db")["already"], 4)
            table = hetsim.results(pathlib.Path(tmp) / "module.db")
            records = table.to_dict("records") if hasattr(table, "to_dict") else table
            self.assertEqual([r["cluster.node_types[*].nic.bandwidth"] for r in records], ["slow", "slow", "fast", "fast"])

    def test_a_bad_study_raises_the_clis_message_and_a_dry_run_writes_nothing(self):
        import contextlib
        import io
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "bad.yaml"
            path.write_text("name: bad\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: plan\nvary:\n"
                            "  - flags: {a: [--no-such-flag], b: [--no-spmd]}\n")
            with self.assertRaises(hetsim.InputError) as raised:
                hetsim.sweep(path, dry_run=True)
            cli = run_cli("sweep", str(path), "--dry-run")
            self.assertEqual(cli.returncode, 2)
            self.assertEqual(str(raised.exception), cli.stderr.strip())
            path.write_text("name: good\ncluster: a100-v100-2x2\nmodel: gpt3-1.3b\nrun: plan\nvary:\n"
                            "  - flags: {a: [--no-spmd], b: [--no-pipeline]}\n")
            with contextlib.redirect_stdout(io.StringIO()):
                outcome = hetsim.sweep(path, dry_run=True)
            self.assertEqual((outcome["scenarios"], outcome["db"]), (2, None))
            self.assertEqual(sorted(p.name for p in pathlib.Path(tmp).iterdir()), ["bad.yaml"])
            with self.assertRaises(hetsim.InputError):
                hetsim.sweep(path, jobs=0)

    def test_a_file_that_is_no_database_raises_input_error(self):
        with self.assertRaises(hetsim.InputError):
            hetsim.results(SOURCE / "README.md")


class Calibration(unittest.TestCase):
    def test_a_bad_profile_raises_input_error(self):
        with self.assertRaises(hetsim.InputError):
            hetsim.use_calibration("/no/such/profile.yaml")
        hetsim.use_calibration("shipped")


if __name__ == "__main__":
    unittest.main(verbosity=2)
