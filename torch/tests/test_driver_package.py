"""The driver as a package shipped from memory (torch/driver/bootstrap.py): a user's modules named
like the driver's still import as the user's, a traceback through the driver names its module
and line, the checks it registers are the ones a request may name, and the package also runs
from a checkout with `python -m mldebug_driver`.

    python -m unittest discover -s torch/tests -t torch/tests -p test_driver_package.py
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

import driver_process

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models.py")
NONCE = "package-nonce"

# A model whose folder holds a module for every name the driver uses (filled in by the test):
# each says it is the user's, and build() fails unless every one of them is.
USER_MODEL = '''
import importlib

import torch
from torch import nn

NAMES = %r


class Net:
    def build(self):
        for name in NAMES:
            owner = getattr(importlib.import_module(name), "OWNER", None)
            if owner != "user":
                raise AssertionError("%%s is not the user's module: %%r" %% (name, owner))
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def batch(self, seed, device):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(8, 4, generator=g)
        return x.to(device), torch.randint(0, 3, (8,), generator=g).to(device)
'''


def drive(target, checks, cwd=None):
    """(exit code, events without `started`, stderr) of the driver run as the binary runs it."""
    request = {"contract": 2, "nonce": NONCE, "target": target, "checks": checks, "seed": 0,
               "steps": 5, "learning_rate": 0.003, "device": "cpu"}
    proc = subprocess.run(
        driver_process.command(), input=driver_process.stdin(json.dumps(request)),
        capture_output=True, text=True, timeout=600, cwd=cwd,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events and events[0]["event"] == "started", (events, proc.stderr)
    return proc.returncode, events[1:], proc.stderr


def checks_of(events):
    return {e["check"]: e for e in events if e["event"] == "check"}


def module_names():
    """Every module name the driver's files would have at the top level: `checks`, `events`,
    `overfit`, ... and `bootstrap`; dotted names under `checks` for its submodules."""
    names = {"bootstrap"}
    for path in driver_process.package_files():
        parts = path[: -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if parts and not parts[-1].startswith("__"):
            names.add(".".join(parts))
            names.add(parts[-1])
    return sorted(names)


class UserModulesNamedLikeOurs(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="mldebug-user-model-")
        self.addCleanup(shutil.rmtree, self.folder)

    def write(self, relative, text):
        path = os.path.join(self.folder, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def test_they_import_as_the_users_and_every_check_still_measures(self):
        names = module_names()
        for name in ("checks", "events", "lora", "subjects", "main", "overfit", "checks.overfit"):
            self.assertIn(name, names)
        for name in names:
            parts = name.split(".")
            if any(n.startswith(parts[0] + ".") for n in names):  # a package: checks/
                relative = os.path.join(*parts, "__init__.py")
            else:
                relative = os.path.join(*parts) + ".py"
            self.write(relative, 'OWNER = "user"\n')
        self.write("model.py", USER_MODEL % names)
        target = {"kind": "file", "path": os.path.join(self.folder, "model.py"), "name": "Net"}
        all_checks = ["init-loss", "class-balance", "label-mask", "grad-flow", "nan-trace",
                      "batch-leak", "overfit", "memory"]
        code, events, stderr = drive(target, all_checks, cwd=self.folder)
        self.assertEqual(code, 0, stderr)
        self.assertEqual(events[0]["event"], "hello", events)
        c = checks_of(events)
        for check in all_checks:
            self.assertIn("measurement", c[check], c[check])

    def test_a_user_module_that_is_not_the_users_fails_the_model(self):
        # The same model without the user's modules: build() must see a module that is not
        # theirs (or none), so the test above can fail.
        self.write("model.py", USER_MODEL % ["events"])
        target = {"kind": "file", "path": os.path.join(self.folder, "model.py"), "name": "Net"}
        _, events, _ = drive(target, ["init-loss"], cwd=self.folder)
        self.assertEqual(events[-1]["event"], "fatal", events)
        self.assertEqual(events[-1]["kind"], "user_code")


class Tracebacks(unittest.TestCase):
    def test_a_traceback_through_the_driver_names_its_module_and_line(self):
        target = {"kind": "file", "path": MODELS, "name": "VectorLoss"}
        _, events, _ = drive(target, ["init-loss"])
        error = checks_of(events)["init-loss"]["error"]
        text = "\n".join(error["traceback"])
        self.assertIn('File "<mldebug_driver/subjects.py>"', text)
        self.assertIn('File "<mldebug_driver/checks/init_loss.py>"', text)
        # The module's own line, from the sources the bootstrap registered.
        self.assertIn("raise TypeError(", text)
        self.assertNotIn('File "<string>"', text)

    def test_a_traceback_of_the_users_code_leaves_the_drivers_frames_out(self):
        target = {"kind": "file", "path": MODELS, "name": "ForwardRaises"}
        _, events, _ = drive(target, ["init-loss"])
        text = "\n".join(checks_of(events)["init-loss"]["error"]["traceback"])
        self.assertIn("models.py", text)
        self.assertNotIn("mldebug_driver", text)


class Registry(unittest.TestCase):
    def test_the_checks_registered_are_the_ids_a_request_may_name(self):
        checks = driver_process.module("checks")
        request = driver_process.module("request")
        self.assertEqual(list(checks.CHECKS), list(request.CHECK_IDS))


class FromACheckout(unittest.TestCase):
    def test_python_m_runs_the_same_driver(self):
        request = {"contract": 2, "nonce": NONCE, "checks": ["class-balance"],
                   "target": {"kind": "file", "path": MODELS, "name": "TinyMlp"}}
        env = dict(os.environ, PYTHONPATH=driver_process.DRIVER_DIR)
        proc = subprocess.run(
            driver_process.command()[:1] + ["-m", "mldebug_driver"], input=json.dumps(request),
            capture_output=True, text=True, timeout=600, env=env,
        )
        events = [json.loads(line) for line in proc.stdout.splitlines()]
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual([e["event"] for e in events], ["started", "hello", "check", "done"])
        self.assertIn("measurement", events[2])


if __name__ == "__main__":
    unittest.main()
