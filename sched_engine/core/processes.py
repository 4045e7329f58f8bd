"""Worker processes the engine starts itself: sweep points, sizing probes, a page's runs side by side."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
import time
from typing import Callable, Sequence, TypeVar

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


def _sendable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling as itself, else a ``RuntimeError`` saying what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:   # noqa: BLE001 -- any exception that does not travel is described instead
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _call(indexed: tuple[int, object]) -> tuple[int, bool, object]:
    index, item = indexed
    try:
        return index, True, _TASK(item)
    except Exception as exc:   # noqa: BLE001 -- raised again in the parent, as the function would have
        return index, False, _sendable(exc)


def forks(workers: int, count: int) -> bool:
    """Whether :func:`side_by_side` computes ``count`` items on forked processes with ``workers`` (else here)."""
    return workers > 1 and count > 1 and not multiprocessing.current_process().daemon


def side_by_side(fn: Callable[[Item], Value], items: Sequence[Item], workers: int, *,
                 poll: Callable[[], None] | None = None, every_s: float = 0.5) -> list[Value]:
    """``[fn(item) for item in items]``, computed on up to ``workers`` processes forked from this one.

    The processes start with what this process holds (parsed logs, the
    imported engine, open stores): only the items go out, only the values
    come back, and ``fn`` itself is never pickled. The first item that
    raises raises here (the others are stopped), as the loop would. Each
    process leaves when this one is gone. ``poll`` is called in this process
    every ``every_s`` seconds while they work (progress read from shared
    memory, say). With one worker or one item, or in a daemonic process
    (a worker of some pool, which may not fork), the items are computed
    here, one after another.
    """
    items = list(items)
    if not forks(workers, len(items)):
        return [fn(item) for item in items]
    global _TASK
    with _FORKING:
        _TASK = fn
        pool = multiprocessing.get_context("fork").Pool(min(workers, len(items)), initializer=exit_with_parent,
                                                        initargs=(os.getpid(),))
        _TASK = None
    values: list = [None] * len(items)
    try:
        answers = pool.imap_unordered(_call, enumerate(items))
        for _ in items:
            while True:
                try:
                    index, ok, value = answers.next(timeout=every_s)
                    break
                except multiprocessing.TimeoutError:
                    if poll is not None:
                        poll()
            if not ok:
                raise value
            values[index] = value
        pool.close()
    finally:
        pool.terminate()   # after close: the processes are done; after an error: the others are stopped
        pool.join()
    return values
