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

What it never does: import torch (or anything the program does not import itself), print,
or touch `sys.path`. A failure of our own is one line on stderr, never the program's end.
"""

import os
import sys

_RUN_DIR_ENV = "MLDEBUG_RUN_DIR"
_HERE = os.path.dirname(os.path.abspath(__file__))


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
        return
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
        package.install()
    except Exception as err:  # never the program's end
        _report("install", err)


class _TorchImportWatcher:
    """A meta-path finder that answers for `torch` only: it finds torch's spec with the finders
    after it and wraps that loader's `exec_module`, so `_torch_ready` runs once torch's own
    `__init__` (and everything it imports) has completed."""

    def __init__(self):
        self._busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" or self._busy:
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
            _torch_ready()

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


def _start():
    if not os.environ.get(_RUN_DIR_ENV):
        return
    if "torch" in sys.modules:
        _torch_ready()
    else:
        sys.meta_path.insert(0, _TorchImportWatcher())


try:
    _start()
except Exception as _err:
    _report("install", _err)

_chain_user_sitecustomize()
