"""The driver as the binary runs it, for the tests: `python -c <bootstrap.py>` with the package's
sources as stdin's first line (the files the binary embeds: every `.py` under
torch/driver/mldebug_driver but tests and __pycache__), then the request; and the package itself
importable from the checkout for tests that call into it."""

import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER_DIR = os.path.normpath(os.path.join(HERE, "..", "driver"))
PACKAGE = "mldebug_driver"
PACKAGE_DIR = os.path.join(DRIVER_DIR, PACKAGE)
BOOTSTRAP = os.path.join(DRIVER_DIR, "bootstrap.py")


def package_files():
    """{path relative to the package folder: source}, as src/build.rs embeds them."""
    files = {}
    for folder, dirs, names in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "tests"))
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    files[os.path.relpath(path, PACKAGE_DIR).replace(os.sep, "/")] = f.read()
    return files


def command(*python_flags):
    """The argv the binary starts: the interpreter, its flags, `-c` and the bootstrap."""
    with open(BOOTSTRAP, encoding="utf-8") as f:
        return [sys.executable] + list(python_flags) + ["-c", f.read()]


def stdin(request_text):
    """What the binary writes on the driver's stdin: the sources line, then the request."""
    sources = json.dumps({"package": PACKAGE, "files": package_files()}, separators=(",", ":"))
    return sources + "\n" + request_text


def module(name):
    """`mldebug_driver.<name>` imported from the checkout (torch/driver on sys.path)."""
    if DRIVER_DIR not in sys.path:
        sys.path.insert(0, DRIVER_DIR)
    return importlib.import_module(PACKAGE + "." + name)
