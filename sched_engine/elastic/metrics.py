"""Metrics of elasticity runs: pure functions of the result frames.

Definitions follow §5.1 of Iorgulescu et al. (ATC'17): a job's runtime is
the time from its submission to the end of its last task; a map or reduce
phase lasts from the first request to launch one of its tasks to the end of
its last task.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def job_runtimes(jobs: pd.DataFrame) -> np.ndarray:
    """``end_time - submit_time`` of every finished job (s)."""
    done = jobs[jobs["status"] == "finished"]
    return done["end_time"].to_numpy(float) - done["submit_time"].to_numpy(float)


def average_job_runtime(jobs: pd.DataFrame) -> float:
    """Mean over finished jobs of ``end_time - submit_time`` (§6.1 "average job runtime")."""
    runtimes = job_runtimes(jobs)
    return float(runtimes.mean()) if runtimes.size else float("nan")


def makespan(jobs: pd.DataFrame) -> float:
    """``max(end_time) - min(submit_time)`` over all jobs (s)."""
    if jobs.empty:
        return 0.0
    return float(jobs["end_time"].max() - jobs["submit_time"].min())


def average_phase(jobs: pd.DataFrame, column: str) -> float:
    """Mean of a phase-duration column (``map_phase_s``/``reduce_phase_s``) over jobs that have the phase."""
    values = jobs[column].dropna()
    return float(values.mean()) if len(values) else float("nan")


def time_weighted_mean(times, values, end: float) -> float:
    """``(1 / (end - t0)) * sum_i v_i * (t_{i+1} - t_i)`` for a step function starting at ``t0 = times[0]``."""
    times = np.asarray(times, float)
    values = np.asarray(values, float)
    if times.size == 0 or end <= times[0]:
        return float("nan")
    spans = np.diff(np.append(times, end))
    return float(np.sum(values * spans) / (end - times[0]))


def runtime_ratio(jobs_a: pd.DataFrame, jobs_b: pd.DataFrame) -> float:
    """``average_job_runtime(a) / average_job_runtime(b)`` (Fig. 6: YARN-ME over YARN)."""
    return average_job_runtime(jobs_a) / average_job_runtime(jobs_b)


def share_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a share ``p = successes / n`` (z = 1.96: 95%).

    ``(c - h, c + h)`` with ``c = (p + z²/2n) / (1 + z²/n)`` and
    ``h = z / (1 + z²/n) * sqrt(p(1 - p)/n + z²/4n²)``; unlike ``p ± z·sqrt(p(1-p)/n)``
    it stays inside [0, 1] and is not empty at ``p`` = 0 or 1. ``(nan, nan)`` for ``n = 0``.
    """
    if n <= 0:
        return float("nan"), float("nan")
    p = successes / n
    scale = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / scale
    half = z / scale * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)
