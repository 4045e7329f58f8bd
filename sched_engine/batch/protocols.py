"""The batch kernel's extension points, as typed protocols: the cluster model, the policy, the job observers.

:class:`~.simulate.BatchSimulation` is the one batch kernel; the batch and
site engines are configurations of it:

=====================  =============================================  ==================================================
extension point        batch engine                                   site engine
=====================  =============================================  ==================================================
:class:`ClusterModel`  :class:`~.cluster.ClusterState` (CPUs)         :class:`~sched_engine.site.machines.SiteCluster`
                                                                      (CPUs and memory per machine)
:class:`BatchPolicy`   FCFS, FCFS-LB, EASY, Alea's EASY, CONS, Local  :class:`~sched_engine.site.policy.SitePolicy`: a
                       Search, recorded (:mod:`.policies`)            queue order (:mod:`sched_engine.site.order`) with
                                                                      none, EASY or CONS backfilling
:class:`JobObserver`   none                                           :class:`~sched_engine.site.usage.SiteUsage` and
                                                                      the policy's indexes of the waiting jobs
=====================  =============================================  ==================================================

``tests/conformance/test_kernel_extension_points.py`` checks every choice
at each point against its protocol and the kernel's invariants.
"""

from __future__ import annotations

from typing import Iterable, Protocol, runtime_checkable

from .policies.decisions import Decision


@runtime_checkable
class ClusterModel(Protocol):
    """One cluster's machines as the kernel uses them.

    Invariants: ``0 <= free_total <= up_total <= total`` (CPUs free on
    machines that are up; CPUs of those machines; all CPUs); what
    :meth:`allocate` returns is given back to :meth:`release` unchanged;
    :meth:`fail` returns every job holding a CPU of the machine.
    """

    index: int
    name: str
    speed: float
    total: int
    free_total: int
    up_total: int
    up: list
    track_running: bool   # keep running jobs by estimated end (policies that plan ahead read them)
    track_jobs: bool      # keep each machine's jobs (only machines that can fail need it)

    def allocate(self, job: int, procs: int, est_end: float, *memory) -> object:
        """Take ``procs`` CPUs (first fit) for ``job``, ending by its estimate at ``est_end``; with memory, the MB
        per CPU it holds. Returns what the job holds."""

    def release(self, job: int, est_end: float, held) -> None:
        """Give back what :meth:`allocate` gave ``job``."""

    def fail(self, machine: int) -> set[int]:
        """Take a machine down; the jobs running on it (the kernel kills them)."""

    def restart(self, machine: int) -> None:
        """End one failure of a machine."""


@runtime_checkable
class BatchPolicy(Protocol):
    """A scheduling policy: the kernel calls its hooks and applies the decisions it yields, one by one
    (:mod:`.policies.decisions`); it reads the run, never changes it."""

    def bind(self, sim) -> None:
        """Called once, as the run starts."""

    def arrive(self, job: int, now: float) -> Iterable[Decision]:
        """A job entered the queue."""

    def job_ended(self, cluster: int, now: float, early: bool) -> Iterable[Decision]:
        """A job ended on ``cluster`` (``early``: before its estimated end)."""

    def capacity_changed(self, cluster: int, now: float) -> Iterable[Decision]:
        """A machine of ``cluster`` failed (its jobs were killed) or restarted."""

    def schedule(self, now: float) -> Iterable[Decision]:
        """The scheduling pass after the events of an instant."""


@runtime_checkable
class JobObserver(Protocol):
    """What a run tells an observer of its jobs (the site engine's usage per user, its policy's indexes).

    For each job, in this order: ``queued`` once it entered the queue (not if cancelled on arrival);
    ``left_queue`` when it starts or is cancelled; ``started`` once it holds its CPUs (a zero-length job holds
    none); ``finished`` when it gave them back (ended, killed or preempted). ``advance(time)``: time passes to
    ``time``, before that instant's events.
    """

    def queued(self, job: int) -> None: ...

    def left_queue(self, job: int) -> None: ...

    def started(self, job: int) -> None: ...

    def finished(self, job: int) -> None: ...

    def advance(self, time: float) -> None: ...
