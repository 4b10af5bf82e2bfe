"""The host-device synchronisation count (probes/syncs.py), in this process, with torch's CUDA
sync debug mode stood in for: the mode itself exists only with a GPU, where the real count is
checked (torch/bench/gpu_checks.sh). What is checked here is everything around it: the window,
counting by the user's line, dropping the probes' own syncs, and the program never seeing one of
the warnings while keeping its own.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_syncs.py
"""

import os
import sys
import tempfile
import unittest
import warnings
from unittest import mock

from runner import RUN, has

MESSAGE = "called a synchronizing CUDA operation"


def code_in(path, source):
    """A function `f` whose frames say they run in `path`."""
    scope = {"warnings": warnings, "MESSAGE": MESSAGE}
    exec(compile(source, path, "exec"), scope)
    return scope["f"]


USER = "/work/project/train.py"
SYNC_TWICE = "def f():\n    warnings.warn(MESSAGE)\n    warnings.warn(MESSAGE)\n"
SYNC_ONCE = "def f():\n    warnings.warn(MESSAGE)\n"


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class SyncWindow(unittest.TestCase):
    def setUp(self):
        sys.path.insert(0, RUN)
        import torch
        from mldebug_run import state
        from mldebug_run.probes import syncs

        self.torch, self.state, self.syncs = torch, state, syncs
        self.mode = 0
        self.program_mode = 0
        for name, fake in (("set_sync_debug_mode", self._set), ("get_sync_debug_mode", self._get),
                           ("is_initialized", lambda: True)):
            patcher = mock.patch.object(torch.cuda, name, fake, create=True)
            patcher.start()
            self.addCleanup(patcher.stop)
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        state.STATE = state.State(self.tmp.name)
        self.addCleanup(self._reset)
        self.filters = warnings.filters[:]
        self.user = code_in(USER, SYNC_TWICE)
        self.user_once = code_in("/work/project/log.py", SYNC_ONCE)
        self.ours = code_in(os.path.join(RUN, "mldebug_run", "probes", "fake.py"), SYNC_ONCE)

    def _set(self, mode):
        self.mode = {"default": 0, "warn": 1, "error": 2}.get(mode, mode)
        if self.mode:  # as torch does, once a process: not the program's to see
            warnings.warn("Synchronization debug mode is a prototype feature and does not yet "
                          "detect all synchronizing operations")

    def _get(self):
        return self.mode or self.program_mode

    def _reset(self):
        self.syncs.disarm()
        self.state.STATE = None
        warnings.filters[:] = self.filters
        warnings._filters_mutated()
        sys.path.remove(RUN)

    def test_counts_the_programs_syncs_by_line_and_hides_every_one(self):
        with warnings.catch_warnings(record=True) as seen:
            # The program's own filter, set before the window: every UserWarning raises.
            warnings.filterwarnings("error", category=UserWarning)
            self.syncs.interval_started(2, "cuda:0")
            self.assertEqual(self.mode, 1)
            self.user()
            self.user()
            self.user_once()
            self.ours()  # a probe's own read
            warnings.warn("the program's own warning", RuntimeWarning)
        self.assertEqual([str(w.message) for w in seen], ["the program's own warning"])
        count, sites = self.syncs.take()
        self.assertEqual(count, 5)
        self.assertEqual(sites, [{"where": USER + ":2", "count": 2},
                                 {"where": USER + ":3", "count": 2},
                                 {"where": "/work/project/log.py:2", "count": 1}])
        # The next interval starts from zero; a step past the window disarms.
        self.syncs.interval_started(3, "cuda:0")
        self.assertEqual(self.syncs.take(), (0, []))
        self.syncs.interval_started(4, "cuda:0")
        self.assertEqual(self.mode, 0)
        self.assertEqual(self.syncs.take(), (None, None))
        self.assertFalse([f for f in warnings.filters if MESSAGE.split()[0] in str(f[1])])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            self.user_once()  # the mode is off again: what the program raises is its own
        self.assertEqual(len(seen), 1)

    def test_a_pass_through_wrapper_on_the_stack_still_counts(self):
        wrapper = code_in(os.path.join(RUN, "mldebug_run", "patches.py"),
                          "def f(inner):\n    return inner()\n")
        self.syncs.PASS_THROUGH.add(wrapper.__code__)
        self.addCleanup(self.syncs.PASS_THROUGH.discard, wrapper.__code__)
        self.syncs.interval_started(2, "cuda:0")
        wrapper(self.user_once)
        self.assertEqual(self.syncs.take()[0], 1)

    def test_not_armed_off_cuda_before_the_window_or_under_the_programs_own_mode(self):
        self.syncs.interval_started(2, "cpu")
        self.syncs.interval_started(1, "cuda:0")
        self.assertEqual((self.mode, self.syncs.take()), (0, (None, None)))
        self.program_mode = 1
        self.syncs.interval_started(2, "cuda:0")
        self.assertEqual(self.syncs.take(), (None, None))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            self.user_once()
        self.assertEqual(len(seen), 1)  # the program asked for them: it gets them


if __name__ == "__main__":
    unittest.main()
