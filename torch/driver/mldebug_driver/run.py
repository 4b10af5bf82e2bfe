"""A run: start-up (the target loaded, built once, the `hello` event), then each requested check
in order, its event emitted, with every RNG and a model build() hands out twice put back after
it; `done` at the end."""

import gc
import sys
import time
import weakref

import torch

from . import START
from .checks import CHECKS
from .errors import DriverError, error_event, user_code_error
from .events import CONTRACT
from .request import make_subject, resolve_device
from .rng import configure_determinism, rng_state, seed_all, set_rng_state


class Run:
    """What the checks share: the subject, the request's settings and the event channel."""

    def __init__(self, subject, request, events):
        self.subject = subject
        self.seed = int(request.get("seed", 0))
        self.steps = max(1, int(request.get("steps", 200)))
        self.learning_rate = float(request.get("learning_rate", 0.003))
        self.device = torch.device(request.get("device", "cpu"))
        self.events = events
        # (model, state, training) when build() hands out one model it keeps (see `start`).
        self.shared = None

    def fresh(self, seed):
        """A fresh model (torch seeded first) and its batch, on the device."""
        seed_all(seed)
        model = self.subject.build()
        model.to(self.device)
        inputs, targets = self.subject.batch(seed, self.device)
        return model, inputs, targets

    def restore_models(self):
        """A build() that hands out one shared model gets it back as it was at start-up."""
        if self.shared is None:
            return
        model, state, training = self.shared
        model.load_state_dict(state)
        model.train(training)
        for p in model.parameters():
            p.grad = None

    def progress(self, check, done, total, loss=None):
        event = {"event": "progress", "check": check, "done": done, "total": total}
        if loss is not None:
            event["loss"] = loss
        self.events.emit(event)


def run_check(run, check):
    """One check's event; every RNG and any model build() handed out are put back afterwards."""
    state = rng_state()
    grad_enabled = torch.is_grad_enabled()
    try:
        kind, value = CHECKS[check](run)
        return {"event": "check", "check": check, kind: value}
    except DriverError:
        raise
    except (Exception, SystemExit) as e:  # the user's code raised, or called sys.exit
        return error_event(check, e)
    finally:
        torch.set_grad_enabled(grad_enabled)
        try:
            run.restore_models()
        finally:
            set_rng_state(state)


def package_version(name):
    try:
        from importlib import metadata

        return metadata.version(name)
    except Exception:
        return None


def start(request, events):
    """Loads the target, builds it once (the start-up time), says hello; returns the Run."""
    configure_determinism()
    device = resolve_device(request.get("device", "cpu"))
    request["device"] = str(device)
    subject = make_subject(request)
    seed_all(int(request.get("seed", 0)))
    try:
        model = subject.build()
    except DriverError:
        raise
    except (Exception, SystemExit) as e:
        raise user_code_error("%s: build()" % subject.label, e)
    parameters = sum(p.numel() for p in model.parameters())
    # A model that outlives this reference is kept by the user's object: every check would get
    # that same model, so it is put back after each one.
    kept = weakref.ref(model)
    del model
    gc.collect()
    shared = kept()
    snapshot = None
    if shared is not None:
        state = {k: v.detach().clone() for k, v in shared.state_dict().items()}
        snapshot = (shared, state, shared.training)
        del shared
    startup = time.perf_counter() - START
    events.emit(
        {
            "event": "hello",
            "contract": CONTRACT,
            "python": "%d.%d.%d" % sys.version_info[:3],
            "torch": torch.__version__.split("+")[0],
            "transformers": package_version("transformers"),
            "peft": package_version("peft"),
            "device": str(device),
            "model": subject.label,
            "task": subject.task,
            "labels": subject.labels,
            "parameters": int(parameters),
            "startup_s": round(startup, 3),
        }
    )
    run = Run(subject, request, events)
    run.shared = snapshot
    return run


def run_all(request, events):
    """Start-up, then one event per requested check and seed (the request's `seeds`, else its
    `seed`; each event names its seed), then done (raises DriverError at start-up). A check run
    for a seed here measures what a run for that seed alone measures: every check seeds and
    builds afresh, and puts every RNG and a shared model back after it."""
    run = start(request, events)
    for seed in request.get("seeds") or [run.seed]:
        run.seed = int(seed)
        for check in request["checks"]:
            event = run_check(run, check)
            event["seed"] = run.seed
            events.emit(event)
    events.emit({"event": "done"})
