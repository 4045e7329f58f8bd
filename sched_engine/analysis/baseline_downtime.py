"""Down time found in a log: capacity idle while jobs waited, held back from the run as reservations.

The audit finds the periods of at least an hour when a waiting job fit in
the idle CPUs and yet none started (:func:`~.audit_periods.idle_periods`: a
down time, a drain before maintenance, a reservation, or a limit the log
does not name). A simulation on the same machine starts that job at once.
The baseline's ``downtime`` step (:mod:`.baseline_steps`) holds those CPUs
back instead: over each period, the CPUs the recorded schedule left idle,
segment by segment.

Where the run is on more CPUs than the hardware (the ``capacity`` step: a
log with more in use at once than its header, RICC), the CPUs above the
hardware are the log's only while it used them: at every other time the
step also holds back the CPUs above ``max(hardware, CPUs in use)``. So the
run has the hardware, plus what the log had running beyond it when it did,
minus what it left idle while jobs waited.

The CPUs held back become *pieces* (a new piece wherever their level
changes; rounded down to whole machines where every machine has one CPU
count), each one reservation job per cluster (each cluster's share in
proportion to its CPUs): submitted at the piece's start, running for its
length, in a queue ranked above every other (:data:`DOWN_QUEUE`).

A reservation is a drain, not a failure: when its CPUs are busy in the
simulation it waits at the head of the queue (EASY reserves them, backfilling
only what ends in time), and it never kills a running job (save a best-effort
one, as any job of a higher queue may, :mod:`sched_engine.batch.queues`). Machine failures
(:mod:`sched_engine.batch.failures`) were tried first and rejected: a
failure kills the jobs running where the log had idle CPUs, and the work
they lose makes the run *less* loaded (on HPC2N, 309 of 3,145 jobs killed
and the simulated mean wait down 40%).

The periods are read from the replayed schedule of the run's own jobs (its
clock: seconds from the first submission) on the run's own clusters' CPUs
(after the ``capacity`` step). :func:`with_reservations` gives the run's
jobs with the reservations added, as a CSV workload (:func:`write_workload`):
the step runs on it, and compares only the log's jobs (a reservation has no
recorded wait).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .audit_periods import IDLE_MIN_S, idle_periods
from .audit_schedule import recorded_schedule, segments

#: The queue (and user) of the reservation jobs; the step ranks it first.
DOWN_QUEUE = "down-time"
RESERVATION_COLUMNS = ("start", "duration", "cpus")
#: The columns of the run's jobs a CSV workload keeps (those the CSV reader reads).
CSV_COLUMNS = ("job_id", "submit_time", "run_time", "procs", "requested_time", "recorded_wait", "user", "group",
               "queue", "partition", "requirement")


@dataclass(frozen=True)
class DownTime:
    """The reservations for a run (:data:`RESERVATION_COLUMNS`, the run's clock), and what they come from."""

    reservations: pd.DataFrame
    periods: int                # idle-while-waiting periods found
    idle_s: float               # their total length
    above_hardware_s: float = 0.0   # CPU-seconds held back above the hardware, outside those periods

    @property
    def cpu_seconds(self) -> float:
        return float((self.reservations["duration"] * self.reservations["cpus"]).sum())

    def text(self) -> str:
        if self.reservations.empty:
            return "no period of an hour or more when a waiting job fit in the idle CPUs and none started"
        parts = []
        if self.periods:
            parts.append(f"{self.periods:,} periods ({self.idle_s / 86400:,.1f} days) when a waiting job fit in the "
                         "idle CPUs and none started")
        if self.above_hardware_s > 0:
            parts.append(f"the CPUs above the hardware the log was not using ({self.above_hardware_s / 3600:,.0f} "
                         "CPU-hours)")
        return (f"{', and '.join(parts)} held back: {self.cpu_seconds / 3600:,.0f} CPU-hours in "
                f"{len(self.reservations):,} reservations")


def pieces(times: np.ndarray, idle: np.ndarray, unit: float) -> pd.DataFrame:
    """Idle CPUs over consecutive segments (``times`` one longer than ``idle``), rounded down to ``unit``, as
    ``(start, duration, cpus)`` pieces: one per run of equal level, none where it is 0."""
    level = np.floor(np.asarray(idle, dtype=float) / unit) * unit
    if not len(level):
        return pd.DataFrame({name: [] for name in RESERVATION_COLUMNS})
    first = np.flatnonzero(np.r_[True, level[1:] != level[:-1]])
    stop = np.r_[first[1:], len(level)]
    frame = pd.DataFrame({"start": times[first], "duration": times[stop] - times[first], "cpus": level[first]})
    return frame[frame["cpus"] > 0].reset_index(drop=True)


def _unit(clusters) -> float:
    sizes = {cpus for cluster in clusters for cpus in cluster.cpus}
    return float(sizes.pop()) if len(sizes) == 1 else 1.0


def down_time(jobs: pd.DataFrame, clusters, hardware: float | None = None, minimum_s: float = IDLE_MIN_S) -> DownTime:
    """The reservations of the module docstring for a run's ``jobs`` (its clock) on its ``clusters``
    (:class:`~sched_engine.batch.cluster.ClusterState`: ``cpus`` per machine); ``hardware``: the hardware's
    CPUs where the run is on more (None: the clusters are the hardware)."""
    totals = np.array([float(sum(c.cpus)) for c in clusters])
    capacity = float(totals.sum())
    schedule, _ = recorded_schedule(jobs)
    empty = pd.DataFrame({name: [] for name in RESERVATION_COLUMNS})
    if not len(schedule) or capacity <= 0:
        return DownTime(empty, 0, 0.0)
    seg = segments(schedule)
    periods = idle_periods(seg, capacity, minimum_s)
    held = np.zeros(len(seg.used))
    if hardware is not None and hardware < capacity:
        held = np.maximum(capacity - np.maximum(hardware, seg.used), 0.0)
    above = held.copy()
    for period in periods.itertuples(index=False):
        low, high = np.searchsorted(seg.times, [period.start, period.end])
        held[low:high] = capacity - seg.used[low:high]
        above[low:high] = 0.0
    unit = _unit(clusters)
    found = [pieces(seg.times, held * total / capacity, unit) for total in totals]
    frame = pd.concat(found, ignore_index=True).sort_values(["start", "cpus"], kind="stable").reset_index(drop=True)
    above_s = float((above * np.diff(seg.times)).sum()) if len(seg.used) else 0.0
    return DownTime(frame, len(periods), float(periods["duration_s"].sum()), above_s)


def with_reservations(jobs: pd.DataFrame, found: DownTime) -> pd.DataFrame:
    """The run's ``jobs`` (:data:`CSV_COLUMNS` it has) and one job per reservation (``down-<n>``, queue and user
    :data:`DOWN_QUEUE`, no recorded wait), in submission order."""
    kept = jobs[[name for name in CSV_COLUMNS if name in jobs.columns]]
    held = found.reservations
    reservations = pd.DataFrame({
        "job_id": [f"down-{n}" for n in range(len(held))], "submit_time": held["start"].to_numpy(float),
        "run_time": held["duration"].to_numpy(float), "procs": held["cpus"].to_numpy(np.int64),
        "requested_time": held["duration"].to_numpy(float), "recorded_wait": np.nan, "user": DOWN_QUEUE,
        "group": DOWN_QUEUE, "queue": DOWN_QUEUE})
    both = pd.concat([kept, reservations[[c for c in reservations.columns if c in kept.columns]]], ignore_index=True)
    return both.sort_values("submit_time", kind="stable").reset_index(drop=True)


def write_workload(jobs: pd.DataFrame, path) -> None:
    """``jobs`` as a CSV workload (unknown values as empty cells, numbers exactly)."""
    jobs.to_csv(path, index=False, float_format="%.17g", na_rep="")
