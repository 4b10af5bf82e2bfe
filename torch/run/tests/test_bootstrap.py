"""The bootstrap and the process's life under `mldebug run`: the user's own sitecustomize still
runs, `python -S` and a missing MLDEBUG_RUN_DIR leave the program alone, the program's output is
byte-identical with and without the probes, the process exits 0 right after the N-th step, an
exception ends the trace with its traceback, DataLoader workers write no trace, a failing probe
switches itself off without touching the program. Every program here starts in a new
interpreter (`spawn`), since its start is what is tested; the last class checks that the other
modules' forked runs (`run`) measure what a new interpreter does.

    python -m unittest discover -s torch/run/tests -t torch/run/tests
"""

import importlib.util
import os
import tempfile
import unittest

from runner import RUN, fixture, has, kind, only_trace, run, spawn, steps

MLP = fixture("mlp_train.py")


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Bootstrap(unittest.TestCase):
    def test_user_sitecustomize_still_runs(self):
        theirs = tempfile.mkdtemp()
        with open(os.path.join(theirs, "sitecustomize.py"), "w") as f:
            f.write("import os\nos.environ['USER_SITECUSTOMIZE_RAN'] = 'yes'\n")
        script = os.path.join(theirs, "probe.py")
        with open(script, "w") as f:
            f.write("import os, sys\nprint(os.environ.get('USER_SITECUSTOMIZE_RAN'),"
                    " sys.modules['sitecustomize'].__file__)\n")
        result = spawn([script], pythonpath=[theirs])
        self.assertEqual(result.rc, 0, result.stderr)
        ran, module_file = result.stdout.decode().split()
        self.assertEqual(ran, "yes")
        self.assertEqual(os.path.dirname(module_file), theirs)

    def test_no_site_writes_no_trace(self):
        # -S also drops site-packages from sys.path: give torch's folder back by PYTHONPATH.
        packages = os.path.dirname(importlib.util.find_spec("torch").submodule_search_locations[0])
        result = spawn([MLP, "--iterations", "2"], steps=5, flags=["-S"], pythonpath=[packages])
        self.assertEqual(result.rc, 0, result.stderr)
        self.assertEqual(result.traces, {})

    def test_isolated_mode_writes_no_trace(self):
        result = spawn([MLP, "--iterations", "2"], steps=5, flags=["-I"])
        self.assertEqual(result.rc, 0, result.stderr)
        self.assertEqual(result.traces, {})

    def test_without_run_dir_nothing_is_installed(self):
        script = os.path.join(tempfile.mkdtemp(), "check.py")
        with open(script, "w") as f:
            f.write("import sys, torch\nprint('mldebug_run' in sys.modules)\n")
        result = spawn([script], bootstrap=False, pythonpath=[RUN])
        self.assertEqual(result.stdout.decode().strip(), "False", result.stderr)

    def test_output_is_byte_identical(self):
        plain = spawn([MLP, "--iterations", "8", "--no-shuffle", "--accumulate", "2"],
                    bootstrap=False)
        watched = spawn([MLP, "--iterations", "8", "--no-shuffle", "--accumulate", "2"], steps=0)
        self.assertEqual(plain.rc, 0, plain.stderr)
        self.assertEqual(watched.rc, 0, watched.stderr)
        self.assertIn(b"final loss", plain.stdout)
        self.assertEqual(plain.stdout, watched.stdout)
        self.assertNotIn("mldebug run", watched.stderr)
        records = only_trace(watched)
        self.assertEqual(records[-1]["kind"], "end")
        self.assertEqual(records[-1]["reason"], "exit")
        self.assertEqual(records[-1]["steps"], 8)

    def test_exits_zero_right_after_the_last_step(self):
        result = spawn([MLP, "--iterations", "50"], steps=3)
        self.assertEqual(result.rc, 0, result.stderr)
        # The process ends inside the third step: the line printed after it never comes.
        self.assertEqual(result.stdout.decode().split("\n"), ["after step 1", "after step 2", ""])
        records = only_trace(result)
        self.assertEqual(records[0]["kind"], "start")
        self.assertEqual(records[0]["steps_limit"], 3)
        end = records[-1]
        self.assertEqual((end["kind"], end["reason"], end["steps"]), ("end", "steps", 3))
        self.assertEqual([r["step"] for r in steps(records)], [1, 2, 3])

    def test_exception_ends_the_trace_with_its_traceback(self):
        result = spawn([MLP, "--bug", "raise"], steps=10)
        self.assertNotEqual(result.rc, 0)
        end = only_trace(result)[-1]
        self.assertEqual((end["kind"], end["reason"], end["steps"]), ("end", "exception", 2))
        self.assertIn("ValueError: a batch the program cannot handle", end["exception"])
        self.assertIn("mlp_train.py", end["exception"])
        self.assertLessEqual(len(end["exception"].splitlines()), 20)

    def test_dataloader_workers_write_no_trace(self):
        result = spawn([MLP, "--iterations", "4", "--workers", "2"], steps=3)
        self.assertEqual(result.rc, 0, result.stderr)
        records = only_trace(result)
        self.assertEqual(kind(records, "loader")[0]["num_workers"], 2)
        self.assertEqual(records[-1]["reason"], "steps")

    @unittest.skipUnless(has("accelerate"), "needs accelerate")
    def test_accelerate_launch_traces_the_worker_not_the_launcher(self):
        launch = ["-m", "accelerate.commands.launch", "--cpu", "--num_processes", "1",
                  "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
        result = spawn([MLP, "--iterations", "5"], steps=3, flags=launch)
        self.assertEqual(result.rc, 0, result.stderr)
        records = only_trace(result)
        self.assertTrue(records[0]["argv"][0].endswith("mlp_train.py"))
        self.assertEqual((records[-1]["reason"], records[-1]["steps"]), ("steps", 3))

    def test_failing_probe_is_switched_off_and_reported_once_in_the_trace_only(self):
        result = spawn([MLP, "--iterations", "4", "--bug", "probe_fails"], steps=0)
        self.assertEqual(result.rc, 0, result.stderr)
        # The program's own streams stay its own: the error is in the trace's end record.
        self.assertNotIn("mldebug", result.stderr)
        self.assertNotIn(b"mldebug", result.stdout)
        records = only_trace(result)
        self.assertEqual(len(steps(records)), 4)
        self.assertEqual(records[-1]["probe_errors"], ["memory: ZeroDivisionError: division by zero"])


def stable(value):
    """`value` without what differs between two runs of one program on one seed: the pid, the
    clock (`time`, durations `*_s`) and the resident memory (`rss*`), at any depth."""
    if isinstance(value, list):
        return [stable(v) for v in value]
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items()
                if k not in ("pid", "time") and not k.endswith("_s") and not k.startswith("rss")}
    return value


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class ForkedRuns(unittest.TestCase):
    """`run` starts a plain script in a fork of the test process; these compare it with a new
    interpreter on the same programs, record by record (times, memory and pids aside)."""

    def same(self, argv, steps):
        forked, spawned = run(argv, steps=steps), spawn(argv, steps=steps)
        self.assertEqual(forked.rc, spawned.rc, forked.stderr + spawned.stderr)
        self.assertEqual(forked.stdout, spawned.stdout)
        self.assertEqual(stable(only_trace(forked)), stable(only_trace(spawned)))
        return only_trace(forked)

    def test_a_run_to_its_end(self):
        records = self.same([MLP, "--iterations", "6", "--accumulate", "2"], 0)
        self.assertEqual((records[-1]["reason"], records[-1]["steps"]), ("exit", 6))

    def test_a_run_stopped_at_its_step_limit(self):
        records = self.same([MLP, "--iterations", "50", "--bug", "no_zero_grad"], 4)
        self.assertEqual((records[-1]["reason"], records[-1]["steps"]), ("steps", 4))

    def test_a_run_that_raises(self):
        records = self.same([MLP, "--bug", "raise"], 10)
        self.assertEqual(records[-1]["reason"], "exception")

    def test_a_plain_run_writes_no_trace(self):
        forked = run([MLP, "--iterations", "3"], bootstrap=False)
        self.assertEqual(forked.rc, 0, forked.stderr)
        self.assertEqual(forked.traces, {})
        self.assertEqual(forked.stdout, spawn([MLP, "--iterations", "3"], bootstrap=False).stdout)


if __name__ == "__main__":
    unittest.main()
