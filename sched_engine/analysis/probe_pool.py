"""Sizing probes side by side on local processes: :data:`.sizing.MeasureMany` from a one-size ``measure``.

The processes are forked from this one when a step of the search needs
them, so they start with what this process holds: the parsed log (the batch
model's parse cache), the imported engine, the result cache the caller's
``measure`` runs through. Only a size goes to a process and only a number
comes back; the function itself is never pickled. Each process leaves when
the process that forked it is gone (a cancelled run leaves no probe behind).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable

from ..core.processes import exit_with_parent
from .sizing import MeasureMany

# The measure of the pool being forked: set just before the fork, read by the forked processes (inherited).
_MEASURE: Callable[[float], float] | None = None


def _measured(size: float) -> float:
    return float(_MEASURE(size))


#: At most this many probes at once unless asked for more: each probe of a full log holds its own run (about a
#: gigabyte for RICC's 447,794 jobs), and a search gains less from each further probe of a step.
DEFAULT_MAX_WORKERS = 4


def default_workers() -> int:
    """As many probes at once as this process may use CPUs, at least one and at most :data:`DEFAULT_MAX_WORKERS`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:   # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, DEFAULT_MAX_WORKERS))


def in_processes(measure: Callable[[float], float], workers: int) -> MeasureMany:
    """Measure several sizes at once on up to ``workers`` forked processes (module docstring); a process that
    fails raises its error here, as ``measure`` would. A daemonic process (a worker of some pool) may not fork
    processes of its own: there the sizes are measured one after another."""
    def measure_many(sizes: list[float]) -> list[float]:
        global _MEASURE
        if multiprocessing.current_process().daemon:
            return [float(measure(size)) for size in sizes]
        _MEASURE = measure
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=min(workers, len(sizes)), mp_context=context,
                                 initializer=exit_with_parent, initargs=(os.getpid(),)) as pool:
            return list(pool.map(_measured, sizes))

    return measure_many
