"""The request on stdin (CONTRACT.md, Request): parsed and checked (a malformed one is a
`request` fatal: a bug in the CLI), its device resolved against this torch, its target made a
Subject."""

import json

import torch

from .checks import CHECKS
from .errors import DriverError, first_line
from .events import CONTRACT
from .subjects import FileSubject, HfSubject

CHECK_IDS = (
    "init-loss",
    "class-balance",
    "label-mask",
    "grad-flow",
    "nan-trace",
    "batch-leak",
    "overfit",
    "memory",
)


def parse_request(text):
    try:
        request = json.loads(text)
    except ValueError as e:
        raise DriverError("the request on stdin is not JSON: %s" % e, "request")
    if not isinstance(request, dict):
        raise DriverError("the request on stdin must be a JSON object", "request")
    if request.get("contract") != CONTRACT:
        raise DriverError(
            "the request asks for contract %r; this driver speaks contract %d"
            % (request.get("contract"), CONTRACT),
            "request",
        )
    target = request.get("target")
    if not isinstance(target, dict) or target.get("kind") not in ("file", "hf"):
        raise DriverError(
            'the request needs "target": {"kind": "file" | "hf", ...}', "request"
        )
    if target["kind"] == "file" and not (target.get("path") and target.get("name")):
        raise DriverError('a file target needs "path" and "name"', "request")
    if target["kind"] == "hf" and not target.get("path"):
        raise DriverError('an hf target needs "path"', "request")
    checks = request.get("checks", list(CHECK_IDS))
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise DriverError(
            "unknown check(s) %s; known: %s" % (", ".join(map(str, unknown)), ", ".join(CHECK_IDS)),
            "request",
        )
    request["checks"] = checks
    lora = request.get("lora")
    if lora is not None:
        if not isinstance(lora, dict) or not lora.get("targets") or "r" not in lora:
            raise DriverError(
                'lora needs {"r": .., "alpha": .., "targets": [..]}', "request"
            )
        lora.setdefault("alpha", 2 * int(lora["r"]))
    for key, kind in (("seed", int), ("steps", int), ("learning_rate", (int, float))):
        if key in request and (not isinstance(request[key], kind) or isinstance(request[key], bool)):
            raise DriverError("%s must be a number" % key, "request")
    seeds = request.get("seeds")
    if seeds is not None:
        if (
            not isinstance(seeds, list)
            or not seeds
            or any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in seeds)
        ):
            raise DriverError("seeds must be a non-empty list of seeds", "request")
        # Start-up (the one build that counts the parameters) runs with the first.
        request["seed"] = seeds[0]
    return request


def resolve_device(name):
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError) as e:
        raise DriverError("device %r: %s" % (name, first_line(e)), "request")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise DriverError(
                "device %s: this torch (%s) sees no CUDA device" % (name, torch.__version__)
            )
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DriverError(
                "device %s: only %d CUDA device(s)" % (name, torch.cuda.device_count())
            )
    elif device.type != "cpu":
        raise DriverError("device %s: only cpu and cuda[:N] are supported" % name, "request")
    return device


def make_subject(request):
    target = request["target"]
    if target["kind"] == "hf":
        subject = HfSubject(target["path"])
    else:
        subject = FileSubject(target["path"], target["name"])
    subject.lora = request.get("lora")
    return subject
