"""What a log says about its site, read before any run: the settings the baseline steps add.

* the log's queues as the model's ``queues`` field: the queues the header
  calls interactive first, then the others by their recorded mean wait,
  shortest first; the queues it calls best-effort or preemptible
  preemptible and last (SWF ``; Queue:`` lines,
  :func:`~.audit_workload.described_queues`); a log naming one queue or
  none has nothing to add;
* each user's own limits, as the model's ``user_limits.users``
  (:mod:`sched_engine.batch.queues`): the most running jobs and the most
  CPUs that user had at once in the recorded schedule
  (:func:`~.audit_schedule.user_peaks`). A user the recorded schedule never
  shows running gets no limit of its own;
* whether the log records requested times (the estimates step).

The down times are found on the run's own clusters, once the capacity is
known (:mod:`.baseline_downtime`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .audit_schedule import recorded_schedule, user_peaks
from .audit_workload import described_queues


@dataclass(frozen=True)
class Findings:
    """The steps' settings (module docstring)."""

    queues: dict | None          # the model's ``queues`` field, None: nothing to add
    queues_text: str
    running_jobs: int | None     # the most running jobs any one user had at once, None: no recorded schedule
    running_jobs_user: str
    has_estimates: bool
    users: dict = field(default_factory=dict)   # user -> {"running_jobs": n, "cpus": c}, the user's own peaks

    def limits_text(self) -> str:
        """What the per-user limits step sets, in a few words."""
        if not self.users:
            return "the log records no waits: no running jobs to count"
        jobs = np.array([limit["running_jobs"] for limit in self.users.values()])
        return (f"each of {len(self.users):,} users at most the running jobs and CPUs it had at once (median "
                f"{np.median(jobs):,.0f} jobs; the most, {self.running_jobs:,}, user {self.running_jobs_user})")


def queue_setting(jobs: pd.DataFrame, header_lines) -> tuple[dict | None, str]:
    """The log's queues as the model's ``queues`` field (see the module docstring), and what it says."""
    names = jobs["queue"].fillna("").astype(str).str.strip() if "queue" in jobs.columns else pd.Series("", index=jobs.index)
    present = sorted(set(names) - {""})
    described = described_queues(header_lines)
    kinds = {queue: kind for queue, _, kind in described.itertuples(index=False) if queue}
    best_effort = [q for q in present if "best-effort" in kinds.get(q, "") or "preemptible" in kinds.get(q, "")]
    if len(present) < 2 and not best_effort:
        return None, f"the log names {'one queue' if present else 'no queue'}: nothing to order"
    waits = pd.to_numeric(jobs["recorded_wait"], errors="coerce") if "recorded_wait" in jobs.columns else \
        pd.Series(np.nan, index=jobs.index)
    means = waits.where(waits >= 0).groupby(names).mean()
    interactive = [q for q in present if "interactive" in kinds.get(q, "") and q not in best_effort]
    others = sorted((q for q in present if q not in best_effort and q not in interactive),
                    key=lambda q: (np.isnan(means.get(q, np.nan)), means.get(q, np.nan), q))
    priority = interactive + others
    order = "interactive first, then by recorded mean wait" if interactive else "by recorded mean wait"
    text = f"queues in order {' > '.join(priority)} ({order}, shortest first)"
    if best_effort:
        text += "; best-effort (preemptible, last): " + ", ".join(best_effort)
    return {"priority": priority, "best_effort": best_effort}, text


def find_settings(jobs: pd.DataFrame, header_lines=()) -> Findings:
    """The steps' settings from a workload's jobs (in run order, cut as the run cuts them) and its header lines."""
    queues, queues_text = queue_setting(jobs, header_lines)
    schedule, _ = recorded_schedule(jobs)
    peaks = user_peaks(schedule)
    running, user = (int(peaks["running_jobs"].iloc[0]), str(peaks["user"].iloc[0])) if len(peaks) else (None, "")
    users = {str(name): {"running_jobs": int(count), "cpus": int(np.ceil(cpus))}
             for name, count, cpus in peaks.itertuples(index=False) if count >= 1}
    requested = jobs["requested_time"].to_numpy(float) if "requested_time" in jobs.columns else np.zeros(0)
    return Findings(queues, queues_text, running, user, bool((requested > 0).any()), users)
