"""First come, first served, and its load-balancing variant (Klusáček & Rudová §5, §6.2)."""

from __future__ import annotations

from typing import Iterator, Sequence

from .decisions import Decision
from .queue import QueuePolicy


class FCFS(QueuePolicy):
    """First come, first served: only the queue head may start (no backfilling).

    A blocked head blocks every later job, whatever clusters they could use
    (jobs held by their user's limit are passed over, :mod:`sched_engine.batch.queues`).
    """

    starts_in_order = True

    def __init__(self):
        pass

    def schedule(self, now: float) -> Iterator[Decision]:
        waited_before = len(self.queue) - self.new_jobs > self._first_eligible()
        self.new_jobs = 0
        if not self.resources_changed and waited_before:
            return  # nothing freed and the first eligible job was already blocked
        yield from self._start_heads(now)
        self.resources_changed = False
        self._compact()


class FCFSLB(FCFS):
    """FCFS with load balancing (§6.2): a uniformly random cluster among those where the head fits now."""

    def choose(self, fits: Sequence[int]) -> int:
        return fits[int(self.sim.rng.integers(len(fits)))] if len(fits) > 1 else fits[0]
