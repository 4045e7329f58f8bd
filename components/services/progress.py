"""Background runs' job store and progress reports: fork-safe, throttled, never fatal.

With the embedded background-callback manager, every run is a process forked
from the web server, and the web server's threads and the job processes share
one SQLite database (the job store) for progress reports, results and
cancellation. Two things go wrong under load (twenty concurrent runs):

* **Forking while another thread is inside SQLite.** A child process inherits
  SQLite's in-process lock bookkeeping as it was at the fork. If a request
  thread was holding the database's write lock at that instant, the child
  believes the lock is taken by a connection that does not exist in it, waits
  for it, and after the store's timeout fails with ``diskcache.Timeout:
  database is locked`` -- the run is lost. :class:`JobStore` is a
  ``diskcache.Cache`` whose operations hold a per-store lock that every
  ``os.fork`` of the process also takes, so a fork never happens in the
  middle of a store operation.
* **Too many progress writes.** Engines report progress many times a second;
  each report is a write transaction. :func:`throttled` wraps a background
  callback's ``set_progress``: at most one write per ``interval`` seconds per
  run, the final report (``done >= total``) never held back, an unchanged
  value never written twice, and a write refused by a busy store skipped --
  progress is advisory, the result is what matters.

The job store never unpickles: :class:`JSONOnlyDisk` writes every value as
JSON and refuses rows it did not write that way (a pickle planted in the
data directory is read as a missing entry and logged once), instead of
diskcache's default disk, which unpickles whatever it finds.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Callable

import diskcache
from diskcache import Timeout
from plotly.utils import PlotlyJSONEncoder
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)

DEFAULT_INTERVAL = 0.3
#: How often a page asks for its background run's progress and result (ms; Dash's default is 1,000):
#: a finished run shows within a quarter of a second, for four small requests a second while it runs.
POLL_MS = 250

# Errors of a busy or briefly unreachable progress store (diskcache; Redis when scaled out)
# that only cost one progress update.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (Timeout, RedisConnectionError, RedisTimeoutError)


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


_STORES: weakref.WeakSet = weakref.WeakSet()
_HELD: dict[int, list] = {}   # the stores whose guard each forking thread holds


def _before_fork() -> None:
    held = _HELD[threading.get_ident()] = sorted(_STORES, key=id)   # one order: no deadlock between forks
    for store in held:
        store._fork_guard.acquire()


def _after_fork_in_parent() -> None:
    for store in reversed(_HELD.pop(threading.get_ident(), [])):
        store._fork_guard.release()


def _after_fork_in_child() -> None:
    # The child runs one thread and no store operation is in flight in it: fresh, free guards.
    _HELD.clear()
    for store in list(_STORES):
        store._fork_guard = threading.RLock()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)


def settle_lazy_set_ups() -> None:
    """Run, before the web server forks any job, the lazy set-ups that hold a lock while they run.

    pyarrow sets up its pandas bridge on first use, holding a lock while it
    imports pandas: a job forked while a request thread is in the middle of
    it inherits that lock taken and waits for it for ever, at its first
    DataFrame (seen under the 20-session load test). Done once while the app
    is built, in one thread, the set-up is inherited finished.
    """
    import pandas as pd
    import pyarrow as pa

    pa.array(pd.Series(["x"], dtype="string"))


class RefusedRow(OSError):
    """A job-store row not written as JSON by :class:`JSONOnlyDisk`.

    An ``OSError``: diskcache reads one while fetching as an entry that
    vanished, so the caller gets its default, as for a missing key.
    """


class JSONOnlyDisk(diskcache.Disk):
    """diskcache storage of text keys and JSON values only; nothing is ever unpickled.

    Values (callback outputs, progress, flags) are written as UTF-8 JSON
    bytes (Dash components and figures through plotly's encoder). Reading
    accepts only those: a pickled key or value, or bytes that are not JSON,
    raises :class:`RefusedRow`, logged once per process.
    """

    _warned = False

    def put(self, key):
        if type(key) is not str:
            raise TypeError(f"job-store keys are text, got {type(key).__name__}")
        return super().put(key)

    def get(self, key, raw):
        if not raw:
            self._refuse("a pickled key")
        return super().get(key, raw)

    def store(self, value, read, key=diskcache.core.UNKNOWN):
        if not read:
            value = json.dumps(value, cls=PlotlyJSONEncoder).encode()
        return super().store(value, read, key=key)

    def fetch(self, mode, filename, value, read):
        if mode == diskcache.core.MODE_PICKLE:
            self._refuse("a pickled value")
        data = super().fetch(mode, filename, value, read)
        if read:
            return data
        try:
            return json.loads(data)
        except (TypeError, ValueError):
            self._refuse("a value that is not JSON")

    def _refuse(self, what: str):
        if not JSONOnlyDisk._warned:
            JSONOnlyDisk._warned = True
            log.warning("job store in %s: refused %s (not written by this app); it is read as missing",
                        self._directory, what)
        raise RefusedRow(what)


class JobStore(diskcache.Cache):
    """A ``diskcache.Cache`` of JSON rows (:class:`JSONOnlyDisk`) never forked mid-operation (see above)."""

    def __init__(self, directory: str | None = None, timeout: float = 60, disk=JSONOnlyDisk, **settings):
        self._fork_guard = threading.RLock()
        with self._fork_guard:
            super().__init__(directory, timeout, disk, **settings)
        _STORES.add(self)

    @contextmanager
    def transact(self, retry: bool = False):
        with self._fork_guard, super().transact(retry):
            yield


def _guarded(name: str):
    method = getattr(diskcache.Cache, name)

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        with self._fork_guard:
            return method(self, *args, **kwargs)
    return call


for _name in ("get", "set", "add", "delete", "touch", "pop", "incr", "decr", "read", "expire", "evict", "cull",
              "clear", "check", "close", "reset", "volume", "__getitem__", "__setitem__", "__delitem__",
              "__contains__", "__len__"):
    setattr(JobStore, _name, _guarded(_name))
