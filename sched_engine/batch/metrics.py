"""Objectives of batch runs (Klusáček & Rudová §2.3), as pure functions of the ``jobs`` frame.

As in the paper, the time-based objectives count successfully completed
jobs only; killed and cancelled jobs are counted separately. With ``r`` the
run time, ``s`` submission, ``b`` start and ``e`` end of a completed job:
"""

from __future__ import annotations

import numpy as np
import pandas as pd

BOUNDED_SLOWDOWN_TAU = 10.0


def _completed(jobs: pd.DataFrame) -> pd.DataFrame:
    return jobs[jobs["status"] == "completed"]


def _mean(values) -> float:
    values = np.asarray(values, dtype=float)
    return float(values.mean()) if values.size else float("nan")


def mean_response_time(jobs: pd.DataFrame) -> float:
    """Average response time ``mean(e - s)`` (Feitelson et al.)."""
    done = _completed(jobs)
    return _mean(done["end_time"] - done["submit_time"])


def mean_wait_time(jobs: pd.DataFrame) -> float:
    """Average wait time ``mean(b - s)``."""
    done = _completed(jobs)
    return _mean(done["start_time"] - done["submit_time"])


def mean_slowdown(jobs: pd.DataFrame) -> float:
    """Average slowdown ``mean((e - s) / max(r, 1 s))`` -- response over run time, >= 1.

    The 1-second floor only keeps zero-length jobs defined.
    """
    done = _completed(jobs)
    return _mean((done["end_time"] - done["submit_time"]) / np.maximum(done["run_time"], 1.0))


def mean_bounded_slowdown(jobs: pd.DataFrame, tau: float = BOUNDED_SLOWDOWN_TAU) -> float:
    """Average bounded slowdown ``mean(max(1, (e - s) / max(r, tau)))`` with ``tau`` = 10 s."""
    done = _completed(jobs)
    ratio = (done["end_time"] - done["submit_time"]) / np.maximum(done["run_time"], tau)
    return _mean(np.maximum(ratio, 1.0))


def count_status(jobs: pd.DataFrame, status: str) -> int:
    """Number of jobs that ended with ``status`` (``completed``, ``killed``, ``cancelled``)."""
    return int((jobs["status"] == status).sum())


def makespan(jobs: pd.DataFrame) -> float:
    """``max(e) - min(s)`` over jobs that ran (completed or killed)."""
    ran = jobs[jobs["status"].isin(["completed", "killed"])]
    return float(ran["end_time"].max() - jobs["submit_time"].min()) if len(ran) else 0.0


def utilisation(jobs: pd.DataFrame, total_cpus: int) -> float:
    """Share of CPU time used: ``Σ procs · (e - b) / (total CPUs · makespan)`` over jobs that ran.

    Killed jobs count the CPU time they held before the failure.
    """
    ran = jobs[jobs["status"].isin(["completed", "killed"])]
    span = makespan(jobs)
    if not len(ran) or span <= 0 or total_cpus <= 0:
        return 0.0
    used = float((ran["procs"] * (ran["end_time"] - ran["start_time"])).sum())
    return used / (total_cpus * span)
