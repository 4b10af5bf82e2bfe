"""The run zoo without mldebug: every script in manifest.json runs plainly for two epochs and
exits 0 (one whose bug stops it, `raises` in the manifest, ends with that exception); where a script's own log shows its bug (weights that never move, an accuracy that
stays at zero, a NaN), the buggy script shows it and its fixed twin does not; the manifest
agrees with the files and with PLAYBOOK.md; each buggy script differs from its twin in a few
lines.

    $(bash .ci/torch-venv) -m unittest discover -s torch/run_zoo -p test_zoo_scripts.py

Scripts that need transformers or peft are skipped where those are not installed.
MLDEBUG_ZOO_JOBS sets how many scripts run at once (default 2).
"""

import concurrent.futures
import difflib
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import time
import unittest

ZOO = os.path.dirname(os.path.abspath(__file__))
PLAYBOOK = os.path.normpath(os.path.join(ZOO, "..", "..", "PLAYBOOK.md"))
EPOCHS = "2"
SEED = "0"
# Wall-clock limit per script; generous because the machine may be shared with builds.
TIMEOUT_S = 300
# A buggy script and its fixed twin differ in at most this many changed lines.
MAX_TWIN_DIFF_LINES = 14
KNOWN_NEEDS = {"transformers", "peft", "torchrun"}
NUMBER = r"(-?[0-9.]+(?:e[-+]?[0-9]+)?|nan|inf)"


def manifest():
    with open(os.path.join(ZOO, "manifest.json")) as f:
        return json.load(f)


def script_path(entry):
    """The file a command runs: the .py argument, or the module of `-m pkg.mod`."""
    command = entry["command"]
    if "-m" in command:
        module = command[command.index("-m") + 1]
        return os.path.join(ZOO, *module.split(".")) + ".py"
    return os.path.join(ZOO, next(a for a in command if a.endswith(".py")))


def missing_needs(entry):
    missing = [n for n in entry["needs"] if n != "torchrun" and importlib.util.find_spec(n) is None]
    if "torchrun" in entry["needs"]:
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_gloo_available()):
            missing.append("torch.distributed with gloo")
    return missing


def argv(entry):
    """The manifest command with the seed filled in and the interpreter running this test."""
    out = []
    for arg in entry["command"]:
        if arg == "python":
            out.append(sys.executable)
        elif arg == "torchrun":
            out += [sys.executable, "-m", "torch.distributed.run"]
        else:
            out.append(arg.replace("{seed}", SEED))
    return out + ["--epochs", EPOCHS]


def plain_env():
    """This environment without anything that would switch on mldebug's probes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLDEBUG_RUN_")}
    env["OMP_NUM_THREADS"] = "1"
    return env


def run(entry):
    started = time.monotonic()
    try:
        done = subprocess.run(argv(entry), cwd=ZOO, env=plain_env(), capture_output=True, text=True,
                              timeout=TIMEOUT_S)
        return done.returncode, done.stdout, done.stderr, time.monotonic() - started
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or "", e.stderr or "", time.monotonic() - started


def values(pattern, text):
    return [float(v) for v in re.findall(pattern + " " + NUMBER, text)]


def is_nan(x):
    return math.isnan(x)


# (buggy script, what its log prints, what must hold of the buggy values, of the fixed twin's).
EFFECTS = [
    ("no_zero_grad", "val_mse", lambda v: v[-1] > 10, lambda v: v[-1] < 1),
    ("optimizer_on_copy", "weight distance from init", lambda v: max(v) == 0, lambda v: min(v) > 0),
    ("lr_zero_schedule", "lr", lambda v: v[-1] == 0, lambda v: min(v) > 0),
    ("clip_tiny", "val_acc", lambda v: len(set(v)) == 1, lambda v: len(set(v)) == len(v)),
    ("adam_lr_too_high", "loss", lambda v: max(v) > 10, lambda v: max(v) < 2),
    ("head_after_optimizer", "head weight norm", lambda v: len(set(v)) == 1, lambda v: len(set(v)) == len(v)),
    ("hf_labels_shifted", "value accuracy", lambda v: v[-1] < 0.2, lambda v: v[-1] > 0.8),
    ("lm_targets_not_shifted", "value accuracy", lambda v: v[-1] < 0.2, lambda v: v[-1] > 0.8),
    ("lm_targets_not_shifted", "loss", lambda v: v[-1] < 0.1, lambda v: v[-1] > 0.5),
    ("labels_all_masked", "loss", lambda v: all(map(is_nan, v)), lambda v: not any(map(is_nan, v))),
    ("nan_log_zero", "loss", lambda v: is_nan(v[-1]), lambda v: not any(map(is_nan, v))),
    ("loss_spike_batch", "mse", lambda v: max(v) > 1000, lambda v: max(v) < 100),
    ("eval_no_eval_mode_bn", "bn batches tracked", lambda v: v[-1] > 20, lambda v: v[-1] == 20),
    ("duplicate_batches", "records seen", lambda v: v[-1] == 320, lambda v: v[-1] == 160),
    ("cycle_nan_temperature", "loss", lambda v: is_nan(v[-1]), lambda v: not any(map(is_nan, v))),
    ("cycle_eval_train_mode", "val_acc", lambda v: len(v) >= 3, lambda v: len(v) >= 3),
    ("amp_clip_before_unscale", "val_acc", lambda v: v[-1] < 0.5, lambda v: v[-1] > 0.8),
]


class ManifestTest(unittest.TestCase):
    def test_entries_are_consistent(self):
        entries = manifest()
        by_name = {e["name"]: e for e in entries}
        self.assertEqual(len(by_name), len(entries), "names are unique")
        for e in entries:
            with self.subTest(e["name"]):
                self.assertTrue(os.path.isfile(script_path(e)), script_path(e))
                self.assertIn("{seed}", e["command"])
                self.assertLessEqual(set(e["needs"]), KNOWN_NEEDS)
                self.assertEqual("torchrun" in e["needs"], e["command"][0] == "torchrun")
                if e["steps"] != "auto":  # "auto": the default window, one cycle
                    self.assertIsInstance(e["steps"], int)
                    self.assertGreater(e["steps"], 0)
                self.assertEqual(e["clean"], not e["expect"], "clean exactly when nothing is expected")
                if not e["clean"]:
                    self.assertTrue(e["bug"])
                    twin = by_name.get(e["twin_of"])
                    self.assertIsNotNone(twin, "a buggy script has a fixed twin")
                    self.assertTrue(twin["clean"], "its twin is clean")

    def test_every_script_is_listed(self):
        listed = {script_path(e) for e in manifest()}
        for name in sorted(os.listdir(ZOO)):
            if name.endswith(".py") and not name.startswith("test_"):
                self.assertIn(os.path.join(ZOO, name), listed, name)

    def test_expected_ids_are_playbook_symptoms(self):
        with open(PLAYBOOK) as f:
            anchors = set(re.findall(r"\{#([a-z0-9-]+)\}", f.read()))
        for e in manifest():
            for finding in e["expect"]:
                self.assertIn(finding, anchors, f"{e['name']}: {finding}")

    def test_twins_differ_in_a_few_lines(self):
        by_name = {e["name"]: e for e in manifest()}
        for e in manifest():
            if e["clean"]:
                continue
            with self.subTest(e["name"]):
                with open(script_path(e)) as f:
                    buggy = f.read().splitlines()
                with open(script_path(by_name[e["twin_of"]])) as f:
                    fixed = f.read().splitlines()
                changed = [l for l in difflib.unified_diff(buggy, fixed, lineterm="", n=0)
                           if l[:1] in "+-" and not l.startswith(("+++", "---"))]
                self.assertGreater(len(changed), 0, "the twin differs")
                self.assertLessEqual(len(changed), MAX_TWIN_DIFF_LINES, "\n".join(changed))


class ScriptsRunTest(unittest.TestCase):
    results = {}

    @classmethod
    def setUpClass(cls):
        runnable = [e for e in manifest() if not missing_needs(e)]
        jobs = int(os.environ.get("MLDEBUG_ZOO_JOBS", "2"))
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {e["name"]: pool.submit(run, e) for e in runnable}
            cls.results = {name: f.result() for name, f in futures.items()}

    def test_every_script_exits_zero(self):
        for e in manifest():
            with self.subTest(e["name"]):
                missing = missing_needs(e)
                if missing:
                    self.skipTest(f"needs {', '.join(missing)}")
                code, out, err, seconds = self.results[e["name"]]
                if e.get("raises"):  # its bug stops it: the program's own exception
                    self.assertEqual(code, 1, f"{' '.join(argv(e))}\n{err[-3000:]}")
                    self.assertIn(e["raises"] + ":", err.splitlines()[-1])
                    continue
                self.assertEqual(code, 0, f"{' '.join(argv(e))} ({seconds:.1f} s)\n{out[-2000:]}\n{err[-3000:]}")

    def test_bugs_show_in_the_scripts_own_logs(self):
        by_name = {e["name"]: e for e in manifest()}
        for name, pattern, buggy_holds, fixed_holds in EFFECTS:
            twin = by_name[name]["twin_of"]
            with self.subTest(f"{name}: {pattern}"):
                if name not in self.results or twin not in self.results:
                    self.skipTest("not run here")
                buggy = values(pattern, self.results[name][1])
                fixed = values(pattern, self.results[twin][1])
                self.assertTrue(buggy and fixed, f"both logs print '{pattern}'")
                self.assertTrue(buggy_holds(buggy), f"{name}: {pattern} {buggy}")
                self.assertTrue(fixed_holds(fixed), f"{twin}: {pattern} {fixed}")


if __name__ == "__main__":
    unittest.main()
