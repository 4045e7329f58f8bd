"""Machine failures: from a failure trace, or generated (Klusáček & Rudová §4.1).

The synthetic generator follows the paper's model: the number of machine
failures is ``F = N · D · AFC`` (Eq. 1; N machines, D hours, AFC failures
per machine per hour); failure events arrive with Weibull inter-arrival
times and some are bursts (several machines of one cluster failing at almost
the same time, after Zhang et al.); durations are Weibull; clusters are hit
in proportion to their machine count and machines uniformly within one.

Defaults come from the MetaCentrum 2009 failure trace shipped in
``sample_traces/``: 569 machine failures on 210 machines over 160.4 days
give AFC = 7.0e-4 per machine-hour; a Weibull fit of its durations
(``scipy.stats.weibull_min.fit``, location 0) gives shape 0.31 and scale
145,877 s. Inter-arrival shape and burst parameters are not given in the
paper and are left to the user (defaults: 0.7, 10% bursts of 2-4 machines).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .traces import TraceError

FAILURE_COLUMNS = ("start", "cluster", "duration", "machine")

SYNTHETIC_DEFAULTS = {
    "afc": 7.0e-4,
    "interarrival_shape": 0.7,
    "burst_probability": 0.1,
    "max_burst": 4,
    "burst_spread_s": 60.0,
    "duration_shape": 0.31,
    "duration_scale_s": 145877.0,
}


def failure_count(machines: int, hours: float, afc: float) -> int:
    """Eq. 1: ``F = N · D · AFC``, rounded to whole failures."""
    return int(round(machines * hours * afc))


def synthetic_failures(
    cluster_names: list[str],
    machine_counts: list[int],
    span_s: float,
    rng: np.random.Generator,
    *,
    afc: float = SYNTHETIC_DEFAULTS["afc"],
    interarrival_shape: float = SYNTHETIC_DEFAULTS["interarrival_shape"],
    burst_probability: float = SYNTHETIC_DEFAULTS["burst_probability"],
    max_burst: int = SYNTHETIC_DEFAULTS["max_burst"],
    burst_spread_s: float = SYNTHETIC_DEFAULTS["burst_spread_s"],
    duration_shape: float = SYNTHETIC_DEFAULTS["duration_shape"],
    duration_scale_s: float = SYNTHETIC_DEFAULTS["duration_scale_s"],
) -> pd.DataFrame:
    """Generate machine failures over ``[0, span_s)``; one row per failed machine."""
    machines = np.asarray(machine_counts, dtype=np.int64)
    target = failure_count(int(machines.sum()), span_s / 3600.0, afc)
    rows: list[tuple[float, str, float, int]] = []
    if target == 0 or span_s <= 0:
        return _frame(rows)
    mean_burst = 1.0 + burst_probability * ((2 + max(max_burst, 2)) / 2.0 - 1.0)
    mean_gap = span_s / (target / mean_burst)
    gap_scale = mean_gap / math.gamma(1.0 + 1.0 / interarrival_shape)
    weights = machines / machines.sum()
    time = 0.0
    while len(rows) < target:
        time += gap_scale * rng.weibull(interarrival_shape)
        if time >= span_s:
            break
        cluster = int(rng.choice(len(machines), p=weights))
        size = 1
        if max_burst >= 2 and rng.random() < burst_probability:
            size = int(rng.integers(2, max_burst + 1))
        size = min(size, int(machines[cluster]), target - len(rows))
        hit = rng.choice(int(machines[cluster]), size=size, replace=False)
        for order, machine in enumerate(sorted(int(m) for m in hit)):
            start = time + (rng.uniform(0.0, burst_spread_s) if order else 0.0)
            duration = max(1.0, duration_scale_s * rng.weibull(duration_shape))
            rows.append((round(start, 3), cluster_names[cluster], round(duration, 3), machine))
    return _frame(rows)


def _frame(rows) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "start": np.array([r[0] for r in rows], dtype=float),
            "cluster": pd.Series([r[1] for r in rows], dtype="string"),
            "duration": np.array([r[2] for r in rows], dtype=float),
            "machine": np.array([r[3] for r in rows], dtype=np.int64),
        }
    )


def failure_events(
    failures: pd.DataFrame,
    cluster_names: list[str],
    machine_counts: list[int],
    *,
    offset: float,
    source: str = "failures",
) -> list[tuple[float, int, int, float]]:
    """``(time, cluster index, machine, duration)`` per failure, times shifted by ``-offset``.

    Failures before time 0 keep only their remaining duration; names and
    machine indices are checked against the clusters.
    """
    index = {name: i for i, name in enumerate(cluster_names)}
    events = []
    for row in failures.itertuples(index=False):
        if row.cluster not in index:
            raise TraceError(
                "cluster", f"failure names cluster {row.cluster!r}; the clusters are {', '.join(cluster_names)}",
                source=source,
            )
        cluster = index[row.cluster]
        if row.machine >= machine_counts[cluster]:
            raise TraceError(
                "machines", f"machine {row.machine} of {row.cluster} does not exist "
                f"(it has {machine_counts[cluster]})", source=source,
            )
        start, end = row.start - offset, row.start - offset + row.duration
        if end <= 0:
            continue
        events.append((max(start, 0.0), cluster, int(row.machine), end - max(start, 0.0)))
    events.sort()
    return events
