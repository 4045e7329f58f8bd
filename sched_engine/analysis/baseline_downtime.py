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
count), each one reservation job per cluster: submitted at the piece's
start, running for its length, in a queue ranked above every other
(:data:`DOWN_QUEUE`).

Which cluster (a model of several): the log does not say where a job ran,
only where it could run (the run's own ``suitable`` clusters: its
requirements and its partition). Clusters linked by a job that could run
on either form a *group* (:func:`cluster_groups`); each group's periods are
found on its own jobs and its own CPUs, so the idle capacity of a cluster
only its own jobs use is held back on that cluster. Within a group of
several clusters the log cannot tell them apart: the CPUs held back are
shared in proportion to the clusters' CPUs, and :meth:`DownTime.text` says
so. Every reservation names its cluster (``cluster``) and, in a model of
several clusters, is pinned to it: its requirement is ``cl_<name>``
(:mod:`sched_engine.batch.requirements`), which the step's model honours
(``requirements: true``; the log's own jobs keep no requirement where the
model did not honour theirs, :func:`with_reservations`). A cluster name a
requirement cannot hold (empty, or with ``+ : #`` or a space, or two
clusters of one name) leaves its reservations unpinned, and the text says
that too.

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

#: Clusters a setting names one by one, at most (more: "all N clusters").
NAMED = 4
#: The queue (and user) of the reservation jobs; the step ranks it first.
DOWN_QUEUE = "down-time"
RESERVATION_COLUMNS = ("start", "duration", "cpus", "cluster")
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
    where: str = ""             # which clusters hold them, in words ("" on a single cluster)
    pinned: bool = False        # each reservation pinned to its cluster by a requirement

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
                f"{len(self.reservations):,} reservations" + (f" {self.where}" if self.where else ""))


def pieces(times: np.ndarray, idle: np.ndarray, unit: float) -> pd.DataFrame:
    """Idle CPUs over consecutive segments (``times`` one longer than ``idle``), rounded down to ``unit``, as
    ``(start, duration, cpus)`` pieces: one per run of equal level, none where it is 0."""
    level = np.floor(np.asarray(idle, dtype=float) / unit) * unit
    if not len(level):
        return pd.DataFrame({name: [] for name in RESERVATION_COLUMNS[:3]})
    first = np.flatnonzero(np.r_[True, level[1:] != level[:-1]])
    stop = np.r_[first[1:], len(level)]
    frame = pd.DataFrame({"start": times[first], "duration": times[stop] - times[first], "cpus": level[first]})
    return frame[frame["cpus"] > 0].reset_index(drop=True)


def _unit(clusters) -> float:
    sizes = {cpus for cluster in clusters for cpus in cluster.cpus}
    return float(sizes.pop()) if len(sizes) == 1 else 1.0


def cluster_groups(suitable, count: int) -> tuple[list[list[int]], np.ndarray]:
    """``(groups, group of each job)``: the clusters linked by jobs that could run on either (module docstring).

    ``suitable``: per job the indices of the clusters it may use (None: any); ``count``: the clusters. A job that
    may use none (a run cancels it) is in no group (-1).
    """
    parent = list(range(count))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    allowed = [tuple(range(count)) if choice is None else tuple(choice) for choice in (suitable or [])]
    for choice in set(allowed):
        for other in choice[1:]:
            parent[root(other)] = root(choice[0])
    roots = sorted({root(index) for index in range(count)})
    groups = [[index for index in range(count) if root(index) == top] for top in roots]
    number = {top: position for position, top in enumerate(roots)}
    of_job = np.array([number[root(choice[0])] if choice else -1 for choice in allowed], dtype=np.int64)
    return groups, of_job


def _held(jobs: pd.DataFrame, clusters, hardware: float | None, minimum_s: float, unit: float):
    """``(pieces with their cluster's name, periods, their length, CPU-seconds above the hardware)`` of one
    group of clusters and its jobs."""
    totals = np.array([float(sum(c.cpus)) for c in clusters])
    capacity = float(totals.sum())
    schedule, _ = recorded_schedule(jobs)
    if not len(schedule) or capacity <= 0:
        return [], 0, 0.0, 0.0
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
    found = [pieces(seg.times, held * total / capacity, unit).assign(cluster=cluster.name)
             for cluster, total in zip(clusters, totals)]
    above_s = float((above * np.diff(seg.times)).sum()) if len(seg.used) else 0.0
    return found, len(periods), float(periods["duration_s"].sum()), above_s


def pinnable(clusters) -> bool:
    """Whether a requirement ``cl_<name>`` names each cluster alone (:mod:`sched_engine.batch.requirements`)."""
    names = [c.name for c in clusters]
    return len(set(names)) == len(names) and all(
        name and name == name.strip() and not any(mark in name for mark in "+:# \t") for name in names)


def _where(clusters, groups: list[list[int]], pinned: bool) -> str:
    """Which clusters the reservations are on, in words (module docstring)."""
    if len(clusters) < 2:
        return ""
    shared = [group for group in groups if len(group) > 1]
    if not shared:
        text = "(each on the cluster where the log left its CPUs idle: its jobs could run nowhere else)"
    else:
        names = (f"all {len(clusters)} clusters" if len(shared[0]) == len(clusters) and len(clusters) > NAMED
                 else ", ".join(clusters[index].name for index in shared[0]))
        text = (f"(on the cluster whose jobs could run only there; across {names}, which the same jobs could use, "
                "shared in proportion to their CPUs: the log does not say which of them ran its jobs)"
                if len(groups) > 1 else f"(shared across {names} in proportion to their CPUs: the log does not say "
                "which of them ran its jobs)")
    return text if pinned else text[:-1] + "; not pinned: a cluster name a requirement cannot hold)"


def down_time(jobs: pd.DataFrame, clusters, hardware: float | None = None, minimum_s: float = IDLE_MIN_S,
              suitable=None) -> DownTime:
    """The reservations of the module docstring for a run's ``jobs`` (its clock) on its ``clusters``
    (:class:`~sched_engine.batch.cluster.ClusterState`: ``cpus`` per machine); ``hardware``: the hardware's
    CPUs where the run is on more (None: the clusters are the hardware); ``suitable``: per job the clusters it may
    use (the run's :attr:`~sched_engine.batch.model.BatchInput.suitable`; None: any)."""
    empty = pd.DataFrame({name: [] for name in RESERVATION_COLUMNS})
    if not len(clusters):
        return DownTime(empty, 0, 0.0)
    groups, of_job = cluster_groups(suitable if suitable is not None else [None] * len(jobs), len(clusters))
    unit = _unit(clusters)
    found, periods, idle_s, above_s = [], 0, 0.0, 0.0
    for number, group in enumerate(groups):
        members = [clusters[index] for index in group]
        own = jobs if len(groups) == 1 else jobs[of_job == number]
        part, count, length, above = _held(own, members, hardware if len(groups) == 1 else None, minimum_s, unit)
        found += part
        periods, idle_s, above_s = periods + count, idle_s + length, above_s + above
    pinned = len(clusters) > 1 and pinnable(clusters)
    if not found:
        return DownTime(empty, 0, 0.0)
    frame = pd.concat(found, ignore_index=True).sort_values(["start", "cpus"], kind="stable").reset_index(drop=True)
    return DownTime(frame, periods, idle_s, above_s, _where(clusters, groups, pinned), pinned)


def with_reservations(jobs: pd.DataFrame, found: DownTime, requirements: bool = True) -> pd.DataFrame:
    """The run's ``jobs`` (:data:`CSV_COLUMNS` it has) and one job per reservation (``down-<n>``, queue and user
    :data:`DOWN_QUEUE`, no recorded wait, pinned to its cluster by the requirement ``cl_<cluster>`` where
    ``found.pinned``), in submission order. ``requirements``: whether the run honoured the jobs' own requirements;
    where it did not and the reservations are pinned, the jobs keep none (the step's model honours them)."""
    kept = jobs[[name for name in CSV_COLUMNS if name in jobs.columns]]
    held = found.reservations
    reservations = pd.DataFrame({
        "job_id": [f"down-{n}" for n in range(len(held))], "submit_time": held["start"].to_numpy(float),
        "run_time": held["duration"].to_numpy(float), "procs": held["cpus"].to_numpy(np.int64),
        "requested_time": held["duration"].to_numpy(float), "recorded_wait": np.nan, "user": DOWN_QUEUE,
        "group": DOWN_QUEUE, "queue": DOWN_QUEUE})
    if found.pinned:
        kept = kept.assign(requirement=kept["requirement"] if requirements and "requirement" in kept.columns else "")
        reservations["requirement"] = ("cl_" + held["cluster"].astype(str)).to_numpy()
    both = pd.concat([kept, reservations[[c for c in reservations.columns if c in kept.columns]]], ignore_index=True)
    return both.sort_values("submit_time", kind="stable").reset_index(drop=True)


def write_workload(jobs: pd.DataFrame, path) -> None:
    """``jobs`` as a CSV workload (unknown values as empty cells, numbers exactly)."""
    jobs.to_csv(path, index=False, float_format="%.17g", na_rep="")
