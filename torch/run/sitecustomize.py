"""Start-up hook of `mldebug run` (Python imports `sitecustomize` from the first `sys.path`
folder that has one; this folder is put first on `PYTHONPATH`).

What it does, in order:
  1. nothing at all unless `MLDEBUG_RUN_DIR` is set (a process not started under `mldebug run`,
     or one of its children that dropped the environment, is left exactly as it was), except
     step 2, which only restores what this file would otherwise hide;
  2. imports the user's own `sitecustomize`, if one exists further down `sys.path`, under its
     usual name (an error in it is reported by `site` the way it would be without us);
  3. watches for `import torch`: the moment torch has finished importing, it imports the
     `mldebug_run` package beside this file and calls its `install()`.

It leaves two empty files in the run's private folder, `started-<pid>` when it starts and
`torch-<pid>` once torch is imported, so a run that traced nothing can say how far it got.

What it never does: import torch (or anything the program does not import itself), print,
or touch `sys.path`. A failure of our own is one line on stderr, never the program's end.

With `MLDEBUG_RUN_DEBUG=1` in the environment it says on stderr what it decided, one line
each, prefixed `mldebug run debug: pid N:` (found and chained the user's sitecustomize, saw
torch imported, installed the probes, and at exit whether a trace was written and why not):
the first thing to read when a run says nothing was observed.
"""

import os
import sys

_RUN_DIR_ENV = "MLDEBUG_RUN_DIR"
_DEBUG = bool(os.environ.get("MLDEBUG_RUN_DEBUG")) and os.environ.get("MLDEBUG_RUN_DEBUG") != "0"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _debug(message):
    """One line of what start-up decided, with MLDEBUG_RUN_DEBUG set."""
    if not _DEBUG:
        return
    try:
        sys.stderr.write("mldebug run debug: pid %d: %s\n" % (os.getpid(), message))
        sys.stderr.flush()
    except Exception:
        pass


def _same_folder(entry):
    try:
        return os.path.realpath(entry or os.getcwd()) == os.path.realpath(_HERE)
    except (OSError, ValueError):
        return False


def _chain_user_sitecustomize():
    """Import the `sitecustomize` this file shadows, if any, and leave it in `sys.modules`."""
    import importlib.machinery
    import importlib.util

    rest = [p for p in sys.path if isinstance(p, str) and not _same_folder(p)]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        _debug("no sitecustomize of the program's own further down sys.path")
        return
    _debug("chaining the program's own sitecustomize: %s" % spec.origin)
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _report(what, err):
    try:
        sys.stderr.write("mldebug run: probe %s failed: %s: %s\n" % (what, type(err).__name__, err))
        sys.stderr.flush()
    except Exception:
        pass


def _torch_ready():
    """torch has finished importing: hand over to the package."""
    _debug("torch imported: installing the probes")
    _mark("torch")
    try:
        package = sys.modules.get("mldebug_run")
        if package is None:
            # By path, not by name: the program may have rewritten sys.path since start-up.
            import importlib.util

            folder = os.path.join(_HERE, "mldebug_run")
            spec = importlib.util.spec_from_file_location(
                "mldebug_run", os.path.join(folder, "__init__.py"),
                submodule_search_locations=[folder])
            package = importlib.util.module_from_spec(spec)
            sys.modules["mldebug_run"] = package
            spec.loader.exec_module(package)
        package.install(watch)
    except Exception as err:  # never the program's end
        _report("install", err)


class _ImportWatcher:
    """A meta-path finder that answers for one top-level package only: it finds the package's
    spec with the finders after it and wraps that loader's `exec_module`, so `ready` runs once
    the package's own `__init__` (and everything it imports) has completed. The probes watch
    peft with it too (`watch`, handed to the package at install)."""

    def __init__(self, name, ready):
        self._name = name
        self._ready = ready
        self._busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self._name or self._busy:
            return None
        self._busy = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy = False
        loader = getattr(spec, "loader", None)
        original = getattr(loader, "exec_module", None)
        if original is None:
            return spec
        watcher = self

        def exec_module(module):
            original(module)
            try:
                del loader.exec_module
            except AttributeError:
                pass
            watcher.remove()
            try:
                watcher._ready()
            except Exception as err:  # never the program's import
                _report(watcher._name, err)

        try:
            loader.exec_module = exec_module
        except (AttributeError, TypeError):
            return spec
        return spec

    def remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


def watch(name, ready):
    """Run `ready` once the top-level package `name` has finished importing: now if it has."""
    if name in sys.modules:
        ready()
    else:
        sys.meta_path.insert(0, _ImportWatcher(name, ready))


def _mark(what):
    """An empty file `<what>-<pid>` in the run's folder: how many Python processes loaded the
    probes, and how many imported torch, for a run that traced nothing to say why."""
    try:
        path = os.path.join(os.environ[_RUN_DIR_ENV], "%s-%d" % (what, os.getpid()))
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600))
    except Exception:
        pass


def _at_exit():
    """With MLDEBUG_RUN_DEBUG: whether this process wrote a trace, and why not."""
    package = sys.modules.get("mldebug_run")
    if "torch" not in sys.modules:
        _debug("exit: torch was never imported, so no probe was installed and no trace written")
    elif package is None:
        _debug("exit: torch was imported but the probes were not installed (see above)")
    else:
        _debug("exit: %s" % package.debug_summary())


def _start():
    if not os.environ.get(_RUN_DIR_ENV):
        _debug("not under mldebug run (no %s): nothing installed" % _RUN_DIR_ENV)
        return
    _debug("started: %s; traces go to %s" % (" ".join(sys.argv) or sys.executable,
                                               os.environ.get(_RUN_DIR_ENV)))
    _mark("started")
    if _DEBUG:
        import atexit

        atexit.register(_at_exit)
    if "torch" not in sys.modules:
        _debug("waiting for the program to import torch")
    watch("torch", _torch_ready)


try:
    _start()
except Exception as _err:
    _report("install", _err)

_chain_user_sitecustomize()
