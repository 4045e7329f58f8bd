"""Running a sweep: on local processes, in this process, or through a remote executor it is given.

The library never imports Celery: the web app and the command line pass the
Celery executor (``components/scaleout/sweep_executor.py``) as ``remote``
when ``REDIS_URL`` is set.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import pandas as pd

from ..core import validate
from ..core.errors import ScenarioError
from ..core.processes import exit_with_parent
from .registry import describe, expand, gather, normalize_spec, run_point, summarise

EXECUTORS = ("auto", "processes", "serial", "celery")

#: Runs points somewhere else (the ``celery`` executor): ``remote(points, report, timeout)`` returns each point's
#: metrics in the points' order, calls ``report()`` after each finished point, raises :class:`SweepPointError`
#: naming a failing point and :class:`SweepError` when ``timeout`` seconds pass without a finished point.
RemoteExecutor = Callable[[list[dict], Callable[[], None], float | None], list[dict]]


class SweepError(ScenarioError):
    """A sweep could not run or finish (no workers, a point failed, ...)."""


class SweepPointError(SweepError):
    """One point of a sweep failed; ``index`` and ``point`` say which."""

    def __init__(self, index: int, point: Mapping[str, Any], reason: str):
        self.index = index
        self.point = dict(point)
        self.reason = reason
        super().__init__(f"points[{index}]", f"{describe(point)}: {reason}")


@dataclass(frozen=True)
class SweepRun:
    """A finished sweep: the normalised spec, its points, the gathered table and how it ran."""

    spec: dict
    points: list[dict]
    table: pd.DataFrame
    executor: str        # processes, serial or celery
    workers: int
    wall_seconds: float

    def summary(self) -> pd.DataFrame:
        return summarise(self.spec, self.table)


def _attempt(point: dict) -> tuple[bool, Any]:
    """Run a point, never raising: ``(True, metrics)`` or ``(False, reason)`` (exceptions may not pickle)."""
    try:
        return True, run_point(point)
    except Exception as exc:   # noqa: BLE001 -- any failure becomes the point's typed error
        return False, str(exc) if isinstance(exc, ScenarioError) else f"{type(exc).__name__}: {exc}"


def _serial(points, report) -> list[dict]:
    results = []
    for point in points:
        ok, value = _attempt(point)
        if not ok:
            raise SweepPointError(point["index"], point, value)
        results.append(value)
        report()
    return results


def _processes(points, workers: int, report) -> list[dict]:
    results: list[dict | None] = [None] * len(points)
    pool = ProcessPoolExecutor(max_workers=workers, initializer=exit_with_parent, initargs=(os.getpid(),))
    try:
        pending = {pool.submit(_attempt, point): i for i, point in enumerate(points)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=pending.get):
                i = pending.pop(future)
                try:
                    ok, value = future.result()
                except Exception as exc:   # noqa: BLE001 -- e.g. the worker process died
                    ok, value = False, f"the worker process failed ({type(exc).__name__}: {exc})"
                if not ok:
                    raise SweepPointError(points[i]["index"], points[i], value)
                results[i] = value
                report()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return results


def run_sweep(
    spec: Mapping[str, Any],
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    executor: str = "auto",
    timeout: float | None = None,
    remote: RemoteExecutor | None = None,
) -> SweepRun:
    """Run every point of ``spec`` and gather the table.

    ``executor``: ``auto`` sends the points to ``remote`` when one is given
    (the web app passes its Celery executor when ``REDIS_URL`` is set), else
    runs them on ``workers`` local processes (default: the CPU count; one
    worker runs them in this process); ``processes``, ``serial`` and
    ``celery`` (``remote``, which must be given) force one way.
    ``progress(done, total)`` is called at the start and after each point.
    ``timeout``: with ``remote``, give up after that many seconds without a
    finished point. A failing point raises :class:`SweepPointError` naming
    it; points still queued are dropped.
    """
    if executor not in EXECUTORS:
        raise ScenarioError("executor", f"unknown executor {executor!r} (known: {', '.join(EXECUTORS)})")
    if workers is not None:
        workers = validate.whole(workers, "workers", minimum=1)
    normal = normalize_spec(spec)
    points = expand(normal)
    total = len(points)
    done = 0

    def report():
        nonlocal done
        done += 1
        if progress:
            progress(done, total)

    if progress:
        progress(0, total)
    remote = remote if executor in ("auto", "celery") else None
    if executor == "celery" and remote is None:
        raise SweepError("executor", "Celery needs REDIS_URL (redis://host:port/db) in the environment")
    started = time.perf_counter()
    if remote is not None:
        used, count = "celery", 0
        results = remote(points, report, timeout)
    else:
        count = 1 if executor == "serial" else max(1, min(workers or os.cpu_count() or 1, total))
        used = "serial" if count == 1 else "processes"
        results = _serial(points, report) if count == 1 else _processes(points, count, report)
    return SweepRun(normal, points, gather(points, results), used, count, time.perf_counter() - started)
