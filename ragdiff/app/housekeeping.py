"""The review's process housekeeping: the cyclic garbage collector (off while the review loads, then one
collection and a freeze of what the first screen keeps), the signals that end the review the way `q` does,
the process the p-values of a big set are computed in, and what is closed on the way out.

Mixed into `ragdiff.app.app.ReviewApp` (Textual finds `on_unmount` on this class too).
"""

from __future__ import annotations

import asyncio
import gc
import signal
from functools import partial


class Housekeeping:
    def _collector_off(self) -> None:
        # no automatic cyclic collection from the mount to the first screen: the reading and the model make hundreds
        # of thousands of Python objects (ids, dicts, lists) and each collection their count sets off walked
        # them and every object of Textual's again (75 ms of CPU at 10,000 queries, ~150 collections). The
        # switch is the process's, so the mount and the first paint on this thread run without it too, which
        # is meant: what they make is bounded (one screen), and `_collector_back` collects once, after the
        # first screen, before freezing what survived; every way out (a failed load, a quit meanwhile) turns
        # it back on, all on this thread
        self._collector_was_on = gc.isenabled()
        gc.disable()

    def _exit_on_signals(self) -> None:
        """SIGTERM, SIGHUP, or a SIGINT sent from outside (Ctrl+C itself arrives as a key): leave the way `q`
        does, so the terminal is restored. Every decision counted is durable in the journal; the marks still saving
        are written on the way out (LabelSession.close), in one batch."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            try:
                loop.add_signal_handler(signum, partial(self.exit, return_code=128 + signum))
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread (tests), or no signals
                return

    def _collector_back(self, freeze: bool) -> None:
        """The cyclic collector on again, as it was before on_mount turned it off (once; on this thread).
        `freeze`: first one collection (what became garbage while it was off) and then what is loaded, which
        lives as long as the screen, out of its sight — or every full collection walks it again (at 10,000
        queries 40-50 ms, on one `]` in eight). Frozen without that collection, the cycles dropped meanwhile
        stayed for good."""
        was_on, self._collector_was_on = self._collector_was_on, None
        if was_on is None:
            return
        if freeze:
            gc.collect()
            gc.freeze()
        if was_on:
            gc.enable()

    def _process_pool(self):
        if self._pool is None:
            import multiprocessing
            import sys
            from concurrent.futures import ProcessPoolExecutor
            from multiprocessing import resource_tracker

            from ragdiff.app.header_numbers import quiet_process

            # Textual replaces sys.stderr with a capture that has no file descriptor, and multiprocessing's
            # resource tracker hands its child sys.stderr's: start the tracker with the real one
            captured = sys.stderr
            try:
                sys.stderr = sys.__stderr__ or captured
                resource_tracker.ensure_running()
            finally:
                sys.stderr = captured
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=quiet_process)
        return self._pool

    def on_unmount(self) -> None:
        self._collector_back(freeze=False)  # quit before the first screen (a load left to itself)
        self.session.close()  # the marks typed before quitting are written before the app is gone
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
