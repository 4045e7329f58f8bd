"""Metrics only elasticity runs have: pure functions of the result frames.

Definitions follow §5.1 of Iorgulescu et al. (ATC'17): a map or reduce
phase lasts from the first request to launch one of its tasks to the end of
its last task. A job's runtime (submission to the end of its last task) is
the shared response time, :func:`sched_engine.core.metrics.mean_response`.
"""

from __future__ import annotations

import math

import pandas as pd


def average_phase(jobs: pd.DataFrame, column: str) -> float:
    """Mean of a phase-duration column (``map_phase_s``/``reduce_phase_s``) over jobs that have the phase."""
    values = jobs[column].dropna()
    return float(values.mean()) if len(values) else float("nan")


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
