"""Observers: recorders that subscribe to the loop and build the timeline frames.

An engine's simulation changes state; what the charts need is recorded by
observers subscribed to it (:meth:`~.loop.Simulation.subscribe`), so the
engine's handlers hold no bookkeeping of their own (batsim-py's monitors work
the same way). An observer subscribes to an event kind -- it is called as
``observer(sim, event)`` right after that kind's handler -- or to
:data:`INSTANT`, called as ``observer(sim, time)`` once the instant's
scheduling pass is over.

:class:`TimelineRows` is the growing ``timeline`` frame
(``time, entity, metric, value``, see :mod:`.result`) a recorder appends to;
:meth:`TimelineRows.changed` appends only the values that changed since the
series' last row, the rule every engine's timeline follows; samples taken
at every instant are reduced to that rule by :func:`changes_only`.

Exemption: the batch engine records its samples in its scheduling pass
(:meth:`sched_engine.batch.simulate.BatchSimulation.after_instant`), and the
in-order path builds them from the start and end times in one vectorised
step; a call per instant would cost the 450,000-job traces time for nothing.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from .result import timeline_frame

INSTANT = "instant"
"""The subscription to the end of every instant (after the scheduling pass)."""

EventObserver = Callable[[Any, Any], None]


class TimelineRows:
    """Columns of a ``timeline`` frame being recorded, one row per change."""

    __slots__ = ("times", "entities", "metrics", "values")

    def __init__(self) -> None:
        self.times: list[float] = []
        self.entities: list[str] = []
        self.metrics: list[str] = []
        self.values: list[float] = []

    def append(self, time: float, entity: str, metric: str, value: float) -> None:
        self.times.append(time)
        self.entities.append(entity)
        self.metrics.append(metric)
        self.values.append(value)

    def changed(self, time: float, entities: Sequence[str], metric: str, values: np.ndarray,
                last: np.ndarray) -> np.ndarray:
        """Append ``metric`` for the entities whose value differs from ``last`` (by more than 1e-12).

        ``last`` holds each series' previous value (NaN: none yet); returns
        ``values``, the next call's ``last``.
        """
        for i in np.flatnonzero(~np.isclose(values, last, rtol=0, atol=1e-12)):
            self.append(time, entities[i], metric, float(values[i]))
        return values

    def frame(self) -> pd.DataFrame:
        return timeline_frame(self.times, self.entities, self.metrics, self.values)


def changes_only(times, values) -> tuple[np.ndarray, np.ndarray]:
    """A sampled step series reduced to one row per change.

    Of several samples at one time the last holds (the value after the
    instant); a sample equal to the one before it is dropped.
    """
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    if times.size == 0:
        return times, values
    last_of_instant = np.append(times[1:] != times[:-1], True)
    times, values = times[last_of_instant], values[last_of_instant]
    changed = np.insert(values[1:] != values[:-1], 0, True)
    return times[changed], values[changed]
