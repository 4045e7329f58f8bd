"""Worker processes the engine starts itself: sweep points, sizing probes, a page's runs side by side."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Sequence, TypeVar

from .errors import ScenarioError

Item = TypeVar("Item")
Value = TypeVar("Value")

#: At most this many processes at once unless asked for more: each run of a full log holds its own result (about
#: a gigabyte for RICC's 447,794 jobs).
DEFAULT_MAX_WORKERS = 4


def default_workers() -> int:
    """As many processes as this one may use CPUs, at least one and at most :data:`DEFAULT_MAX_WORKERS`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:   # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, DEFAULT_MAX_WORKERS))


def exit_with_parent(parent: int) -> None:
    """In a pool worker (its ``initializer``): exit when the process that started the pool, ``parent``, is
    gone (killed, cancelled), so no worker outlives the run that needed it. Checked once a second."""
    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


# The function of the pool being forked: set just before the fork (under the lock), read by the forked processes.
_TASK: Callable | None = None
_FORKING = threading.Lock()


def _call(item) -> tuple[bool, object]:
    """``(True, value)``, or ``(False, what went wrong)`` as plain data: an exception travels as its fields, so
    whatever it was, it comes back (raised again by :func:`_raised`)."""
    try:
        return True, _TASK(item)
    except ScenarioError as exc:
        return False, ("scenario", exc.field, exc.message, exc.source, exc.line)
    except Exception as exc:   # noqa: BLE001 -- raised again in the parent, described
        return False, ("other", f"{type(exc).__name__}: {exc}")


def _raised(what: tuple) -> Exception:
    """The parent's exception for a process's failure: a :class:`ScenarioError` with its fields (the page says
    which field of which scenario), else a ``RuntimeError`` whose text is the original's type and message (a run
    stopped at its bound keeps its sentence)."""
    if what[0] == "scenario":
        return ScenarioError(what[1], what[2], source=what[3], line=what[4])
    return RuntimeError(what[1])


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the pool's processes now (the others' work is not wanted once one item failed or the caller gave up)."""
    kill = getattr(pool, "kill_workers", None)   # Python 3.14 on
    if kill is not None:
        kill()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):   # the executor's own, until then
        process.kill()


def forks(workers: int, count: int) -> bool:
    """Whether :func:`side_by_side` computes ``count`` items on forked processes with ``workers`` (else here)."""
    return workers > 1 and count > 1 and not multiprocessing.current_process().daemon


def side_by_side(fn: Callable[[Item], Value], items: Sequence[Item], workers: int, *,
                 poll: Callable[[], None] | None = None, every_s: float = 0.5) -> list[Value]:
    """``[fn(item) for item in items]``, computed on up to ``workers`` processes forked from this one.

    The processes start with what this process holds (parsed logs, the
    imported engine, open stores): only the items go out, only the values
    come back, and ``fn`` itself is never pickled. The first item that
    fails raises here and the other processes are killed: a
    :class:`ScenarioError` as itself, anything else as a ``RuntimeError``
    with its type and message; a process that dies without an answer is
    said so. Each process leaves when this one is gone. ``poll`` is called
    in this process every ``every_s`` seconds while they work (progress
    read from shared memory, say). With one worker or one item, or in a
    daemonic process (a worker of some pool, which may not fork), the items
    are computed here, one after another.
    """
    items = list(items)
    if not forks(workers, len(items)):
        return [fn(item) for item in items]
    global _TASK
    pool = ProcessPoolExecutor(max_workers=min(workers, len(items)), mp_context=multiprocessing.get_context("fork"),
                               initializer=exit_with_parent, initargs=(os.getpid(),))
    values: list = [None] * len(items)
    try:
        with _FORKING:   # a fork-context pool starts its processes at the first submit
            _TASK = fn
            try:
                index_of = {pool.submit(_call, item): index for index, item in enumerate(items)}
            finally:
                _TASK = None
        pending = set(index_of)
        while pending:
            done, pending = wait(pending, timeout=every_s, return_when=FIRST_COMPLETED)
            if poll is not None:
                poll()
            for future in done:
                try:
                    ok, value = future.result()
                except BrokenProcessPool:
                    raise RuntimeError("a process working side by side ended without an answer "
                                       "(killed, or out of memory)") from None
                if not ok:
                    raise _raised(value)
                values[index_of[future]] = value
    except BaseException:
        _stop(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return values
