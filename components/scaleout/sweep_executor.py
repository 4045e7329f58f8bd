"""The Celery sweep executor: each point of a sweep is a ``schedscope.sweep_point`` task on the workers.

:func:`run_sweep` is :func:`sched_engine.sweeps.run_sweep` with the points
sent to Celery workers when ``REDIS_URL`` is set (executor ``auto`` or
``celery``); without it, the library's local executors run them.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, Mapping

from sched_engine import sweeps
from sched_engine.sweeps import RemoteExecutor, SweepError, SweepPointError, SweepRun

from . import celery_app

#: Seconds between two looks at the queued points' results.
POLL_S = 0.2


def run_points(app, points: list[dict], report: Callable[[], None], timeout: float | None) -> list[dict]:
    """Send every point to the workers of ``app``; gather the metrics in the points' order.

    ``report()`` after each finished point; a failing point raises
    :class:`SweepPointError` naming it, ``timeout`` seconds without a
    finished point raise :class:`SweepError`; points still queued are revoked.
    """
    handles = [app.send_task(celery_app.SWEEP_TASK, args=[point]) for point in points]
    results: list[dict | None] = [None] * len(points)
    pending = set(range(len(points)))
    last_progress = time.monotonic()
    try:
        while pending:
            finished = sorted(i for i in pending if handles[i].ready())
            for i in finished:
                pending.discard(i)
                handle = handles[i]
                if not handle.successful():
                    raise SweepPointError(points[i]["index"], points[i], f"failed on a Celery worker: {handle.result}")
                results[i] = handle.result   # ready and successful: the value (``get()`` refuses inside a task)
                report()
            if finished:
                last_progress = time.monotonic()
            elif timeout is not None and time.monotonic() - last_progress > timeout:
                raise SweepError("executor", f"no point finished on the Celery workers for {timeout:g} s "
                                             f"({len(points) - len(pending)} of {len(points)} done); is a worker "
                                             "running on the same REDIS_URL?")
            elif pending:
                time.sleep(POLL_S)
    finally:
        for i in pending:
            handles[i].revoke()
    return results


def celery_executor() -> RemoteExecutor | None:
    """The executor sending points to the Celery app of ``REDIS_URL``, or ``None`` when it is unset."""
    app = celery_app.celery_app()
    return None if app is None else functools.partial(run_points, app)


def run_sweep(spec: Mapping[str, Any], *, executor: str = "auto", **options) -> SweepRun:
    """:func:`sched_engine.sweeps.run_sweep`, on Celery workers when ``REDIS_URL`` is set (``auto``, ``celery``)."""
    remote = celery_executor() if executor in ("auto", "celery") else None
    return sweeps.run_sweep(spec, executor=executor, remote=remote, **options)
