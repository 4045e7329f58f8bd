"""Queues with a priority order, best-effort (preemptible) queues, and per-user limits on running jobs.

Two optional model fields; absent, the engine runs as before (and the
model's content hash is unchanged)::

    "queues": {"priority": ["2", "1"], "best_effort": ["besteffort"]},
    "user_limits": {"running_jobs": 4, "cpus": 64,
                    "users": {"alice": {"running_jobs": 2}, "bob": {"cpus": 512}}}

``queues.priority`` lists the log's queue names (the SWF queue field,
GWF ``QueueNumber``, a CSV ``queue`` column), highest priority first, or is
``"recorded_wait"``: the log's queues in the order of their recorded mean
wait, shortest first (the ranking a site's observed waits suggest, for
logs whose scheduler configuration is unknown). Every policy orders its
waiting jobs by queue rank, then by arrival: a job of a higher queue is
ahead of every job of a lower one, whenever it arrived. Queues not listed
rank below the listed ones (equal among themselves).

``queues.best_effort`` names preemptible queues (OAR's ``besteffort``).
They rank below every other queue. When the first waiting job in queue
order that is not best-effort does not fit now on any of its clusters, but
would on one of them once some running best-effort jobs there were gone,
the policy kills those jobs (the youngest first, on the first cluster in
the job's preference order where that suffices) and starts the job at once
(:func:`victims`). A preempted job ends with status ``killed``, reason
``preempted``, and is **not** resubmitted: its work is lost, as when a
machine fails (Klusáček & Rudová §2.2), and the summary counts it in
``preempted``. Queue-ordered policies (FCFS, FCFS-LB, EASY) preempt;
Conservative backfilling and Local Search order by queue rank but plan
every job ahead and refuse best-effort queues.

``user_limits``: at most ``running_jobs`` running jobs and at most
``cpus`` CPUs held at once per user (either may be left out). A job whose
start would break its user's limit is not eligible: the policy passes over
it as if it were not in the queue (it neither blocks later jobs nor gets a
reservation), as batch schedulers skip jobs held by an account limit; it
waits with the pending reason ``user_limit``. A job asking more CPUs than
``cpus`` is cancelled on arrival. ``users`` gives some users limits of
their own (a site's per-account limits, or the most each user had at once
in a log, :mod:`sched_engine.analysis.baseline_steps`): a user's own
``running_jobs`` or ``cpus`` replaces the one for all (a user's own
``cpus`` may not be above it), and a user's own ``cpus`` is raised to that
user's largest job, so that a limit of one's own holds a job back but
never for ever. Queue-ordered policies only, as above.
Cost: a pass finds the first job a limit lets start through a per-user
index of the waiting jobs (:class:`~sched_engine.batch.waiting.UserIndex`:
each user's positions, and a heap of the first position of every user not
at their limit), without reading the jobs of users at their limit; EASY's
backfill scan passes over those jobs inside its vectorised size-bucket
search. ``bench/user_limits.py`` measures it on RICC (CPU time with a limit
against the same run without one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..core import validate
from ..core.errors import ScenarioError

BY_RECORDED_WAIT = "recorded_wait"
PREEMPTED = "preempted"
OVER_USER_CPUS = "asks more CPUs than its user may hold"


def normalize_queues(value: Any) -> dict | None:
    """The canonical ``queues`` field (None: no queue order and no best-effort queue)."""
    if value is None:
        return None
    data = validate.mapping(value, "queues", ("priority", "best_effort"))
    priority = data.get("priority", [])
    if priority != BY_RECORDED_WAIT:
        if not isinstance(priority, list) or not all(isinstance(q, (str, int)) for q in priority):
            raise ScenarioError("queues.priority", f"must be a list of queue names, highest first, or "
                                                   f"{BY_RECORDED_WAIT!r}")
        priority = validate.distinct([str(q).strip() for q in priority], "queues.priority")
    best_effort = data.get("best_effort", [])
    if not isinstance(best_effort, list) or not all(isinstance(q, (str, int)) for q in best_effort):
        raise ScenarioError("queues.best_effort", "must be a list of queue names")
    best_effort = validate.distinct([str(q).strip() for q in best_effort], "queues.best_effort")
    if isinstance(priority, list):
        both = [q for q in priority if q in best_effort]
        if both:
            raise ScenarioError("queues.priority", f"queue {both[0]!r} is also best-effort (best-effort queues "
                                                   "always rank last)")
    if not priority and not best_effort:
        return None
    return {"priority": priority, "best_effort": best_effort}


def normalize_user_limits(value: Any) -> dict | None:
    """The canonical ``user_limits`` field (None: no limit)."""
    if value is None:
        return None
    data = validate.mapping(value, "user_limits", ("running_jobs", "cpus", "users"))
    limits: dict = _limits(data, "user_limits")
    users = data.get("users")
    if users is not None:
        if not isinstance(users, Mapping):
            raise ScenarioError("user_limits.users", "must be an object: a user's name -> its own limits")
        own = {}
        for name in sorted(users, key=str):
            field = f"user_limits.users.{name}"
            entry = _limits(validate.mapping(users[name], field, ("running_jobs", "cpus")), field)
            if entry.get("cpus", 0) > limits.get("cpus", float("inf")):
                raise ScenarioError(f"{field}.cpus", f"{entry['cpus']} is above the limit for all "
                                                     f"({limits['cpus']} CPUs): no user holds more")
            if entry:
                own[str(name)] = entry
        if own:
            limits["users"] = own
    return limits or None


def _limits(data: Mapping, field: str) -> dict:
    return {name: validate.whole(data[name], f"{field}.{name}", minimum=1)
            for name in ("running_jobs", "cpus") if data.get(name) is not None}


def queue_ranks(queues: pd.Series, recorded_wait: pd.Series, setting: Mapping[str, Any]) -> np.ndarray:
    """Each job's queue rank (0 = highest; see the module docstring)."""
    names = queues.fillna("").astype(str).str.strip()
    priority = setting["priority"]
    if priority == BY_RECORDED_WAIT:
        waits = pd.to_numeric(recorded_wait, errors="coerce")
        known = waits.where(waits >= 0)
        means = known.groupby(names).mean().dropna()
        # Shortest recorded mean wait first; ties by name so the order never depends on the log's row order.
        priority = [name for name, _ in sorted(means.items(), key=lambda item: (item[1], item[0]))
                    if name not in setting["best_effort"]]
    rank = {name: index for index, name in enumerate(priority)}
    unlisted, best_effort = len(priority), len(priority) + 1
    rank.update({name: best_effort for name in setting["best_effort"]})
    return names.map(lambda name: rank.get(name, unlisted)).to_numpy(dtype=np.int64)


@dataclass
class QueueInputs:
    """What the simulation needs of the two fields, per job (None where the field is absent)."""

    rank: np.ndarray | None = None          # queue rank per job, 0 = highest
    best_effort: np.ndarray | None = None   # bool per job
    limits: "UserLimits | None" = None


def queue_inputs(model: Mapping[str, Any], jobs: pd.DataFrame) -> QueueInputs:
    """Per-job arrays of a normalised model's ``queues`` and ``user_limits`` (its jobs in run order)."""
    inputs = QueueInputs()
    setting = model.get("queues")
    if setting:
        queues = jobs["queue"] if "queue" in jobs.columns else pd.Series("", index=jobs.index)
        recorded = jobs["recorded_wait"] if "recorded_wait" in jobs.columns else pd.Series(np.nan, index=jobs.index)
        inputs.rank = queue_ranks(queues, recorded, setting)
        if setting["best_effort"]:
            inputs.best_effort = queues.fillna("").astype(str).str.strip().isin(setting["best_effort"]).to_numpy()
    limits = model.get("user_limits")
    if limits:
        codes, names = pd.factorize(jobs["user"].astype(str), use_na_sentinel=False)
        own = limits.get("users", {})
        job_caps = cpu_caps = None
        if own:
            largest = np.zeros(len(names))
            np.maximum.at(largest, codes, jobs["procs"].to_numpy(float))
            job_caps = [own.get(name, {}).get("running_jobs") for name in names]
            cpu_caps = [max(own[name]["cpus"], int(largest[code])) if "cpus" in own.get(name, {}) else None
                        for code, name in enumerate(names)]
        inputs.limits = UserLimits(codes, limits.get("running_jobs"), limits.get("cpus"), job_caps, cpu_caps)
    return inputs


class UserLimits:
    """Per-user running jobs and CPUs held, against the limits (the simulation updates them).

    Beside the counts, what a queue policy's per-user index reads
    (:class:`~sched_engine.batch.waiting.UserIndex`): ``held[user]`` (at the
    running-jobs limit, or no CPU left under the CPU limit: no job of the
    user may start now), ``room[user]`` (CPUs the user may still take;
    infinite without a CPU limit) and ``releases`` (every user who stopped
    being held, in order: an append-only log each index reads from its own
    place, the policy's and the pending-reasons recorder's alike). A job may start iff its user is not held
    and it asks at most ``room`` CPUs -- exactly when :meth:`blocked` is false,
    since every job asks at least one CPU.

    ``max_jobs`` and ``max_cpus`` are the limits for all (infinite where
    absent; the simulation cancels a job asking more than ``max_cpus`` on
    arrival); ``job_caps`` and ``cpu_caps``, one entry per user code (None:
    the limit for all), a user's own limits; ``job_cap`` and ``cpu_cap`` are
    the limits in force for each user.
    """

    __slots__ = ("user", "max_jobs", "max_cpus", "job_cap", "cpu_cap", "jobs", "cpus", "held", "room", "releases")

    def __init__(self, user: np.ndarray, max_jobs: int | None, max_cpus: int | None,
                 job_caps: list | None = None, cpu_caps: list | None = None):
        self.user = user.tolist()
        users = int(user.max()) + 1 if len(user) else 0
        self.max_jobs = max_jobs if max_jobs is not None else float("inf")
        self.max_cpus = max_cpus if max_cpus is not None else float("inf")
        self.job_cap = [self.max_jobs if cap is None else cap for cap in (job_caps or [None] * users)]
        self.cpu_cap = [self.max_cpus if cap is None else cap for cap in (cpu_caps or [None] * users)]
        self.jobs = [0] * users
        self.cpus = [0] * users
        self.held = np.zeros(users, dtype=bool)
        self.room = np.array(self.cpu_cap, dtype=float)
        self.releases: list[int] = []

    def blocked(self, job: int, procs: int) -> bool:
        """Whether starting ``job`` (``procs`` CPUs) now would break its user's limit."""
        user = self.user[job]
        return self.jobs[user] >= self.job_cap[user] or self.cpus[user] + procs > self.cpu_cap[user]

    def started(self, job: int, procs: int) -> None:
        user = self.user[job]
        self.jobs[user] += 1
        self.cpus[user] += procs
        self.room[user] -= procs
        if self.jobs[user] >= self.job_cap[user] or self.room[user] < 1:
            self.held[user] = True

    def ended(self, job: int, procs: int) -> None:
        user = self.user[job]
        self.jobs[user] -= 1
        self.cpus[user] -= procs
        self.room[user] += procs
        if self.held[user] and self.jobs[user] < self.job_cap[user] and self.room[user] >= 1:
            self.held[user] = False
            self.releases.append(user)


def victims(sim, job: int) -> tuple[int, list[int]] | None:
    """Best-effort jobs to kill so that ``job`` starts now: ``(cluster, jobs)``, or None if none suffice.

    The first cluster in ``job``'s preference order where its free CPUs and
    those of its running best-effort jobs together hold it; there, the
    youngest best-effort jobs (latest start first) until they do.
    """
    need, clusters, best_effort = sim.procs[job], sim.clusters, sim.best_effort
    for c in sim.candidates[job]:
        cluster = clusters[c]
        free = cluster.free_total
        if free + sim.best_effort_cpus[c] < need:
            continue
        running = sorted((j for _, j in cluster.running if best_effort[j]),
                         key=lambda j: (-sim.start_time[j], -j))
        chosen = []
        for other in running:
            chosen.append(other)
            free += sim.procs[other]
            if free >= need:
                return c, chosen
    return None
