"""Why pending: for every job that waited, why, over ``[submit, start)``.

A run records, for each waiting job, intervals that tile the time from its
submission to its start (or to its cancellation) exactly, each with one
reason of this vocabulary:

``resources``
    not enough free CPUs for it in any cluster it may use (the oldest
    waiting job, or any job a backfilling policy could not fit).
``reservation``
    it fits now, but starting it would delay a reserved job (EASY,
    Conservative, Local Search): ``blocking_job`` names the oldest waiting
    job, whose reservation comes first.
``priority``
    the policy starts an earlier job first (FCFS, FCFS-LB start in arrival
    order only): ``blocking_job`` names the waiting job just before it.
``failure``
    it does not fit now, but would if the machines that are down in one of
    its clusters were up.
``requirements``
    it does not fit in any cluster it may use (its requirements restrict
    them), but another cluster has room for it now.
``user_limit``
    its user already runs as many jobs, or holds as many CPUs, as the
    model's ``user_limits`` allow (:mod:`.queues`): the policy passes over
    it until one of the user's jobs ends.

With queue ranks (:mod:`.queues`) "oldest waiting job" and "the job just
before it" read in queue order (rank, then arrival), and with user limits
they skip the jobs their user's limit holds; the oldest waiting job is the
one the policy reserves for or starts next.

How reasons are found: the run records each waiting job's *place* -- the
oldest waiting job, behind the oldest waiting job's reservation, behind the
job just before it (in-order policies), or held by its user's limit -- and
when it changes: after the pass of the instant it arrives, and after every
pass in which the job its place names left the queue or stopped being the
oldest waiting job, in which it became or stopped being the oldest waiting
job, in which one of its user's jobs started or ended (with user limits),
and in which a job arrived ahead of others in queue order. Whether it fits
is then read from the schedule itself (:mod:`.pending_exact`): a place's
interval is split at every instant the free CPUs of the job's clusters rise
to or fall below what it needs, the pieces where it does not fit named
``resources``, ``failure`` or ``requirements``. So each reason holds at
every instant of its interval, and only reason *changes* are rows.

The frame: ``job_id, from_time, to_time, reason, blocking_job`` (empty when
the reason names no job), one row per interval, sorted by job then time.
The text columns are categorical (the run's job ids, the reasons): a row
takes 25 bytes, where a full log's reasons run to tens of millions of rows.
"""

from __future__ import annotations

from itertools import chain
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from .pending_exact import exact_rows
from .waiting import UserIndex

RESOURCES, RESERVATION, PRIORITY, FAILURE, REQUIREMENTS, USER_LIMIT = (
    "resources", "reservation", "priority", "failure", "requirements", "user_limit")
REASONS = (RESOURCES, RESERVATION, PRIORITY, FAILURE, REQUIREMENTS, USER_LIMIT)
COLUMNS = ("job_id", "from_time", "to_time", "reason", "blocking_job")
_CODE = {reason: code for code, reason in enumerate(REASONS)}
REASON_DTYPE = pd.CategoricalDtype(pd.Index(REASONS, dtype="str"))
_RESERVATION, _PRIORITY, _USER_LIMIT = (_CODE[r] for r in (RESERVATION, PRIORITY, USER_LIMIT))
#: The blocking job of a recorded place "behind the oldest waiting job's reservation": whoever is oldest
#: at each instant (the recorder's ``heads``), so a new oldest job rewrites no waiting job's place.
BEHIND_HEAD = -2


class PendingRecorder:
    """Reason intervals of one event-driven run (the engine feeds it; see the module docstring).

    The engine appends to ``arrived`` the jobs that arrived at an instant,
    to ``left`` the jobs it started or cancelled, adds to ``users_changed`` the users
    (with user limits) whose running jobs changed, and calls
    :meth:`after_pass` once the policy's pass of the instant is applied.
    """

    def __init__(self, sim, in_order: bool, waiting: int):
        self.sim = sim
        self.waiting = waiting
        self.in_order = in_order
        self.arrived: list[int] = []
        self.left: list[int] = []
        self.users_changed: set[int] = set()
        self.by_user: dict[int, list[int]] = {}   # with user limits: user -> jobs that waited (some left since)
        self.reasoned: dict[int, set[int]] = {}   # with user limits: user -> waiting jobs not held by the limit
        self.last_rank = 0                # queue rank of the last job in ``order``
        self.order: list[int] = []        # every queued job, in queue order
        self.index_of: dict[int, int] = {}
        self.first = 0                    # position in ``order`` of the oldest waiting job
        self.head = -1
        # (time, oldest waiting job or -1) at each pass it changed: a place "behind the oldest waiting job's
        # reservation" is recorded as BEHIND_HEAD and named from this history (pending_exact).
        self.heads: list[tuple[float, int]] = []
        self.open: dict[int, tuple[float, int, int]] = {}   # waiting job -> (from, reason code, blocking job)
        self.dependents: dict[int, list[int]] = {}          # job -> waiting jobs whose reason names it
        self.rows: list[tuple[int, float, float, int, int]] = []
        # With user limits: CPUs (infinite once the job left) and user per position of ``order``, and the
        # per-user index that finds the first job a limit lets start without reading the held ones.
        self.users = None if sim.limits is None else UserIndex(sim.limits)
        self.o_procs = np.empty(1024)
        self.o_user = np.empty(1024, dtype=np.int64)

    def after_pass(self, now: float) -> None:
        if not self.left and not self.arrived and not self.users_changed:
            return   # nobody came or went: no place can change (see the module docstring)
        status, waiting, rank, limits = self.sim.status, self.waiting, self.sim.rank, self.sim.limits
        recheck: list[int] = []
        opened, rows, dependents = self.open, self.rows, self.dependents
        for job in self.left:
            if limits is not None and job in self.index_of:
                self.o_procs[self.index_of[job]] = np.inf
                self.reasoned.get(limits.user[job], set()).discard(job)
            entry = opened.pop(job, None)
            if entry is not None and now > entry[0]:
                rows.append((job, entry[0], now, entry[1], entry[2]))
            named = dependents.pop(job, None)
            if named:
                recheck.extend(named)
        self.left.clear()
        resort = False
        if self.in_order or rank is not None or limits is not None:
            for job in self.arrived:
                self.index_of[job] = len(self.order)   # positions serve predecessor(), resort() and the index
                self.order.append(job)
                if rank is not None:
                    resort |= rank[job] < self.last_rank
                    self.last_rank = max(self.last_rank, rank[job])
                if limits is not None:
                    self.by_user.setdefault(limits.user[job], []).append(job)
                    self._index(job, status[job] == waiting)
        else:
            self.order.extend(self.arrived)
        recheck.extend(self.arrived)
        self.arrived.clear()
        if resort:
            recheck.extend(self.resort())
        for user in self.users_changed:
            recheck.extend(self.changed_user_jobs(user))
        self.users_changed.clear()
        order, position = self.order, self.first
        while position < len(order) and status[order[position]] != waiting:
            position += 1
        self.first = position
        if limits is not None:
            position = self.first_allowed(position)
        head = order[position] if position < len(order) else -1
        if head >= 0 and head != self.head:
            recheck.append(head)
        if head != self.head and self.head >= 0 and status[self.head] == waiting:
            recheck.append(self.head)   # no longer the oldest: ahead of it came a job, or its user's limit held it
            recheck.extend(self.dependents.pop(self.head, ()))
        if head != self.head:
            self.heads.append((now, head))
        self.head = head
        # The common case inline (a backfilling policy, no limits: behind the head's reservation, whoever it is).
        plain = not self.in_order and limits is None
        for job in recheck:
            if status[job] != waiting:
                continue
            if plain and job != head:
                code, blocking = _RESERVATION, BEHIND_HEAD
            else:
                code, blocking = self.classify(job, head)
            entry = opened.get(job)
            if entry is not None:
                if entry[1] == code and entry[2] == blocking:
                    continue
                if now > entry[0]:
                    rows.append((job, entry[0], now, entry[1], entry[2]))
            opened[job] = (now, code, blocking)
            if limits is not None:
                if code == _USER_LIMIT:
                    self.reasoned.get(limits.user[job], set()).discard(job)
                else:
                    self.reasoned.setdefault(limits.user[job], set()).add(job)
            if blocking >= 0:
                dependents.setdefault(blocking, []).append(job)

    def resort(self) -> list[int]:
        """Put the waiting jobs in queue order again (a job arrived ahead of others); returns them."""
        status, waiting, rank = self.sim.status, self.waiting, self.sim.rank
        jobs = sorted((job for job in self.order[self.first:] if status[job] == waiting),
                      key=lambda job: (rank[job], self.index_of[job]))
        self.order = jobs
        self.index_of = {job: index for index, job in enumerate(jobs)}
        self.first = 0
        if self.users is not None:
            users = self.sim.limits.user
            self.o_procs = np.array([self.sim.procs[job] for job in jobs] + [0.0] * 1024, dtype=float)
            self.o_user = np.array([users[job] for job in jobs] + [0] * 1024, dtype=np.int64)
            self.users.rebuild(self.o_user, len(jobs))
        return jobs

    def changed_user_jobs(self, user: int) -> list[int]:
        """The waiting jobs to look at again after one of ``user``'s jobs started or ended (user limits).

        While the limit holds every job of the user, those whose reason is
        ``user_limit`` already would get it again: only the others are
        returned (a user at the limit with thousands waiting costs nothing
        per start and end); otherwise all of them.
        """
        if self.sim.limits.held[user]:
            return list(self.reasoned.get(user, ()))
        jobs = self.by_user.get(user)
        if not jobs:
            return []
        status, waiting = self.sim.status, self.waiting
        jobs[:] = [job for job in jobs if status[job] == waiting]
        return jobs

    def first_allowed(self, first: int) -> int:
        """With user limits: the position in ``order`` of the first waiting job its user's limit lets start
        (at or after ``first``, the oldest waiting one), found through the per-user index."""
        del first   # every job before it left: the index never returns one of them
        return self.users.first(self.o_procs, self.o_user, len(self.order))

    def _index(self, job: int, waits: bool) -> None:
        """Enter the job just appended to ``order`` in the per-user index (as gone if it left already)."""
        position = len(self.order) - 1
        if position == len(self.o_procs):
            self.o_procs = np.resize(self.o_procs, 2 * position)
            self.o_user = np.resize(self.o_user, 2 * position)
        user = self.sim.limits.user[job]
        self.o_procs[position] = self.sim.procs[job] if waits else np.inf
        self.o_user[position] = user
        self.users.add(position, user, self.o_procs)

    def classify(self, job: int, head: int) -> tuple[int, int]:
        """``(place code, blocking job or -1)`` of a waiting job now (whether it fits: :mod:`.pending_exact`)."""
        sim = self.sim
        if sim.limits is not None and sim.limits.blocked(job, sim.procs[job]):
            return _USER_LIMIT, -1
        if job == head:
            return _PRIORITY, -1
        if self.in_order:
            return _PRIORITY, self.predecessor(job)
        return _RESERVATION, BEHIND_HEAD

    def predecessor(self, job: int) -> int:
        """The waiting job just before ``job`` in queue order (not held by its user's limit)."""
        status, waiting, order, limits = self.sim.status, self.waiting, self.order, self.sim.limits
        position = self.index_of[job] - 1
        while position >= self.first and (status[order[position]] != waiting or (
                limits is not None and limits.blocked(order[position], self.sim.procs[order[position]]))):
            position -= 1
        return order[position] if position >= self.first else -1


class ReasonColumns(NamedTuple):
    """A run's exact reasons, column by column, sorted by job then time: 25 bytes a row, where a log's
    reasons run to tens of millions of rows (full RICC under EASY: 23 M)."""
    job: np.ndarray        # int32: the waiting job's index
    begin: np.ndarray      # float64: from
    end: np.ndarray        # float64: to
    code: np.ndarray       # int8: the reason's index in REASONS
    blocking: np.ndarray   # int32: the blocking job's index, -1 for none

    @classmethod
    def of_table(cls, table: np.ndarray) -> "ReasonColumns":
        """From a ``(job, from, to, code, blocking)`` float table."""
        table = np.asarray(table, dtype=float).reshape(-1, 5)
        return cls(table[:, 0].astype(np.int32), np.ascontiguousarray(table[:, 1]), np.ascontiguousarray(table[:, 2]),
                   table[:, 3].astype(np.int8), table[:, 4].astype(np.int32))

    def table(self) -> np.ndarray:
        """The ``(job, from, to, code, blocking)`` float table."""
        return np.column_stack([np.asarray(column, dtype=float) for column in self])

    def equals(self, other: "ReasonColumns") -> bool:
        return all(np.array_equal(a, b) for a, b in zip(self, other))


def exact_table(sim) -> ReasonColumns:
    """A finished run's reasons: its recorded places split by whether each job fit (:mod:`.pending_exact`)."""
    if getattr(sim, "exact_reasons", None) is not None:
        return sim.exact_reasons(sim)
    heads = sim.pending_heads if sim.pending_heads is not None else []
    return ReasonColumns.of_table(exact_rows(sim.pending_rows, sim, _CODE, heads, BEHIND_HEAD))


def pending_frame(rows, job_ids: pd.Series) -> pd.DataFrame:
    """The ``pending`` frame from ``(job, from, to, reason code, blocking job or -1)`` rows (job indices).

    ``rows``: :class:`ReasonColumns` or a table of such rows sorted by job, then time (:func:`exact_table`'s),
    or a list of such tuples in any order. ``job_id``, ``reason`` and ``blocking_job`` are categorical over
    the run's job ids (plus ``""``, no job) and :data:`REASONS`: codes, never tens of millions of strings.
    Job ids that are not unique (nothing to code them by) give text columns. The frame holds ``rows``' own
    arrays: ``rows`` is the frame's from then on.
    """
    if isinstance(rows, np.ndarray):
        rows = ReasonColumns.of_table(rows)
    elif not isinstance(rows, ReasonColumns):
        table = np.fromiter(chain.from_iterable(rows), dtype=float, count=5 * len(rows)).reshape(-1, 5)
        rows = ReasonColumns.of_table(table[np.lexsort((table[:, 1], table[:, 0]))])
    names = pd.Index(job_ids.astype("string").fillna("").tolist() + [""], dtype="str")   # the last: no job
    blocking = rows.blocking   # recoded in place (no job: the last name), not copied: tens of millions of rows
    blocking[blocking < 0] = len(names) - 1
    if names.is_unique:
        jobs = pd.CategoricalDtype(names)
        return pd.DataFrame(copy=False, data={   # the columns' own arrays, not copies
            "job_id": pd.Categorical.from_codes(rows.job, dtype=jobs),
            "from_time": rows.begin,
            "to_time": rows.end,
            "reason": pd.Categorical.from_codes(rows.code, dtype=REASON_DTYPE),
            "blocking_job": pd.Categorical.from_codes(blocking, dtype=jobs),
        })
    text = pa.array(names.tolist(), type=pa.large_string())

    def strings(values: pa.Array, at: np.ndarray) -> pd.Series:
        return pd.Series(pd.array(values.take(pa.array(at)), dtype="string"))

    return pd.DataFrame({
        "job_id": strings(text, rows.job),
        "from_time": rows.begin,
        "to_time": rows.end,
        "reason": strings(pa.array(REASONS, type=pa.large_string()), rows.code),
        "blocking_job": strings(text, blocking),
    })


def empty_pending() -> pd.DataFrame:
    return pending_frame([], pd.Series([], dtype="string"))


def job_positions(job_ids: pd.Series, of: pd.Series) -> np.ndarray:
    """Each value of ``of`` (a ``pending`` frame's ``job_id`` column) as its position in ``job_ids``, -1 where
    absent: through the categories once when ``of`` is categorical (no string per row)."""
    index = pd.Index(job_ids.astype(str))
    if isinstance(of.dtype, pd.CategoricalDtype):
        at = np.append(index.get_indexer(of.cat.categories.astype(str)), -1)   # code -1 (missing): absent
        return at[of.cat.codes.to_numpy()]
    return index.get_indexer(of.astype(str))
