"""Sizing probes side by side on local processes: :data:`.sizing.MeasureMany` from a one-size ``measure``.

The processes are forked from this one when a step of the search needs
them (:func:`~sched_engine.core.processes.side_by_side`), so they start
with what this process holds: the parsed log (the batch model's parse
cache), the imported engine, the result cache the caller's ``measure``
runs through. Only a size goes to a process and only a number comes back;
the function itself is never pickled. Each process leaves when the process
that forked it is gone (a cancelled run leaves no probe behind).
"""

from __future__ import annotations

from typing import Callable

from ..core.processes import DEFAULT_MAX_WORKERS, default_workers, side_by_side
from .sizing import MeasureMany

__all__ = ["DEFAULT_MAX_WORKERS", "default_workers", "in_processes"]


def in_processes(measure: Callable[[float], float], workers: int) -> MeasureMany:
    """Measure several sizes at once on up to ``workers`` forked processes (module docstring); a probe that
    fails raises here (a ``ScenarioError`` as itself, anything else as a ``RuntimeError`` naming it). A daemonic
    process (a worker of some pool) may not fork processes of its own: there the sizes are measured one after
    another."""
    def measure_many(sizes: list[float]) -> list[float]:
        return side_by_side(lambda size: float(measure(size)), sizes, workers)

    return measure_many
