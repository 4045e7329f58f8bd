"""Why jobs waited in a site run: the batch engine's reasons, over CPUs and memory machine by machine.

A site run records, for every job that waited, intervals that tile the time
from its submission to its start (or cancellation) exactly, each with one
reason of the batch engine's vocabulary (:mod:`sched_engine.batch.pending`,
its codes and its ``pending`` frame, built by
:func:`~sched_engine.batch.pending.pending_frame`):

``resources``
    no cluster it may use can give it its CPUs now, each with its memory
    per CPU on the same machine (a share ``min_fraction`` of it when starts
    are memory-elastic): :meth:`~.machines.SiteCluster.givable_total`.
``failure``
    it does not fit now, but would if the down machines of one of its
    clusters were up (and idle).
``requirements``
    it does not fit on the clusters it may use, but fits now on another.
``reservation``
    it fits now, and starting it would delay the reserved job (EASY:
    ``blocking_job`` names the head of the queue order, the job the pass
    reserved for; starting it would hold CPUs or memory of the reserved
    cluster past the shadow time beyond what is left over then, by EASY's
    own rule, :mod:`.backfill`). Under CONS it fits now machine by machine
    and the plan starts it later, behind the reservations of the jobs ahead
    of it in the order: ``blocking_job`` names the first job the plan left
    waiting (which the plan may hold though it fits: its plan is over each
    cluster's CPUs and memory in all).
``priority``
    it fits now and is not started because of its place in the queue order:
    ``blocking_job`` names the head of the order, which blocks every later
    job (no backfilling), or which the pass's walk did not get past this job
    for (EASY with ``backfill_depth``: it would spare the reservation). Under
    "As recorded" it is held to its recorded start (no job named).

``user_limit`` and partitions: a site model has no per-user limits or
queues, so no site interval carries them.

How it is exact. Between two instants of the run nothing changes: the
machines' free CPUs and memory, the queue and the reservation are those
the last scheduling pass left. So a reason read after each pass holds at
every instant until the next one. :class:`SiteReasons` reads it then, but
only for the jobs whose reason can have changed: jobs are grouped by
memory per CPU and clusters they may use; per group three thresholds --
the most CPUs any of its clusters can give at that memory (it fits), the
same with the down machines up (``failure``) and on the other clusters
(``requirements``) -- are computed again only when one of those clusters
changed, and only the jobs whose CPU count lies between a threshold's old
and new value are read again (a cluster with fewer free CPUs than a
group's least demand is not asked for its memory). The jobs that fit are
read again when the head changed or its reservation loosened; under EASY
also when one of their clusters changed if they may use several or start
memory-elastic, and every pass while they would spare the reservation (a
job that would delay a reservation delays it later too, and a tighter
one). Only changes of reason are rows.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right

import numpy as np
import pandas as pd

from ..batch.pending import PRIORITY, REASONS, RESERVATION, empty_pending, pending_frame
from ..batch.simulate import WAITING
from ..core.observers import INSTANT
from ..elastic import penalty as penalties
from .machines import machine_givable
from .policy import SitePolicy

_CODE = {reason: code for code, reason in enumerate(REASONS)}
_JOB_BITS = 40
_LAST = (1 << _JOB_BITS) - 1   # above any job's index


def _key(procs: int, job: int) -> int:
    """A waiting job's place in its group: by CPUs, then index (one integer, so a job is found by bisection)."""
    return (procs << _JOB_BITS) | job


_RESOURCES, _FAILURE, _REQUIREMENTS = _CODE["resources"], _CODE["failure"], _CODE["requirements"]
_RESERVATION, _PRIORITY = _CODE[RESERVATION], _CODE[PRIORITY]


class _Group:
    """Waiting jobs with one memory per CPU (as a fit is tested) and one set of clusters they may use."""

    __slots__ = ("memory", "clusters", "others", "plain", "keys", "jobs", "fit", "mended", "elsewhere")

    def __init__(self, memory: float, clusters: tuple[int, ...], others: tuple[int, ...], plain: bool):
        self.memory = memory
        self.clusters = clusters
        self.others = others
        self.plain = plain   # one cluster, and starts are not memory-elastic: a fit there is with all its memory
        self.keys: list[int] = []   # its waiting jobs' CPUs and indices, as _key, sorted
        self.jobs: list[int] = []   # those jobs, in the same order
        # Thresholds as last computed: a job of this group asking p CPUs fits iff p <= fit; failing that, it would
        # with the down machines up iff p <= mended; it fits on another cluster iff p <= elsewhere.
        self.fit = self.mended = self.elsewhere = -1


class SiteReasons:
    """The reasons of one site run, read after every scheduling pass (see the module docstring).

    A job observer of the batch kernel (:class:`~sched_engine.batch.protocols.JobObserver`) and an observer of
    its instants (:meth:`after_instant`, subscribed by :meth:`bind`).
    """

    def __init__(self, policy):
        self.policy = policy
        # Ended intervals, five numbers each: job, from, to, reason code, blocking job (-1: none).
        self.rows = array("d")
        self.open: dict[int, tuple[float, int, int]] = {}          # waiting job -> (from, reason code, blocking)
        self.groups: dict[tuple[float, tuple[int, ...]], _Group] = {}
        self.group_of: dict[int, _Group] = {}
        self.active: dict[_Group, None] = {}   # the groups with waiting jobs, kept up to date (those read)
        self.new: list[int] = []          # queued since the last pass
        self.dirty: set[int] = set()      # clusters whose machines changed since the last pass
        self.read_for = (-1, None)        # (head, its reservation) for which the fitting jobs were last read
        self.spared: set[int] = set()     # EASY: fitting jobs that would spare the reservation (read every pass)

    def bind(self, sim) -> None:
        """Watch ``sim`` (a site run on the batch kernel, :func:`.simulate.site_simulation`), before it runs."""
        self.sim = sim
        self.status, self.procs, self.memory_per_cpu = sim.status, sim.procs, sim.memory_per_cpu
        self.estimate = sim.estimate   # as the policy reads it (an elastic start stretches only `planned`)
        policy = self.policy
        self.site = isinstance(policy, SitePolicy)   # the site's own policy, or the batch engine's "as recorded"
        elastic = self.site and policy.elastic["enabled"]
        self.low = policy.elastic["min_fraction"] if elastic else 1.0
        self.backfill = policy.order.backfill if self.site else "recorded"
        self.elastic = elastic
        self.per_cluster = self.backfill == "easy"   # a fitting job's reason depends on the clusters it fits on
        self.every_cluster = tuple(range(len(sim.clusters)))
        self.machine_changes = 0
        self.down_givable: dict[tuple[int, float], int] = {}   # CPUs the down machines would give, until one changes
        self.candidates = None   # the clusters each job may use: the policy's, known once the run started
        sim.subscribe(INSTANT, self.after_instant)

    # --- the kernel's job events ------------------------------------------------------------------

    def queued(self, job: int) -> None:
        self.new.append(job)   # grouped after the pass: the policy sets its clusters on arrival

    def left_queue(self, job: int) -> None:
        entry = self.open.pop(job, None)
        if entry is None:
            return   # left in the instant it arrived: it never waited
        now = self.sim.now
        if now > entry[0]:
            self.rows.extend((job, entry[0], now, entry[1], entry[2]))
        group = self.group_of.pop(job)
        at = bisect_left(group.keys, _key(self.procs[job], job))
        del group.keys[at]
        del group.jobs[at]
        if not group.jobs:
            del self.active[group]
        self.spared.discard(job)

    def started(self, job: int) -> None:
        self.dirty.add(self.sim.cluster_of[job])

    def finished(self, job: int) -> None:
        self.dirty.add(self.sim.cluster_of[job])

    def advance(self, time: float) -> None:
        """Nothing: reasons are read after each pass (:meth:`after_instant`)."""

    # --- after each pass --------------------------------------------------------------------------

    def after_instant(self, sim, now: float) -> None:
        """Read again the reasons that can have changed in this instant (module docstring)."""
        if self.candidates is None:
            self.candidates = self.policy.candidates if self.site else sim.candidates
        if len(sim.machine_changes) != self.machine_changes:
            self.machine_changes = len(sim.machine_changes)
            self.down_givable.clear()
            self.dirty.update(self.every_cluster)
        dirty, new, status = self.dirty, self.new, self.status
        read: set[int] = set()
        if new:
            for job in new:
                if status[job] == WAITING:
                    read.add(job)
                    self._enter(job, read)
            new.clear()
        if dirty:
            for group in self.active:   # its thresholds read every cluster (its own and the others)
                self._thresholds(group, read)
        head, reservation = self._head()
        if head != self.read_for[0] or not self._tightened(reservation):
            # The fitting jobs' reasons name the head; under EASY they depend on the reservation: read them all.
            for group in self.active:
                self._read_fitting(group, read)
        else:
            if dirty and self.per_cluster:
                # Which of its clusters a job fits on decides whether it spares the reservation (a change of its
                # fit on the group's best cluster is read through the thresholds), and so does its memory share.
                for group in self.active:
                    if (self.elastic or len(group.clusters) > 1) and not dirty.isdisjoint(group.clusters):
                        self._read_fitting(group, read)
            read.update(self.spared)   # sparing the reservation depends on the time (module docstring)
        self.read_for = (head, reservation)
        dirty.clear()
        if read:
            self._classify(read, now, head, reservation)

    @staticmethod
    def _read_fitting(group: _Group, read: set[int]) -> None:
        read.update(group.jobs[:bisect_right(group.keys, _key(group.fit, _LAST))])

    def _tightened(self, reservation) -> bool:
        """Whether ``reservation`` spares no job the one the fitting jobs were last read for did not: both None, or
        for the same cluster, by no later a shadow time, with no more CPUs and memory left over then. (A job that
        would delay a reservation delays a tighter one, now and later: see :meth:`_delays`.)"""
        before = self.read_for[1]
        if before is None or reservation is None:
            return before is reservation
        return (reservation[2] == before[2] and reservation[1] <= before[1] and reservation[3] <= before[3]
                and reservation[4] <= before[4])

    def _enter(self, job: int, read: set[int]) -> None:
        """Put a job that waits after its arrival's pass in its group; add to ``read`` the jobs to read again."""
        memory = self.memory_per_cpu[job]
        if memory > 0:
            memory *= self.low
        clusters = tuple(self.candidates[job])
        key = (memory, clusters)
        group = self.groups.get(key)
        if group is None:
            others = tuple(c for c in self.every_cluster if c not in clusters)
            group = self.groups[key] = _Group(memory, clusters, others, len(clusters) == 1 and not self.elastic)
        key = _key(self.procs[job], job)
        keys = group.keys
        # The thresholds stand for the group's jobs only (see _thresholds): computed again for a job asking fewer
        # CPUs than any before it, or for a group that was empty (not kept up to date then).
        least = keys[0] if keys else None
        at = bisect_left(keys, key)
        keys.insert(at, key)
        group.jobs.insert(at, job)
        self.group_of[job] = group
        if least is None or key < least:
            self._thresholds(group, read)
        self.active[group] = None

    def _mended(self, cluster: int, memory: float) -> int:
        """CPUs the cluster's down machines would give, were they up and idle, at ``memory`` MB per CPU."""
        key = (cluster, memory)
        total = self.down_givable.get(key)
        if total is None:
            state = self.sim.clusters[cluster]
            down = np.flatnonzero(~state.up)
            total = 0
            for machine in down.tolist():
                cpus = int(state.cpus[machine])
                total += cpus if memory <= 0 else machine_givable(cpus, float(state.memory[machine]), memory)
            self.down_givable[key] = total
        return total

    def _thresholds(self, group: _Group, read: set[int]) -> None:
        """Compute the group's thresholds again; add to ``read`` the jobs whose reason they may change."""
        memory, clusters = group.memory, self.sim.clusters
        # A cluster with fewer free CPUs than the group's least demand gives none of its jobs room: its free CPUs
        # stand for the CPUs it can give (both compare alike with every job's CPUs), and its memory is not read.
        least = group.keys[0] >> _JOB_BITS
        fit = mended = elsewhere = 0
        for c in group.clusters:
            state = clusters[c]
            if state.up_total < state.total:
                givable = state.givable_total(memory)
                mended = max(mended, givable + self._mended(c, memory))
            else:
                givable = state.free_total
                if givable >= least:
                    givable = state.givable_total(memory)
            if givable > fit:
                fit = givable
        if mended < fit:
            mended = fit
        for c in group.others:
            state = clusters[c]
            givable = state.free_total
            if givable >= least:
                givable = state.givable_total(memory)
            if givable > elsewhere:
                elsewhere = givable
        keys = group.keys
        for old, value in ((group.fit, fit), (group.mended, mended), (group.elsewhere, elsewhere)):
            if old != value and keys:
                low, high = (old, value) if old < value else (value, old)
                read.update(group.jobs[bisect_right(keys, _key(low, _LAST)):bisect_right(keys, _key(high, _LAST))])
        group.fit, group.mended, group.elsewhere = fit, mended, elsewhere

    def _head(self):
        """The job the last pass held every later one for, and (EASY) its reservation; -1 and None if none."""
        policy, status = self.policy, self.status
        if self.backfill == "easy":
            reservation = policy.reservation
            if reservation is not None and status[reservation[0]] == WAITING:
                return reservation[0], reservation
            return -1, None
        head = getattr(policy, "head", None)
        return (head, None) if head is not None and status[head] == WAITING else (-1, None)

    def _classify(self, read: set[int], now: float, head: int, reservation) -> None:
        """Each job's reason now; a row for each reason that ended (the loop holds its reads in locals)."""
        procs, group_of, opened, rows, spared = self.procs, self.group_of, self.open, self.rows, self.spared
        estimate, memory_per_cpu = self.estimate, self.memory_per_cpu
        cons = self.backfill == "cons"
        if reservation is not None:
            _, shadow, reserved, extra, extra_memory = reservation
        for job in read:
            need = procs[job]
            group = group_of[job]
            blocking = -1
            if need <= group.fit:
                if head < 0 or head == job:
                    code = _PRIORITY
                elif reservation is not None:
                    blocking = head
                    if group.plain:
                        # It fits on its one cluster with all its memory: EASY's rule (_delays) for that cluster.
                        delays = (group.clusters[0] == reserved and now + estimate[job] > shadow
                                  and (need > extra or need * memory_per_cpu[job] > extra_memory + 1e-9))
                    else:
                        delays = self._delays(job, now, reservation)
                    if delays:
                        code = _RESERVATION
                    else:
                        code = _PRIORITY
                        spared.add(job)
                else:
                    code = _RESERVATION if cons else _PRIORITY
                    blocking = head
            elif need <= group.mended:
                code = _FAILURE
            elif need <= group.elsewhere:
                code = _REQUIREMENTS
            else:
                code = _RESOURCES
            entry = opened.get(job)
            if entry is not None:
                if entry[1] == code and entry[2] == blocking:
                    continue
                if entry[1] == _PRIORITY and code != _PRIORITY:
                    spared.discard(job)
                if now > entry[0]:
                    rows.extend((job, entry[0], now, entry[1], entry[2]))
            opened[job] = (now, code, blocking)

    def _delays(self, job: int, now: float, reservation) -> bool:
        """Whether starting ``job`` now would delay the reserved job: EASY's rule (:func:`.backfill.backfill_easy`,
        its walk's test for one job) finds no cluster where it fits now and spares the reservation."""
        _, shadow, reserved, extra, extra_memory = reservation
        policy, clusters = self.policy, self.sim.clusters
        need, memory = self.procs[job], self.memory_per_cpu[job]
        elastic = policy.elastic["enabled"]
        for c in self.candidates[job]:
            fraction = 1.0
            if not clusters[c].fits(need, memory):
                if not (elastic and memory > 0):
                    continue
                fraction = clusters[c].largest_memory_fraction(need, memory, self.low)
                if fraction is None:
                    continue
            estimate = policy.estimate[job]
            run = policy.run_time[job]
            if fraction < 1.0 and run > 0:
                estimate *= penalties.runtime(policy.elastic["penalty"], fraction, run) / run
            if c == reserved and now + estimate > shadow:
                if need > extra or need * memory * fraction > extra_memory + 1e-9:
                    continue
            return False
        return True

    # --- the frame --------------------------------------------------------------------------------

    def frame(self, job_ids: pd.Series) -> pd.DataFrame:
        """The run's ``pending`` frame (the batch engine's columns; intervals still open end at the run's end)."""
        end = self.sim.now
        still = [(job, since, end, code, blocking) for job, (since, code, blocking) in self.open.items()
                 if end > since]
        table = np.concatenate([np.frombuffer(self.rows, dtype=float), np.array(still, dtype=float).ravel()])
        if not len(table):
            return empty_pending()
        table = table.reshape(-1, 5)
        return pending_frame(table[np.lexsort((table[:, 1], table[:, 0]))], job_ids)   # by job, then time
