"""Periods a log's audit looks for: capacity idle while a job that fit waited, and gaps between submissions.

Idle while waiting (a likely down time, a reservation, or a limit the log
does not name): a maximal run of segments of the recorded schedule
(:class:`~.audit_schedule.Segments`) in which the idle CPUs (the capacity
minus the CPUs in use) could hold the smallest waiting job, and yet no job
started. A job starting inside a run ends it, so one job held for weeks
(a user hold, a dependency) while the machine kept starting others is not
mistaken for a stalled machine; only periods of at least ``minimum_s`` are
kept (shorter ones are a scheduler's cycle).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .audit_schedule import Segments

#: The shortest idle period reported (a scheduler's cycle is seconds to minutes).
IDLE_MIN_S = 3600.0
#: The shortest gap between two submissions reported.
GAP_MIN_S = 86400.0

IDLE_COLUMNS = ("start", "end", "duration_s", "idle_cpus_min", "idle_cpus_max", "smallest_waiting_cpus",
                "waiting_jobs_max")


def idle_periods(seg: Segments, capacity: float, minimum_s: float = IDLE_MIN_S) -> pd.DataFrame:
    """The idle-while-waiting periods (module docstring), longest first, one row each (:data:`IDLE_COLUMNS`)."""
    if not len(seg.used):
        return pd.DataFrame({name: [] for name in IDLE_COLUMNS})
    idle = capacity - seg.used
    fits = idle >= seg.smallest_waiting          # inf (no waiting job) never fits
    # A run starts where it fits and either the previous segment did not, or a job started at this instant.
    begins = fits & ~np.r_[False, fits[:-1] & (seg.starts[1:] == 0)]
    run_id = np.cumsum(begins) - 1
    members = np.flatnonzero(fits)
    if not members.size:
        return pd.DataFrame({name: [] for name in IDLE_COLUMNS})
    ids = run_id[members]
    bounds = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])     # first member of each run
    first, last = members[bounds], members[np.r_[bounds[1:], members.size] - 1]
    start, end = seg.times[first], seg.times[last + 1]
    frame = pd.DataFrame({
        "start": start, "end": end, "duration_s": end - start,
        "idle_cpus_min": np.minimum.reduceat(idle[members], bounds),
        "idle_cpus_max": np.maximum.reduceat(idle[members], bounds),
        "smallest_waiting_cpus": np.minimum.reduceat(seg.smallest_waiting[members], bounds),
        "waiting_jobs_max": np.maximum.reduceat(seg.waiting[members], bounds),
    })
    frame = frame[frame["duration_s"] >= minimum_s]
    return frame.sort_values(["duration_s", "start"], ascending=[False, True], kind="stable").reset_index(drop=True)


def submission_gaps(submit: np.ndarray, minimum_s: float = GAP_MIN_S) -> pd.DataFrame:
    """Gaps of at least ``minimum_s`` between consecutive submissions (``start``, ``end``, ``duration_s``), longest
    first: an outage, a holiday, or a cut in the log."""
    ordered = np.sort(np.asarray(submit, dtype=float)[np.isfinite(submit)])
    gaps = np.diff(ordered)
    at = np.flatnonzero(gaps >= minimum_s)
    frame = pd.DataFrame({"start": ordered[at], "end": ordered[at + 1], "duration_s": gaps[at]})
    return frame.sort_values(["duration_s", "start"], ascending=[False, True], kind="stable").reset_index(drop=True)
