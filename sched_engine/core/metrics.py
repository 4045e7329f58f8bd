"""The one definition of each metric the engines share, as pure functions of the ``jobs`` frame.

Columns read: ``submit_time`` (s), ``start_time`` (b), ``end_time`` (e),
``status``, and for the slowdowns and utilisation ``run_time`` (r) and
``procs``. Which jobs count is the caller's choice, made once per engine
and said in its summary's docstring: pass the rows that count
(:func:`with_status`), e.g. batch objectives count completed jobs only
(Klusáček & Rudová §2.3), elasticity's runtime finished jobs (Iorgulescu et
al. §5.1), network waits placed applications. A mean over no rows is NaN.

References: Feitelson, Rudolph, Schwiegelshohn, Sevcik & Wong, "Theory and
practice in parallel job scheduling" (JSSPP 1997) §5 for response time,
slowdown and bounded slowdown; Klusáček & Rudová, "The importance of
complete data sets for job scheduling simulations" (JSSPP 2010) §2.3 for
the batch objectives, makespan and utilisation.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

BOUNDED_SLOWDOWN_TAU = 10.0
"""τ of the bounded slowdown, seconds (Feitelson et al. §5: 10 s)."""


def with_status(jobs: pd.DataFrame, statuses: Iterable[str]) -> pd.DataFrame:
    """The rows of ``jobs`` whose ``status`` is one of ``statuses``."""
    return jobs[jobs["status"].isin(list(statuses))]


def mean(values) -> float:
    """Arithmetic mean; NaN for no values."""
    values = np.asarray(values, dtype=float)
    return float(values.mean()) if values.size else float("nan")


def mean_wait(jobs: pd.DataFrame) -> float:
    """Mean wait time ``mean(b - s)`` over the given jobs (s)."""
    return mean(jobs["start_time"].to_numpy(float) - jobs["submit_time"].to_numpy(float))


def mean_response(jobs: pd.DataFrame) -> float:
    """Mean response time ``mean(e - s)`` over the given jobs (s; Feitelson et al. §5).

    Elasticity calls it a job's runtime (Iorgulescu et al. §5.1: submission
    to the end of its last task).
    """
    return mean(jobs["end_time"].to_numpy(float) - jobs["submit_time"].to_numpy(float))


def mean_slowdown(jobs: pd.DataFrame) -> float:
    """Mean slowdown ``mean((e - s) / max(r, 1 s))``: response over run time, >= 1 (Feitelson et al. §5).

    The 1-second floor only keeps zero-length jobs defined.
    """
    response = jobs["end_time"].to_numpy(float) - jobs["submit_time"].to_numpy(float)
    return mean(response / np.maximum(jobs["run_time"].to_numpy(float), 1.0))


def mean_bounded_slowdown(jobs: pd.DataFrame, tau: float = BOUNDED_SLOWDOWN_TAU) -> float:
    """Mean bounded slowdown ``mean(max(1, (e - s) / max(r, τ)))``, τ = 10 s (Feitelson et al. §5).

    Short jobs no longer dominate the mean: a job shorter than τ counts as
    if it ran τ seconds.
    """
    response = jobs["end_time"].to_numpy(float) - jobs["submit_time"].to_numpy(float)
    return mean(np.maximum(response / np.maximum(jobs["run_time"].to_numpy(float), tau), 1.0))


def makespan(jobs: pd.DataFrame, ended: Iterable[str] | None = None) -> float:
    """``max(e) - min(s)`` (s): the last end among the jobs that count, from the first submission of all.

    ``ended``: the statuses whose end counts (``None``: every job's; a job
    with no end, NaN, is skipped). Batch counts the jobs that ran
    (``completed``, ``killed``: a cancelled job's end is when it was
    cancelled); elasticity counts every job. No job counted: 0.
    """
    counted = jobs if ended is None else with_status(jobs, ended)
    if not len(counted):
        return 0.0
    return float(counted["end_time"].max() - jobs["submit_time"].min())


def utilisation(jobs: pd.DataFrame, capacity: float, span: float) -> float:
    """Share of capacity used: ``Σ procs · (e - b) / (capacity · span)`` over the given jobs (Klusáček & Rudová §2.3).

    ``span`` is usually the makespan; 0 when there is no job, no span or no capacity.
    """
    if not len(jobs) or span <= 0 or capacity <= 0:
        return 0.0
    used = float((jobs["procs"] * (jobs["end_time"] - jobs["start_time"])).sum())
    return used / (capacity * span)


def time_weighted_mean(times, values, end: float) -> float:
    """Mean of a step function over ``[t_0, end]``: ``(1 / (end - t_0)) · Σ_i v_i · (t_{i+1} - t_i)``, ``t_n = end``.

    ``v_i`` holds on ``[t_i, t_{i+1})``; NaN if there is no step or ``end <= t_0``.
    """
    times = np.asarray(times, float)
    values = np.asarray(values, float)
    if times.size == 0 or end <= times[0]:
        return float("nan")
    spans = np.diff(np.append(times, end))
    return float(np.sum(values * spans) / (end - times[0]))
