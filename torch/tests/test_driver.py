"""The driver's contract (torch/CONTRACT.md), tested by piping requests into the driver run as
the binary runs it (`python -c <bootstrap>`, the package's sources on stdin ahead of the request:
`drive`), and, for what the checks measure, by the same request run in this interpreter (`measure`:
what the process's `main` does between reading the request and exiting), which spares a Python
start and a torch import per test.

Run from the repository root with the Python that has torch:

    python -m unittest discover -s torch/tests -t torch/tests

The hf: and LoRA tests need transformers (and peft); they are skipped without them.
"""

import importlib.util
import io
import json
import os
import random
import subprocess
import sys
import unittest

import driver_process

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models.py")
FIXTURES = os.path.join(HERE, "fixtures")
ALL = ["init-loss", "class-balance", "label-mask", "grad-flow", "nan-trace", "batch-leak",
       "overfit", "memory"]


def has(module):
    return importlib.util.find_spec(module) is not None


def strict_json(line):
    """json.loads that refuses bare NaN / Infinity (not JSON)."""

    def refuse(name):
        raise ValueError("bare %s in %r" % (name, line[:80]))

    return json.loads(line, parse_constant=refuse)


NONCE = "test-nonce-1"


def request_text(target, checks, seed, steps, extra):
    """The request `drive` and `measure` send, as JSON."""
    request = {"contract": 2, "nonce": NONCE, "target": target, "checks": checks, "seed": seed,
               "steps": steps, "learning_rate": 0.003, "device": "cpu"}
    request.update(extra)
    return json.dumps(request)


def without_nonce(lines):
    """The events on `lines`, each checked to carry the request's nonce, which is dropped."""
    events = [strict_json(line) for line in lines]
    for e in events:
        assert e.pop("nonce") == NONCE, e
    return events


def drive(target, checks=ALL, seed=0, steps=60, **extra):
    """(exit code, events, stderr) of one driver run. Every line carries the request's nonce
    (checked here and dropped); the first event, `started`, is dropped too."""
    proc = subprocess.run(
        driver_process.command(),
        input=driver_process.stdin(request_text(target, checks, seed, steps, extra)),
        capture_output=True, text=True, timeout=600,
    )
    events = without_nonce(proc.stdout.splitlines())
    assert events and events[0]["event"] == "started", events
    return proc.returncode, events[1:], proc.stderr


def measure(target, checks=ALL, seed=0, steps=60, **extra):
    """The events of `drive`'s run but `started`, made in this interpreter: the request (as
    `drive` builds it) through the driver's `parse_request` and `run_all`, written by its
    `Events` channel and read back as the binary reads them. For tests of what the checks measure;
    a test of the process itself (its exit code, its stdout and stderr, a start-up `fatal`) uses
    `drive`."""
    parse = driver_process.module("request").parse_request
    channel = driver_process.module("events").Events
    run_all = driver_process.module("run").run_all
    out = io.StringIO()
    run_all(parse(request_text(target, checks, seed, steps, extra)), channel(out, NONCE))
    return without_nonce(out.getvalue().splitlines())


def fatal_of(events):
    """The one event of a start-up failure."""
    assert len(events) == 1 and events[0]["event"] == "fatal", events
    return events[0]


def file_target(name, path=MODELS):
    return {"kind": "file", "path": path, "name": name}


def checks_of(events):
    return {e["check"]: e for e in events if e["event"] == "check"}


class TinyMlpContract(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.code, cls.events, cls.stderr = drive(file_target("TinyMlp"))

    def test_events_in_order(self):
        self.assertEqual(self.code, 0, self.stderr)
        self.assertEqual(self.events[0]["event"], "hello")
        self.assertEqual(self.events[-1], {"event": "done"})
        self.assertNotIn("started", [e["event"] for e in self.events])
        checks = [e["check"] for e in self.events if e["event"] == "check"]
        self.assertEqual(checks, ALL)
        for e in self.events[1:-1]:
            self.assertIn(e["event"], ("check", "progress"))

    def test_hello(self):
        hello = self.events[0]
        for key in ("contract", "python", "torch", "transformers", "peft", "device", "model",
                    "task", "labels", "parameters", "startup_s"):
            self.assertIn(key, hello)
        self.assertEqual(hello["task"], "classification")
        self.assertEqual(hello["labels"], "shifted")
        self.assertEqual(hello["parameters"], 8 * 32 + 32 + 32 * 4 + 4)
        self.assertGreater(hello["startup_s"], 0)

    def test_user_prints_go_to_stderr(self):
        self.assertIn("a user print from batch()", self.stderr)

    def test_every_check_measures(self):
        c = checks_of(self.events)
        for check in ALL:
            self.assertIn("measurement", c[check], c[check])
        samples = c["init-loss"]["measurement"]["samples"]
        self.assertEqual(len(samples), 3)
        self.assertEqual({s["classes"] for s in samples}, {4})
        self.assertEqual(len(c["class-balance"]["measurement"]["targets"]), 16)
        rows = c["grad-flow"]["measurement"]["params"]
        self.assertEqual([r["name"] for r in rows], ["0.weight", "0.bias", "2.weight", "2.bias"])
        self.assertTrue(all(r["grad"]["kind"] == "norm" for r in rows))
        # The head is closest to the loss.
        depth = {r["name"]: r["depth"] for r in rows}
        self.assertLess(depth["2.weight"], depth["0.weight"])
        nan = c["nan-trace"]["measurement"]
        self.assertIsNone(nan["culprit"])
        self.assertEqual(nan["traced_modules"], 3)
        self.assertEqual(nan["dtype"], "float32")
        leak = c["batch-leak"]["measurement"]
        self.assertEqual(leak["cross"], 0.0)
        self.assertGreater(leak["own"], 0.0)
        fit = c["overfit"]["measurement"]
        self.assertEqual(len(fit["losses"]), 61)  # steps + 1: 60 steps do not memorise it
        self.assertLess(fit["losses"][-1], fit["losses"][0])
        self.assertEqual(fit["trainable"], 4)

    def test_the_default_loss_is_zero_with_every_target_ignored(self):
        masked = checks_of(self.events)["label-mask"]["measurement"]["all_masked"]
        # As candle's masked cross-entropy: exactly 0 with zero gradients, not PyTorch's 0/0.
        self.assertEqual(masked["loss"], 0.0)
        self.assertFalse(masked["grads_move"])

    def test_nan_is_a_string(self):
        events = measure(file_target("TorchMeanLoss"), checks=["label-mask"])
        masked = checks_of(events)["label-mask"]["measurement"]["all_masked"]
        # PyTorch's mean cross-entropy over zero kept targets is 0/0.
        self.assertEqual(masked["loss"], "NaN")
        self.assertFalse(masked["grads_move"])

    def test_memory_counts_the_weights(self):
        m = checks_of(self.events)["memory"]["measurement"]
        self.assertEqual(m["load"], 4.0 * (8 * 32 + 32 + 32 * 4 + 4))
        self.assertEqual(len(m["steps"]), 4)
        ends = [s["end"] for s in m["steps"]]
        self.assertEqual(ends[1], ends[3], "a clean step ends where it started")
        self.assertEqual(m["optimizer_state"] > 0, True)


class Failures(unittest.TestCase):
    def test_forward_that_raises_breaks_only_what_it_breaks(self):
        events = measure(file_target("ForwardRaises"))
        c = checks_of(events)
        self.assertIn("measurement", c["class-balance"])
        for check in ("init-loss", "label-mask", "grad-flow", "nan-trace", "batch-leak",
                      "overfit", "memory"):
            self.assertIn("error", c[check], check)
            error = c[check]["error"]
            self.assertIn("forward is broken on purpose", error["message"])
            self.assertLessEqual(len(error["traceback"]), 12)
            self.assertTrue(error["traceback"])

    def test_missing_name_is_a_target_fatal_naming_file_and_name(self):
        code, events, stderr = drive(file_target("NoSuchModel"), checks=["init-loss"])
        fatal = fatal_of(events)
        self.assertEqual((code, fatal["kind"]), (3, "target"))
        self.assertIn("models.py", fatal["message"])
        self.assertIn("NoSuchModel", fatal["message"])
        self.assertIn("NoSuchModel", stderr)

    def test_missing_batch_is_a_target_fatal(self):
        code, events, _ = drive(file_target("NoBatch"), checks=["init-loss"])
        fatal = fatal_of(events)
        self.assertEqual(fatal["kind"], "target")
        self.assertIn("NoBatch", fatal["message"])
        self.assertIn("batch", fatal["message"])

    def test_bad_request_is_a_request_fatal(self):
        code, events, stderr = drive(file_target("TinyMlp"), checks=["no-such-check"])
        self.assertEqual(fatal_of(events)["kind"], "request")
        self.assertIn("no-such-check", stderr)

    def test_exit_codes_from_build_are_the_users_code_not_the_drivers(self):
        for name, code in (("ExitsInBuild", 4), ("ExitsThreeInBuild", 3)):
            _, events, _ = drive(file_target(name), checks=["init-loss"])
            fatal = fatal_of(events)
            self.assertEqual(fatal["kind"], "user_code", name)
            self.assertIn("build() called sys.exit(%d)" % code, fatal["message"])

    def test_an_exception_in_build_is_the_users_code_with_its_traceback(self):
        _, events, _ = drive(file_target("RaisesInBuild"), checks=["init-loss"])
        fatal = fatal_of(events)
        self.assertEqual(fatal["kind"], "user_code")
        self.assertIn("ValueError: build is broken on purpose", fatal["message"])
        self.assertTrue(any("models.py" in line for line in fatal["traceback"]), fatal)

    def test_a_dotted_name_is_attribute_access(self):
        code, events, stderr = drive(file_target("Outer.Inner"), checks=["init-loss"])
        self.assertEqual(code, 0, stderr)
        self.assertIn("measurement", checks_of(events)["init-loss"])
        _, events, _ = drive(file_target("Outer.Nope"), checks=["init-loss"])
        fatal = fatal_of(events)
        self.assertEqual(fatal["kind"], "target")
        self.assertIn("no `Nope` in `Outer`", fatal["message"])

    def test_a_loss_that_is_not_a_scalar_is_an_error_of_the_loss(self):
        events = measure(file_target("VectorLoss"), checks=["label-mask", "init-loss"])
        for check, event in checks_of(events).items():
            self.assertIn("error", event, check)
            self.assertIn("expected a tensor with one element", event["error"]["message"])

    def test_a_loss_that_fails_only_on_minus_100_is_measured_not_an_error(self):
        events = measure(file_target("NoIgnoreIndex"), checks=["label-mask"])
        m = checks_of(events)["label-mask"]["measurement"]
        self.assertIn("error", m["all_masked"])

    def test_label_mask_reports_the_class_count_beside_targets_out_of_range(self):
        events = measure(file_target("TargetsOutOfRange"), checks=["label-mask"])
        m = checks_of(events)["label-mask"]["measurement"]
        self.assertEqual(m["classes"], 4)
        self.assertTrue(all(t >= 10 for t in m["targets"]), m["targets"])

    def test_without_torch_the_driver_says_it_started_then_no_torch(self):
        request = {"contract": 2, "nonce": NONCE, "target": file_target("TinyMlp")}
        proc = subprocess.run(
            driver_process.command("-S"), input=driver_process.stdin(json.dumps(request)),
            capture_output=True, text=True, timeout=600,
        )
        events = [strict_json(line) for line in proc.stdout.splitlines()]
        self.assertEqual([e["event"] for e in events], ["started", "fatal"], proc.stderr)
        self.assertEqual(events[1]["kind"], "no_torch")
        self.assertEqual(events[1]["nonce"], NONCE)


class Measurements(unittest.TestCase):
    def test_detached_layer_has_no_gradient(self):
        events = measure(file_target("Detached"), checks=["grad-flow"])
        rows = {r["name"]: r for r in checks_of(events)["grad-flow"]["measurement"]["params"]}
        self.assertEqual(rows["first.weight"]["grad"], {"kind": "none"})
        self.assertIsNone(rows["first.weight"]["depth"])
        self.assertEqual(rows["head.weight"]["grad"]["kind"], "norm")

    def test_frozen_parameter_is_listed_as_frozen(self):
        events = measure(file_target("Frozen"), checks=["grad-flow"])
        m = checks_of(events)["grad-flow"]["measurement"]
        self.assertEqual(m["frozen"], [{"name": "0.weight", "shape": [32, 8]}])
        self.assertNotIn("0.weight", [r["name"] for r in m["params"]])

    def test_nan_culprit_is_named(self):
        events = measure(file_target("MakesNan"), checks=["nan-trace"])
        m = checks_of(events)["nan-trace"]["measurement"]
        culprit = m["culprit"]
        self.assertIsNotNone(culprit)
        self.assertEqual(culprit["step"], 0)
        self.assertEqual(culprit["frame"]["module"], "boom")
        self.assertEqual(culprit["frame"]["kind"], "LogOfNegative")
        self.assertEqual(culprit["frame"]["non_finite"], 16 * 32)
        self.assertEqual([f["module"] for f in culprit["before"]], ["input", "first"])
        self.assertTrue(all(f["non_finite"] == 0 for f in culprit["before"]))

    def test_causal_lm_future_probe(self):
        events = measure(file_target("TinyLm"), checks=["batch-leak", "label-mask"])
        c = checks_of(events)
        leak = c["batch-leak"]["measurement"]
        self.assertEqual(leak["future"]["t"], 7)
        self.assertEqual(leak["future"]["past"], 0.0)
        self.assertGreater(leak["future"]["ahead"], 0.0)
        mask = c["label-mask"]["measurement"]
        self.assertEqual(mask["seq_len"], 16)
        self.assertEqual(len(mask["inputs"]), 64)
        # Every other position probed: logits there must not move a masked loss.
        self.assertEqual(mask["masked_logits"]["before"], mask["masked_logits"]["after"])

    def test_kept_losses_grow_memory_every_step(self):
        events = measure(file_target("KeepsLosses"), checks=["memory"])
        steps = checks_of(events)["memory"]["measurement"]["steps"]
        ends = [s["end"] for s in steps]
        # backward frees the kept graph's saved tensors: what stays is the loss itself, a
        # float32 scalar per step (the graph's nodes are not tensor storage).
        self.assertEqual([b - a for a, b in zip(ends, ends[1:])], [4.0, 4.0, 4.0])

    def test_same_seed_same_numbers_other_seed_other_numbers(self):
        # A driver process and a run in this interpreter (where other runs came before): the
        # same numbers for the same seed, which also shows `measure` measures what `drive` does.
        checks = ["init-loss", "grad-flow", "overfit", "batch-leak"]
        _, a, _ = drive(file_target("TinyMlp"), checks=checks, seed=3, steps=10)
        b = measure(file_target("TinyMlp"), checks=checks, seed=3, steps=10)
        c = measure(file_target("TinyMlp"), checks=checks, seed=4, steps=10)
        self.assertEqual(checks_of(a), checks_of(b))
        self.assertNotEqual(checks_of(a)["init-loss"], checks_of(c)["init-loss"])

    def test_seeds_measure_each_seed_as_a_run_of_it_alone(self):
        checks = ["init-loss", "grad-flow", "overfit", "batch-leak", "memory"]
        both = measure(file_target("TinyMlp"), checks=checks, seeds=[4, 3], steps=10)
        ran = [(e["seed"], e["check"]) for e in both if e["event"] == "check"]
        self.assertEqual(ran, [(4, c) for c in checks] + [(3, c) for c in checks])
        self.assertEqual(both[0]["event"], "hello")
        self.assertEqual(both[-1], {"event": "done"})
        for seed in (4, 3):
            alone = measure(file_target("TinyMlp"), checks=checks, seed=seed, steps=10)
            self.assertEqual(
                {e["check"]: e for e in both if e.get("seed") == seed}, checks_of(alone), seed)

    def test_seeds_must_be_a_list_of_seeds(self):
        parse = driver_process.module("request").parse_request
        error = driver_process.module("errors").DriverError
        for bad in ([], [1, "2"], [True], [-1], 3):
            request = {"contract": 2, "target": file_target("TinyMlp"), "seeds": bad}
            with self.assertRaises(error, msg=repr(bad)) as raised:
                parse(json.dumps(request))
            self.assertEqual(raised.exception.kind, "request")


class RngRestored(unittest.TestCase):
    def test_every_check_puts_the_rng_back(self):
        subjects, driver = driver_process.module("subjects"), driver_process.module("run")
        import torch

        subject = subjects.FileSubject(MODELS, "TinyMlp")
        request = {"seed": 5, "steps": 5, "learning_rate": 0.003, "device": "cpu"}
        sink = []

        class Collect:
            def emit(self, obj):
                sink.append(obj)

        run = driver.Run(subject, request, Collect())
        torch.manual_seed(123)
        random.seed(123)
        before = (torch.get_rng_state().clone(), random.getstate())
        for check in ALL:
            event = driver.run_check(run, check)
            self.assertIn("measurement", event, event)
            self.assertTrue(torch.equal(torch.get_rng_state(), before[0]), check)
            self.assertEqual(random.getstate(), before[1], check)


DETERMINISM_PROBE = """
import json, os, sys, tempfile
sys.path.insert(0, sys.argv[1])
from mldebug_driver import request, rng
import torch

rng.configure_determinism()
seen = {
    "enabled": torch.are_deterministic_algorithms_enabled(),
    "warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
    "compiler_imported": "torch._inductor.config" in sys.modules,
}
with tempfile.TemporaryDirectory() as folder:
    model = os.path.join(folder, "compiled.py")
    with open(model, "w") as f:
        f.write("import torch\\n"
                "class Compiled:\\n"
                "    def build(self):\\n"
                "        return torch.compile(torch.nn.Linear(4, 2))\\n"
                "    def batch(self, seed, device):\\n"
                "        return torch.zeros(2, 4), torch.zeros(2, dtype=torch.long)\\n")
    target = {"kind": "file", "path": model, "name": "Compiled"}
    request.make_subject({"target": target}).build()
seen["compiler_deterministic"] = sys.modules["torch._inductor.config"].deterministic
print(json.dumps(seen))
"""


class Determinism(unittest.TestCase):
    def test_deterministic_kernels_without_importing_the_compiler_at_start(self):
        # A new interpreter: another module of a shared one may have imported the compiler.
        proc = subprocess.run(
            [sys.executable, "-c", DETERMINISM_PROBE, driver_process.DRIVER_DIR],
            capture_output=True, text=True, timeout=600,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        seen = json.loads(proc.stdout.strip().splitlines()[-1])
        self.assertTrue(seen["enabled"], seen)
        self.assertTrue(seen["warn_only"], seen)
        # Importing it costs about 2 s of every driver start.
        self.assertFalse(seen["compiler_imported"], seen)
        # A model built with torch.compile gets deterministic code from the compiler too.
        self.assertTrue(seen["compiler_deterministic"], seen)


class SharedModelRestored(unittest.TestCase):
    def test_a_model_build_hands_out_twice_is_put_back(self):
        driver = driver_process.module("run")
        import torch

        class Collect:
            def emit(self, obj):
                pass

        request = {"contract": 2, "target": file_target("SharedModel"), "checks": ["overfit"],
                   "seed": 0, "steps": 20, "learning_rate": 0.01, "device": "cpu"}
        run = driver.start(request, Collect())
        model = run.subject.obj.model
        before = {k: v.clone() for k, v in model.state_dict().items()}
        event = driver.run_check(run, "overfit")
        self.assertGreater(len(event["measurement"]["losses"]), 2)
        for k, v in model.state_dict().items():
            self.assertTrue(torch.equal(v, before[k]), k)


@unittest.skipUnless(has("transformers"), "transformers is not installed")
class HuggingFace(unittest.TestCase):
    def test_tiny_llama_all_checks(self):
        events = measure({"kind": "hf", "path": os.path.join(FIXTURES, "tiny-llama")}, steps=30)
        hello = events[0]
        self.assertEqual((hello["task"], hello["labels"]), ("causal_lm", "in_model"))
        c = checks_of(events)
        for check in ALL:
            self.assertIn("measurement", c[check], c[check])
        self.assertEqual(c["init-loss"]["measurement"]["samples"][0]["classes"], 256)
        targets = c["label-mask"]["measurement"]["targets"]
        self.assertIn(-100, targets)  # right padding is masked
        leak = c["batch-leak"]["measurement"]
        self.assertEqual(leak["cross"], 0.0)
        self.assertEqual(leak["future"]["past"], 0.0)
        kinds = {r["grad"]["kind"] for r in c["grad-flow"]["measurement"]["params"]}
        self.assertEqual(kinds, {"norm"})

    def test_a_build_returning_an_hf_causal_lm_means_labels_in_model(self):
        events = measure(file_target("HfCollateShifts"), checks=["label-mask"])
        self.assertEqual(events[0]["labels"], "in_model")

    def test_gpt2_config_json_path(self):
        events = measure(
            {"kind": "hf", "path": os.path.join(FIXTURES, "tiny-gpt2", "config.json")},
            checks=["init-loss"])
        self.assertEqual(checks_of(events)["init-loss"]["measurement"]["samples"][0]["classes"], 256)

    @unittest.skipUnless(has("peft"), "peft is not installed")
    def test_lora_with_wrong_targets_reports_the_error(self):
        events = measure(
            {"kind": "hf", "path": os.path.join(FIXTURES, "tiny-llama")},
            checks=["grad-flow", "init-loss"],
            lora={"r": 4, "alpha": 8, "targets": ["qq_proj"], "dropout": 0.0})
        c = checks_of(events)
        lora = c["grad-flow"]["measurement"]["lora"]
        self.assertTrue(lora["error"])
        self.assertEqual(lora["matched_modules"], [])
        self.assertIn("q_proj", lora["linear_modules"])
        self.assertIn("measurement", c["init-loss"])

    @unittest.skipUnless(has("peft"), "peft is not installed")
    def test_lora_trains_adapters_only(self):
        events = measure(
            {"kind": "hf", "path": os.path.join(FIXTURES, "tiny-llama")},
            checks=["grad-flow"],
            lora={"r": 4, "alpha": 8, "targets": ["q_proj", "v_proj"], "dropout": 0.0})
        m = checks_of(events)["grad-flow"]["measurement"]
        self.assertIsNone(m["lora"]["error"])
        self.assertEqual(len(m["lora"]["matched_modules"]), 4)  # 2 layers x q, v
        self.assertTrue(all("lora_" in r["name"] for r in m["params"]))
        self.assertTrue(any(f["name"].endswith("q_proj.base_layer.weight") for f in m["frozen"]))


if __name__ == "__main__":
    unittest.main()
