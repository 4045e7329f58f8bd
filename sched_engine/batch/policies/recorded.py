"""The log as recorded, as a run: every job starts when the log says it started.

A job's recorded start is its submission plus the wait the log records
(SWF field 3, GWF ``WaitTime``, a CSV ``recorded_wait`` column;
:func:`~sched_engine.batch.capacity.replay_starts`); a job whose wait the log
does not record (SWF ``-1``) starts at its submission. Replaying the log
through the engine gives it every frame a simulated run has (jobs,
utilisation and queue timelines, summary, waits per group), so any what-if
can be compared job by job against what happened.

Order and capacity. Jobs start in the order of their recorded starts (ties:
submission order). A job starts at its recorded start if it fits then on one
of its clusters (the first in preference order where it fits); otherwise at
the first instant after it that it fits, and every job recorded after it
waits behind it (the order is kept). Such jobs are counted in the summary's
``delayed_starts``. On the capacity the log used (the model's
``capacity: "log"``, :mod:`sched_engine.batch.capacity`) no job is delayed
without machine failures: every recorded start is kept. A machine failure
kills a running job as in any run; a job that does not fit while machines
are down waits for them.

On the site engine's machines with memory a job fits where its CPUs and
its memory do (:meth:`~..simulate.BatchSimulation.fits_now`); the site's
queue order, backfilling and elastic starts play no part.

The model's ``queues`` and ``user_limits`` do not change the replay: the
log's starts already carry whatever queues and limits the site had (the
engine still cancels, on arrival, jobs no cluster can hold or larger than a
user may hold). Reads the workload's ``recorded_wait`` through the
simulation's input (``sim.input.jobs``, set before the run by
:func:`sched_engine.batch.simulate`; a simulation built from arrays alone
has no log, and every job starts at its submission, as far as it fits);
estimates play no part.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Iterator, Sequence

import numpy as np

from ...core.registry import Parametrised
from ..capacity import recorded_wait_of, replay_starts
from ..simulate import WAITING
from .decisions import NO_DECISIONS, Decision, Start, Wake


class Recorded(Parametrised):
    """Start each job at its recorded start, or as soon after it as it fits, in recorded order."""

    def __init__(self):
        pass

    def bind(self, sim) -> None:
        data = getattr(sim, "input", None)   # None: a simulation built from arrays, with no log behind it
        waits = recorded_wait_of(data.jobs) if data is not None else np.full(len(sim.submit), np.nan)
        self.sim = sim
        self.target = replay_starts(sim.submit, waits).tolist()
        self.due: list[tuple[float, int]] = []   # heap of (recorded start, job) of the jobs that arrived
        self.delayed = 0

    def arrive(self, job: int, now: float) -> Sequence[Decision]:
        target = self.target[job]
        heappush(self.due, (target, job))
        return (Wake(target),) if target > now else NO_DECISIONS

    def job_ended(self, cluster: int, now: float, early: bool) -> Sequence[Decision]:
        return NO_DECISIONS

    def capacity_changed(self, cluster: int, now: float) -> Sequence[Decision]:
        return NO_DECISIONS

    def schedule(self, now: float) -> Iterator[Decision]:
        """Start the jobs due by ``now`` in recorded order while they fit; stop at the first that does not.

        Every job due by ``now`` has arrived (its recorded start is at or
        after its submission), so the heap's order is the recorded order.
        """
        due, sim = self.due, self.sim
        clusters, procs, candidates, status, run_time = sim.clusters, sim.procs, sim.candidates, sim.status, sim.run_time
        while due and due[0][0] <= now:
            target, job = due[0]
            if status[job] != WAITING:
                heappop(due)
                continue
            # A zero-length job holds no CPUs (the engine ends it as it starts): it needs a cluster that can hold
            # it, not free room -- as the capacity of the log counts it (:func:`~..capacity.cpus_in_use`).
            if run_time[job] <= 0:
                fits = [c for c in candidates[job] if clusters[c].total >= procs[job]]
            else:
                fits = [c for c in candidates[job] if sim.fits_now(job, c)]   # CPUs, and memory on a site's machines
            if not fits:
                return   # blocked: tried again at the next pass (a job ends, a machine restarts)
            heappop(due)
            if now > target:
                self.delayed += 1
            yield Start(job, fits[0])

    def choose(self, fits: Sequence[int]) -> int:
        return fits[0]

    def summary_rows(self) -> list[tuple[str, float, str]]:
        """Rows the engine adds to the run's summary: the jobs started after their recorded start."""
        return [("delayed_starts", self.delayed, "jobs")]
