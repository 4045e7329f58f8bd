"""Event-driven simulation of batch jobs on clusters with machine failures.

Events at one instant, in :class:`~sched_engine.core.Priority` order:
machine failures (FAILURE: every job running on the machine is killed --
Klusáček & Rudová §2.2 -- and not resubmitted), machine restarts
(DEPARTURE: the machine's CPUs are free at once), job completions
(COMPLETION), job arrivals (ARRIVAL) and reservation wake-ups (SCHEDULE).
After the events of an instant the policy makes one scheduling pass and
starts jobs through :meth:`BatchSimulation.start`.

Policies see the simulation through a narrow surface: job arrays
(``procs``, ``estimate``, ``submit``, ``candidates``), ``clusters``,
``start``, ``cancel``, ``wake`` and ``rng``.

Statuses: ``completed``, ``killed`` (by a machine failure), ``cancelled``
(no suitable cluster, or no reservation possible on the machines that are
up).
"""

from __future__ import annotations

from time import process_time
from typing import Callable, Sequence

import numpy as np

from ..core.events import EventQueue, Priority
from .cluster import ClusterState

WAITING, RUNNING, COMPLETED, KILLED, CANCELLED = range(5)
STATUS_NAMES = ("waiting", "running", "completed", "killed", "cancelled")


class BatchSimulation:
    """One run: jobs, clusters, failures and a policy.

    ``candidates[j]`` lists the clusters job ``j`` may use, in the
    multi-cluster preference order of §5: fastest first, then the larger
    cluster (total CPUs), then input order.
    """

    def __init__(
        self,
        *,
        submit: Sequence[float],
        run_time: Sequence[float],
        estimate: Sequence[float],
        procs: Sequence[int],
        suitable: Sequence[tuple[int, ...] | None],
        clusters: list[ClusterState],
        failures: Sequence[tuple[float, int, int, float]] = (),
        policy,
        rng: np.random.Generator,
        progress: Callable[[float], None] | None = None,
    ):
        self.submit = list(map(float, submit))
        self.run_time = list(map(float, run_time))
        self.estimate = list(map(float, estimate))
        self.procs = list(map(int, procs))
        self.clusters = clusters
        self.rng = rng
        self.policy = policy
        self.progress = progress
        count = len(self.submit)
        self.start_time = [float("nan")] * count
        self.end_time = [float("nan")] * count
        self.status = [WAITING] * count
        self.cluster_of = [-1] * count
        self.reason = [""] * count
        self.machines_of: list[tuple[int, ...]] = [()] * count   # machine indices within the job's cluster
        self.allocation: dict[int, tuple[int, np.ndarray, np.ndarray, float]] = {}
        preference = sorted(range(len(clusters)), key=lambda c: (-clusters[c].speed, -clusters[c].total, c))
        self.preference = tuple(preference)
        by_set: dict[tuple[int, ...] | None, tuple[int, ...]] = {}
        self.candidates: list[tuple[int, ...]] = []
        for allowed in suitable:
            if allowed not in by_set:
                by_set[allowed] = (
                    self.preference if allowed is None else tuple(c for c in preference if c in set(allowed))
                )
            self.candidates.append(by_set[allowed])
        self.events = EventQueue()
        self._failures = list(failures)
        failing = {cluster for _, cluster, _, _ in self._failures}
        for cluster in clusters:
            cluster.track_jobs = cluster.index in failing
        self._wakes: set[float] = set()
        self.scheduler_seconds = 0.0
        # Timeline samples: (time, cluster index or -1 for the queue, used CPUs, up CPUs).
        self.samples: list[tuple[float, int, int, int]] = []
        # Machine state changes: (time, cluster index, machine index, 1 = down / 0 = up again).
        self.machine_changes: list[tuple[float, int, int, int]] = []
        self.queue_length = 0
        self.done = 0

    # --- surface for policies ---------------------------------------------------------------------

    def start(self, job: int, cluster_index: int, now: float) -> None:
        if self.run_time[job] <= 0:
            # A zero-length job holds no CPUs: it completes as it starts.
            self.status[job] = COMPLETED
            self.start_time[job] = self.end_time[job] = now
            self.cluster_of[job] = cluster_index
            self.queue_length -= 1
            self.done += 1
            return
        cluster = self.clusters[cluster_index]
        est_end = now + self.estimate[job]
        machines, counts = cluster.allocate(job, self.procs[job], est_end)
        self.allocation[job] = (cluster_index, machines, counts, est_end)
        self.machines_of[job] = tuple(int(m) for m in machines)
        self.status[job] = RUNNING
        self.start_time[job] = now
        self.cluster_of[job] = cluster_index
        self.queue_length -= 1
        self.events.push(now + self.run_time[job], Priority.COMPLETION, "end", job)

    def cancel(self, job: int, now: float, reason: str) -> None:
        self.status[job] = CANCELLED
        self.end_time[job] = now
        self.reason[job] = reason
        self.queue_length -= 1
        self.done += 1

    def wake(self, time: float) -> None:
        """Ask for a scheduling pass at ``time`` (a reservation starts then)."""
        if time not in self._wakes:
            self._wakes.add(time)
            self.events.push(time, Priority.SCHEDULE, "wake", None)

    # --- the loop ---------------------------------------------------------------------------------

    def run(self) -> None:
        events = self.events
        for job, time in enumerate(self.submit):
            events.push(time, Priority.ARRIVAL, "arrive", job)
        for time, cluster, machine, duration in self._failures:
            events.push(time, Priority.FAILURE, "fail", (cluster, machine, duration))
        total = len(self.submit)
        next_report = 0
        policy = self.policy
        policy.bind(self)
        for cluster in self.clusters:
            self._sample(0.0, cluster)
        clock = process_time
        while events:
            changed: set[int] = set()
            now = events.peek_time()
            for event in events.pop_instant():
                kind = event.kind
                if kind == "end":
                    job = event.payload
                    if self.status[job] != RUNNING:
                        continue  # killed earlier; its completion is void
                    cluster_index = self._finish(job, now, COMPLETED)
                    changed.add(cluster_index)
                    policy.job_ended(cluster_index, now, now < self.start_time[job] + self.estimate[job])
                elif kind == "arrive":
                    job = event.payload
                    self.queue_length += 1
                    if not self.candidates[job] or all(
                        self.procs[job] > self.clusters[c].total for c in self.candidates[job]
                    ):
                        self.cancel(job, now, "no suitable cluster")
                        continue
                    started = clock()
                    policy.arrive(job, now)
                    self.scheduler_seconds += clock() - started
                elif kind == "fail":
                    cluster_index, machine, duration = event.payload
                    cluster = self.clusters[cluster_index]
                    for job in sorted(cluster.fail(machine)):
                        self._finish(job, now, KILLED)
                    self.machine_changes.append((now, cluster_index, machine, 1))
                    events.push(now + duration, Priority.DEPARTURE, "restart", (cluster_index, machine))
                    changed.add(cluster_index)
                    started = clock()
                    policy.capacity_changed(cluster_index, now)
                    self.scheduler_seconds += clock() - started
                elif kind == "restart":
                    cluster_index, machine = event.payload
                    self.clusters[cluster_index].restart(machine)
                    down = 0 if self.clusters[cluster_index].up[machine] else 1   # overlapping failures
                    self.machine_changes.append((now, cluster_index, machine, down))
                    changed.add(cluster_index)
                    started = clock()
                    policy.capacity_changed(cluster_index, now)
                    self.scheduler_seconds += clock() - started
                elif kind == "wake":
                    self._wakes.discard(now)
            before = [c.free_total for c in self.clusters]
            started = clock()
            policy.schedule(now)
            self.scheduler_seconds += clock() - started
            for index, cluster in enumerate(self.clusters):
                if index in changed or cluster.free_total != before[index]:
                    self.samples.append((now, index, cluster.up_total - cluster.free_total, cluster.up_total))
            self.samples.append((now, -1, self.queue_length, 0))
            if self.progress is not None and self.done >= next_report:
                self.progress(min(self.done / max(total, 1), 1.0))
                next_report = self.done + max(total // 100, 1)

    def _finish(self, job: int, now: float, status: int) -> int:
        cluster_index, machines, counts, est_end = self.allocation.pop(job)
        self.clusters[cluster_index].release(job, est_end, machines, counts)
        self.status[job] = status
        self.end_time[job] = now
        self.done += 1
        if status == KILLED:
            self.reason[job] = "machine failure"
        return cluster_index

    def _sample(self, now: float, cluster: ClusterState) -> None:
        self.samples.append((now, cluster.index, cluster.up_total - cluster.free_total, cluster.up_total))
