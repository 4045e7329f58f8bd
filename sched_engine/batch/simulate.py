"""Event-driven simulation of batch jobs on clusters with machine failures.

The simulation runs on the kernel's loop (:class:`~sched_engine.core.loop.Simulation`),
one handler per event kind. Events at one instant, in :class:`~sched_engine.core.Priority` order:
machine failures (FAILURE: every job running on the machine is killed --
Klusáček & Rudová §2.2 -- and not resubmitted), machine restarts
(DEPARTURE: the machine's CPUs are free at once), job completions
(COMPLETION), job arrivals (ARRIVAL) and reservation wake-ups (SCHEDULE).
After the events of an instant the policy makes one scheduling pass. Every
policy hook returns decisions as data (``Start``, ``Cancel``, ``Reserve``,
``Wake``, :mod:`.policies.decisions`) that :meth:`BatchSimulation.apply`
carries out; policies never call the simulation. Policies that start jobs
in arrival order only (FCFS, FCFS-LB) run, when no machine can fail, through
a loop with one step per job and the same results
(:func:`.in_order.run_in_order`).

Policies read the simulation through a narrow surface: job arrays
(``procs``, ``estimate``, ``submit``, ``candidates``, ``status``),
``clusters`` and ``rng``.

Statuses: ``finished``, ``killed`` (by a machine failure, or preempted:
a best-effort job whose CPUs a job of another queue took, :mod:`.queues`),
``cancelled`` (no suitable cluster, no reservation possible on the machines
that are up, or more CPUs than its user may hold).

Queue ranks, best-effort queues and per-user limits (:mod:`.queues`):
``rank``, ``best_effort`` and ``limits`` (None when the model has none);
the engine keeps ``limits`` and ``best_effort_cpus`` (CPUs held by running
best-effort jobs, per cluster) up to date as jobs start and end, and kills
the jobs a policy's ``Preempt`` names.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from ..core.events import Priority
from ..core.loop import Simulation, scheduler_clock
from . import compiled
from .in_order import run_in_order
from .pending import PendingRecorder, ReasonColumns
from .policies.decisions import Cancel, Decision, Preempt, Start, Wake
from .protocols import BatchPolicy, ClusterModel, JobObserver
from .queues import OVER_USER_CPUS, PREEMPTED, QueueInputs

WAITING, RUNNING, FINISHED, KILLED, CANCELLED = range(5)
STATUS_NAMES = ("waiting", "running", "finished", "killed", "cancelled")
NO_SUITABLE_CLUSTER = "no suitable cluster"


class BatchSimulation(Simulation):
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
        clusters: list[ClusterModel],
        failures: Sequence[tuple[float, int, int, float]] = (),
        policy: BatchPolicy,
        rng: np.random.Generator,
        progress: Callable[[float], None] | None = None,
        keep_decisions: bool = False,
        record_pending: bool = True,
        queues: QueueInputs | None = None,
        unsuitable: dict[int, str] | None = None,
        memory_per_cpu: Sequence[float] | None = None,
        stretch: Callable[[float, float], float] | None = None,
        observers: Sequence[JobObserver] = (),
        sample_clusters: bool = True,
        kernel: str | None = None,
    ):
        super().__init__(progress=progress, total_work=len(submit))
        self.submit = list(map(float, submit))
        self.run_time = list(map(float, run_time))
        self.estimate = list(map(float, estimate))
        self.procs = list(map(int, procs))
        # The cluster model: CPUs only (memory_per_cpu None), or CPUs and memory per machine, each job holding
        # memory_per_cpu[j] MB on each of its CPUs (a share of it when started memory-elastic: its run time then is
        # stretch(share, run time), and the scheduler plans with its estimate stretched alike).
        self.memory_per_cpu = None if memory_per_cpu is None else list(map(float, memory_per_cpu))
        self.stretch = stretch
        self.memory_fraction = [1.0] * len(self.submit)
        self.actual_run = self.run_time if stretch is None else list(self.run_time)   # what each job ran
        self.planned = self.estimate if stretch is None else list(self.estimate)      # what the scheduler planned
        self.elastic_starts = 0
        # Job observers (:class:`JobObserver`): told as jobs enter and leave the queue, start and end.
        self.observers = tuple(observers)
        self.sample_clusters = sample_clusters
        # Which loop runs it: "auto", "compiled" or "python" (:mod:`.compiled`; the same decisions either way).
        self.kernel = compiled.chosen_kernel(kernel)
        self.clusters = clusters
        self.rng = rng
        self.policy = policy
        count = len(self.submit)
        self.start_time = [float("nan")] * count
        self.end_time = [float("nan")] * count
        self.status = [WAITING] * count
        self.cluster_of = [-1] * count
        self.reason = [""] * count
        # What each started job held on its cluster (see ClusterState.allocate); () if it held nothing.
        self.machines_of: list = [()] * count
        # A compiled run's machines as the jobs frame's text column (Arrow), its machines_of left empty.
        self.machines_column = None
        self.allocation: dict[int, tuple[int, object, float]] = {}  # running job -> cluster, holding, estimated end
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
        self._failures = list(failures)
        self.unsuitable = unsuitable or {}   # why a job no cluster may hold is cancelled, if not "no suitable cluster"
        queues = queues or QueueInputs()
        self.rank = None if queues.rank is None else queues.rank.tolist()
        self.best_effort = None if queues.best_effort is None else queues.best_effort.tolist()
        self.limits = queues.limits
        self.best_effort_cpus = [0] * len(clusters)
        self.preempted = 0
        failing = {cluster for _, cluster, _, _ in self._failures}
        for cluster in clusters:
            cluster.track_jobs = cluster.index in failing
        self._wakes: set[float] = set()
        # With keep_decisions: every decision the policy made, as (time, decision), in order.
        self.decision_log: list[tuple[float, Decision]] | None = [] if keep_decisions else None
        self._changed: set[int] = set()  # clusters whose machines or jobs changed at this instant
        for kind, handler in (("end", self._end), ("arrive", self._arrive), ("fail", self._fail),
                              ("restart", self._restart), ("wake", self._woken)):
            self.on(kind, handler)
        # Timeline samples: (time, cluster index or -1 for the queue, used CPUs or queue length, up CPUs);
        # a list of rows from the event loop, an array of them from the in-order loop.
        self.samples: list[tuple[float, int, int, int]] | np.ndarray = []
        # Machine state changes: (time, cluster index, machine index, 1 = down / 0 = up again).
        self.machine_changes: list[tuple[float, int, int, int]] = []
        self.queue_length = 0
        self.done = 0
        # Why pending (:mod:`.pending`): (job, from, to, reason code, blocking job) rows, and the
        # event loop's recorder (None in the in-order loop, which records as it goes).
        self.record_pending = record_pending
        self.pending_rows: list[tuple[int, float, float, int, int]] = []
        self._pending: PendingRecorder | None = None
        self.pending_heads: list[tuple[float, int]] | None = None   # the recorder's history of the oldest job
        # A compiled run's own way to the exact reasons table (:mod:`.compiled.reasons`), else None.
        self.exact_reasons: Callable[["BatchSimulation"], ReasonColumns] | None = None

    # --- applying the policy's decisions ----------------------------------------------------------

    def apply(self, decisions: Iterable[Decision], now: float) -> None:
        """Carry out each decision as the policy yields it (it goes on from the state they leave)."""
        log = self.decision_log
        for decision in decisions:
            if log is not None:
                log.append((now, decision))
            kind = type(decision)
            if kind is Start:
                self._start(decision.job, decision.cluster, now, decision.fraction)
            elif kind is Cancel:
                self.cancel(decision.job, now, decision.reason)
            elif kind is Wake:
                self._wake(decision.time)
            elif kind is Preempt:
                self._preempt(decision.job, now)
            # Reserve: a plan, kept in the log only

    def _policy_step(self, decisions: Iterable[Decision], now: float) -> None:
        """Apply a hook's decisions, counting the policy's work (and the engine's applying it) as the scheduler's."""
        started = scheduler_clock()
        self.apply(decisions, now)
        self.scheduler_seconds += scheduler_clock() - started

    def _start(self, job: int, cluster_index: int, now: float, fraction: float = 1.0) -> None:
        if self._pending is not None:
            self._pending.left.append(job)
        for observer in self.observers:
            observer.left_queue(job)
        end = self.occupy(job, cluster_index, now, fraction)
        if end is not None:
            self.events.push(end, Priority.COMPLETION, "end", job)

    def cancel(self, job: int, now: float, reason: str, queued: bool = True) -> None:
        """Cancel ``job`` for ``reason``; ``queued``: it had entered the queue (the observers heard so)."""
        if self._pending is not None:
            self._pending.left.append(job)
        if queued:
            for observer in self.observers:
                observer.left_queue(job)
        self.status[job] = CANCELLED
        self.end_time[job] = now
        self.reason[job] = reason
        self.queue_length -= 1
        self.done += 1

    def _preempt(self, job: int, now: float) -> None:
        """Kill a running best-effort job for good (:mod:`.queues`: it is not resubmitted)."""
        self._changed.add(self.finish(job, now, KILLED))
        self.reason[job] = PREEMPTED
        self.preempted += 1

    def _wake(self, time: float) -> None:
        """A scheduling pass at ``time`` (a reservation starts then)."""
        if time not in self._wakes:
            self._wakes.add(time)
            self.schedule(time, Priority.SCHEDULE, "wake", None)

    def run(self) -> None:
        """Run to the end: the kernel's loop, or the in-order loop (the kernel's one exemption, see below)."""
        self.policy.bind(self)
        if compiled.eligible(self, self.kernel):
            compiled.run(self)
            return
        plain = self.rank is None and self.limits is None   # no queue order, best-effort queue or limit
        # (the in-order loop tells no observer of its jobs: with one, every event goes through the kernel's loop)
        in_order = (getattr(self.policy, "starts_in_order", False) and not self._failures and plain
                    and not self.observers)
        for cluster in self.clusters:
            cluster.track_running = not in_order  # an in-order policy never looks ahead
        if in_order:
            run_in_order(self)
            return
        if self.record_pending:
            self._pending = PendingRecorder(self, getattr(self.policy, "starts_in_order", False), WAITING)
            self.pending_rows = self._pending.rows
            self.pending_heads = self._pending.heads
        if self.sample_clusters:
            for cluster in self.clusters:
                self._sample(0.0, cluster)
        for job, time in enumerate(self.submit):
            self.schedule(time, Priority.ARRIVAL, "arrive", job)
        for time, cluster, machine, duration in self._failures:
            self.schedule(time, Priority.FAILURE, "fail", (cluster, machine, duration))
        super().run()

    # --- handlers (the general loop: every event through the heap, every policy hook called) ------

    def advance(self, time: float) -> None:
        self._changed: set[int] = set()
        for observer in self.observers:
            observer.advance(time)

    def _end(self, event) -> None:
        job, now = event.payload, self.now
        if self.status[job] != RUNNING:
            return  # killed earlier; its completion is void
        cluster_index = self.finish(job, now, FINISHED)
        self._changed.add(cluster_index)
        # a job's end is not counted as scheduler time (the measure as it was)
        self.apply(self.policy.job_ended(cluster_index, now, now < self.start_time[job] + self.planned[job]), now)

    def _arrive(self, event) -> None:
        job, now = event.payload, self.now
        self.queue_length += 1
        if not self.candidates[job] or all(self.procs[job] > self.clusters[c].total for c in self.candidates[job]):
            self.cancel(job, now, self.unsuitable.get(job, NO_SUITABLE_CLUSTER), queued=False)
            return
        if self.limits is not None and self.procs[job] > self.limits.max_cpus:
            self.cancel(job, now, OVER_USER_CPUS, queued=False)
            return
        if self._pending is not None:
            self._pending.arrived.append(job)
        for observer in self.observers:
            observer.queued(job)
        self._policy_step(self.policy.arrive(job, now), now)

    def _fail(self, event) -> None:
        (cluster_index, machine, duration), now = event.payload, self.now
        cluster = self.clusters[cluster_index]
        for job in sorted(cluster.fail(machine)):
            self.finish(job, now, KILLED)
        self.machine_changes.append((now, cluster_index, machine, 1))
        self.schedule(now + duration, Priority.DEPARTURE, "restart", (cluster_index, machine))
        self._changed.add(cluster_index)
        self._policy_step(self.policy.capacity_changed(cluster_index, now), now)

    def _restart(self, event) -> None:
        (cluster_index, machine), now = event.payload, self.now
        self.clusters[cluster_index].restart(machine)
        down = 0 if self.clusters[cluster_index].up[machine] else 1   # overlapping failures
        self.machine_changes.append((now, cluster_index, machine, down))
        self._changed.add(cluster_index)
        self._policy_step(self.policy.capacity_changed(cluster_index, now), now)

    def _woken(self, event) -> None:
        self._wakes.discard(self.now)

    def after_instant(self, now: float) -> None:
        before = [c.free_total for c in self.clusters] if self.sample_clusters else None
        self._policy_step(self.policy.schedule(now), now)
        if self._pending is not None:
            self._pending.after_pass(now)
        if self.sample_clusters:
            changed = self._changed
            for index, cluster in enumerate(self.clusters):
                if index in changed or cluster.free_total != before[index]:
                    self.samples.append((now, index, cluster.up_total - cluster.free_total, cluster.up_total))
            self.samples.append((now, -1, self.queue_length, 0))
        self.progress.update(self.done)

    def occupy(self, job: int, cluster_index: int, now: float, fraction: float = 1.0) -> float | None:
        """Start ``job`` on a cluster at ``now`` (with ``fraction`` of its memory); returns its completion time, or
        None if it is done already."""
        self.start_time[job] = now
        self.cluster_of[job] = cluster_index
        self.queue_length -= 1
        if fraction != 1.0:
            self._stretched(job, fraction)
        run_time = self.actual_run[job]
        if run_time <= 0:
            # A zero-length job holds no CPUs: it completes as it starts.
            self.status[job] = FINISHED
            self.end_time[job] = now
            self.done += 1
            return None
        est_end = now + self.planned[job]
        if self.memory_per_cpu is None:
            held = self.clusters[cluster_index].allocate(job, self.procs[job], est_end)
        else:
            held = self.clusters[cluster_index].allocate(job, self.procs[job], est_end,
                                                         self.memory_per_cpu[job] * fraction)
        if self.limits is not None:
            self.limits.started(job, self.procs[job])
            if self._pending is not None:
                self._pending.users_changed.add(self.limits.user[job])
        if self.best_effort is not None and self.best_effort[job]:
            self.best_effort_cpus[cluster_index] += self.procs[job]
        self.allocation[job] = (cluster_index, held, est_end)
        self.machines_of[job] = held
        self.status[job] = RUNNING
        for observer in self.observers:
            observer.started(job)
        return now + run_time

    def fits_now(self, job: int, cluster_index: int) -> bool:
        """Whether ``job`` fits now on a cluster: its CPUs free there and, with memory, its memory per CPU on them."""
        cluster = self.clusters[cluster_index]
        if self.memory_per_cpu is None:
            return cluster.free_total >= self.procs[job]
        return cluster.fits(self.procs[job], self.memory_per_cpu[job])

    def _stretched(self, job: int, fraction: float) -> None:
        """A memory-elastic start with ``fraction`` of the job's memory: it runs longer, by the penalty model."""
        self.memory_fraction[job] = fraction
        run = self.run_time[job]
        self.actual_run[job] = self.stretch(fraction, run)
        self.planned[job] = self.estimate[job] * (self.actual_run[job] / run if run > 0 else 1.0)
        self.elastic_starts += 1

    def finish(self, job: int, now: float, status: int) -> int:
        cluster_index, held, est_end = self.allocation.pop(job)
        self.clusters[cluster_index].release(job, est_end, held)
        if self.limits is not None:
            self.limits.ended(job, self.procs[job])
            if self._pending is not None:
                self._pending.users_changed.add(self.limits.user[job])
        if self.best_effort is not None and self.best_effort[job]:
            self.best_effort_cpus[cluster_index] -= self.procs[job]
        self.status[job] = status
        self.end_time[job] = now
        self.done += 1
        if status == KILLED:
            self.reason[job] = "machine failure"
        for observer in self.observers:
            observer.finished(job)
        return cluster_index

    def _sample(self, now: float, cluster: ClusterModel) -> None:
        self.samples.append((now, cluster.index, cluster.up_total - cluster.free_total, cluster.up_total))
