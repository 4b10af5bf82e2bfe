"""Where in the user's code something happened: the first frame, walking outwards from the
caller, that belongs to the program rather than to a library.

A frame is the program's when its file is not in the standard library, not in this package,
and not in torch, transformers, accelerate or peft. Frames of other installed libraries
(site-packages: lightning, timm, datasets, ...) are passed over too, unless no frame outside
site-packages exists (a program installed as a package), in which case the first of them that
is not one of the named libraries is taken. `where` is `"path:line"` with the path as the
program named it (`co_filename`), or None.

What it never does: read files, import anything, or keep a frame alive.
"""

import os
import sys
import sysconfig

# Libraries whose frames are never "the user's code", wherever they are installed.
LIBRARIES = frozenset({"torch", "transformers", "accelerate", "peft", "functorch", "triton",
                       "mldebug_run", "sitecustomize"})
FRAMES_MAX = 8  # frames listed in a `nonfinite` record: enough to see model file and call site

USER, SITE, LIBRARY = 0, 1, 2
_PACKAGE_DIR = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
_BOOTSTRAP_DIR = os.path.dirname(_PACKAGE_DIR)


def _stdlib_dirs():
    dirs = set()
    for key in ("stdlib", "platstdlib"):
        try:
            dirs.add(os.path.realpath(sysconfig.get_paths()[key]))
        except (KeyError, OSError):
            pass
    for prefix in (sys.base_prefix, sys.base_exec_prefix):
        dirs.add(os.path.realpath(os.path.join(prefix, "lib")))
    return tuple(d + os.sep for d in dirs)


_STDLIB = _stdlib_dirs()
_kinds = {}


def _kind_of_file(filename):
    kind = _kinds.get(filename)
    if kind is not None:
        return kind
    if filename in ("<string>", "<stdin>"):
        kind = USER  # `python -c` / a piped program
    elif not filename or filename.startswith("<"):
        kind = LIBRARY
    else:
        real = os.path.realpath(filename)
        parts = real.split(os.sep)
        site = [i for i, p in enumerate(parts) if p in ("site-packages", "dist-packages")]
        if real.startswith(_PACKAGE_DIR + os.sep) or os.path.dirname(real) == _BOOTSTRAP_DIR:
            kind = LIBRARY
        elif site:
            top = parts[site[-1] + 1] if site[-1] + 1 < len(parts) else ""
            kind = LIBRARY if os.path.splitext(top)[0] in LIBRARIES else SITE
        elif real.startswith(_STDLIB):
            kind = LIBRARY
        else:
            kind = USER
    _kinds[filename] = kind
    return kind


def _kind(frame):
    name = frame.f_globals.get("__name__") or ""
    if name.partition(".")[0] in LIBRARIES:
        return LIBRARY
    return _kind_of_file(frame.f_code.co_filename)


def _text(frame):
    return "%s:%d" % (frame.f_code.co_filename, frame.f_lineno)


def where(skip=1):
    """`path:line` of the first user frame above the caller (see the module docs), or None."""
    try:
        frame = sys._getframe(skip)
    except ValueError:
        return None
    fallback = None
    while frame is not None:
        kind = _kind(frame)
        if kind == USER:
            return _text(frame)
        if kind == SITE and fallback is None:
            fallback = _text(frame)
        frame = frame.f_back
    return fallback


def user_frames(skip=1, limit=FRAMES_MAX):
    """The user frames on the stack above the caller, outermost first, at most `limit`."""
    try:
        frame = sys._getframe(skip)
    except ValueError:
        return []
    found = []
    while frame is not None:
        if _kind(frame) == USER:
            found.append(_text(frame))
        frame = frame.f_back
    return list(reversed(found[:limit]))
