"""The bootstrap of mldebug's torch driver: the program the binary runs as `python -c`.

Nothing is written to disk. The first line of stdin is one JSON object holding the package's
sources, `{"package": "mldebug_driver", "files": {"__init__.py": "...", "checks/overfit.py":
"...", ...}}` (paths relative to the package folder); the rest of stdin is the request, read by
`main`. A finder placed first on `sys.meta_path` serves `mldebug_driver` and its submodules
from those sources and nothing else, so the user's own modules (a `checks.py` beside the model
file) import as theirs and no `mldebug_driver` on `sys.path` shadows ours. Each module is
compiled under the name `<mldebug_driver/PATH>` with its lines in `linecache`, so a traceback
through the driver names the module and shows its line.

Standard library only, and syntax every Python 3 reads: a program that cannot run this never
says `started`, and the CLI tells the user it is not a Python that runs the driver.
"""


def _install_driver(stream):
    import json
    import linecache
    import sys

    header = json.loads(stream.readline().decode("utf-8"))
    package = header["package"]
    modules = {}
    for path, source in header["files"].items():
        parts = path[: -len(".py")].split("/")
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join([package] + parts)
        filename = "<%s/%s>" % (package, path)
        # mtime None: linecache.checkcache keeps the entry (there is no file to compare with).
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        modules[name] = (filename, source, is_package)

    class Finder:
        """Finds and loads the driver's modules from `modules`; every other name is left to the
        finders after it."""

        def find_spec(self, fullname, path=None, target=None):
            entry = modules.get(fullname)
            if entry is None:
                return None
            import importlib.util

            return importlib.util.spec_from_loader(fullname, self, is_package=entry[2])

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            filename, source, _ = modules[module.__spec__.name]
            exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)

    sys.meta_path.insert(0, Finder())
    return package


def _run_driver():
    import importlib
    import sys

    package = _install_driver(sys.stdin.buffer)
    importlib.import_module(package + ".main").main()


if __name__ == "__main__":
    _run_driver()
