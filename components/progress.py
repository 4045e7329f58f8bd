"""Progress reports of background runs: throttled, and never fatal.

A background callback's ``set_progress`` writes into the job store shared by
every job process (with the embedded manager, one SQLite database). An engine
reports progress many times a second; twenty concurrent runs doing that keep
the database's write lock busy, and a write that waits too long raises
``diskcache.Timeout`` -- which, inside the callback, would fail the run.

:func:`throttled` wraps ``set_progress``: at most one write per ``interval``
seconds per job, the final report (``done >= total``) always attempted, an
unchanged value never written twice, and a write refused by a busy store
skipped -- progress is advisory, the result is what matters.
"""

from __future__ import annotations

import time
from typing import Callable

from diskcache import Timeout

DEFAULT_INTERVAL = 0.3

# Errors of a busy progress store that only cost one progress update.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (Timeout,)


class ThrottledProgress:
    """``(done, total)`` reports forwarded to ``set_progress((done, total))``, rate-limited."""

    def __init__(self, set_progress: Callable[[tuple], None], interval: float = DEFAULT_INTERVAL,
                 clock: Callable[[], float] = time.monotonic):
        self._set_progress = set_progress
        self._interval = interval
        self._clock = clock
        self._last_write: float | None = None
        self._last_value: tuple | None = None
        self.written = 0
        self.skipped = 0

    def __call__(self, done, total) -> None:
        value = (done, total)
        if value == self._last_value:
            return
        now = self._clock()
        final = total is not None and done >= total
        if not final and self._last_write is not None and now - self._last_write < self._interval:
            return
        try:
            self._set_progress(value)
        except TRANSIENT_ERRORS:
            self.skipped += 1
            return
        self._last_write, self._last_value = now, value
        self.written += 1

    def fraction(self, fraction: float, steps: int = 100) -> None:
        """Report a fraction in [0, 1] as ``(int(steps * fraction), steps)``."""
        self(int(steps * min(max(fraction, 0.0), 1.0)), steps)


def throttled(set_progress: Callable[[tuple], None], interval: float = DEFAULT_INTERVAL) -> ThrottledProgress:
    """Wrap a background callback's ``set_progress`` (see the module docstring)."""
    return ThrottledProgress(set_progress, interval)
