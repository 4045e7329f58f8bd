"""Network isolation on access links: Libra's container placement and bandwidth allocation.

Ma, Jiang, Li & Li, "Maximizing Container-based Network Isolation in
Parallel Computing Clusters" (Libra). Policies are the paper's four schemes
(Sec. V): ``baseline`` (round-robin placement, per-flow fairness), ``drf``
and ``hug`` (round-robin placement), ``libra`` (Alg. 2 placement, Alg. 3
allocation); see :mod:`.policies` for mixing them.

``jobs`` (one row per application) adds: ``wait_time``, ``duration``
(end - start), ``width``, ``pattern``, ``weight``, ``mean_isolation`` (Eq. 1
averaged over the application's run, weighted by time), ``min_isolation``,
``placement`` (``machine:containers`` pairs joined by ``;``). ``status``:
``finished``, ``running`` (at the horizon) or ``waiting`` (never placed).

``timeline`` metrics: ``isolation`` per application (entity = its name),
``utilisation`` per link (entity ``<machine>/up`` or ``<machine>/down``,
allocated rate of unfinished transfers / capacity, recorded when it
changes), and for entity ``cluster``: ``running_apps``, ``waiting_apps``,
``bottleneck`` (largest U^k or D^k, Eq. 2).

``summary`` metrics: see :func:`summarise`.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..core import metrics
from ..core.registry import EngineEntry, Param, PolicyEntry
from ..core.result import summary_frame, timeline_frame
from .app_lists import APP_COLUMNS, APP_TEXT_COLUMNS, apps_from_rows, is_blank, number_cell, read_app_list
from .model import PATTERNS, Cluster, applications, machine_names, normalize_model
from .policies import ALLOCATION_NAMES, PLACEMENTS, NetworkScheme
from .presets import FIG1_CANDIDATE_FRACTION, FIG6_SLOTS, FIG6_VOLUME, PRESETS, fig1_model, fig6_model
from .simulate import Trace, simulate

ENGINE_NAME = "network"


def run_model(model: Mapping[str, Any], policy: NetworkScheme, rng: np.random.Generator, progress=None):
    """``(cluster, applications, trace)`` of a normalised model under ``policy``."""
    cluster = Cluster.from_groups(model["machines"])
    apps = applications(model, rng)
    return cluster, apps, simulate(cluster, apps, policy, rng, model["horizon"], progress)


def run(model: Mapping[str, Any], policy: NetworkScheme, rng: np.random.Generator, progress=None):
    """Engine entry point: ``(jobs, timeline, summary)`` frames."""
    cluster, apps, trace = run_model(model, policy, rng, progress)
    jobs = jobs_frame(cluster, apps, trace)
    return jobs, timeline(cluster, apps, trace), summarise(cluster, jobs, trace)


def _placement_text(names, machines) -> str:
    if machines is None:
        return ""
    where, count = np.unique(machines, return_counts=True)
    return ";".join(f"{names[k]}:{c}" for k, c in zip(where, count))


def jobs_frame(cluster: Cluster, apps, trace: Trace) -> pd.DataFrame:
    start, end = trace.start, trace.end
    status = np.where(~np.isnan(end), "finished", np.where(~np.isnan(start), "running", "waiting"))
    stop = np.where(np.isnan(end), trace.end_time, end)
    span = stop - start
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_iso = np.where(span > 0, trace.isolation_area / span, trace.isolation_min)
    submit = np.array([a.arrival for a in apps], dtype=float)
    return pd.DataFrame({
        "job_id": pd.Series([a.name for a in apps], dtype="string"),
        "submit_time": submit,
        "start_time": start,
        "end_time": end,
        "status": pd.Series(status, dtype="string"),
        "wait_time": start - submit,
        "duration": end - start,
        "width": np.array([a.width for a in apps], dtype=np.int64),
        "pattern": pd.Series([a.pattern for a in apps], dtype="string"),
        "weight": np.array([a.weight for a in apps], dtype=float),
        "mean_isolation": mean_iso,
        "min_isolation": trace.isolation_min,
        "placement": pd.Series([_placement_text(cluster.names, m) for m in trace.machines], dtype="string"),
    })


def timeline(cluster: Cluster, apps, trace: Trace) -> pd.DataFrame:
    if not trace.series:
        return timeline_frame([], [], [], [])
    links = cluster.link_names()
    times, index, metrics, values = zip(*trace.series)
    entities = [
        "cluster" if i < 0 else (apps[i].name if m == "isolation" else links[i])
        for i, m in zip(index, metrics)
    ]
    return timeline_frame(times, entities, metrics, values)


def summarise(cluster: Cluster, jobs: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    """Run-level metrics (the paper's Fig. 6/7 quantities).

    ``mean_isolation``: mean over placed applications of their
    time-averaged isolation guarantee (Eq. 1); ``min_isolation``: the lowest
    any application saw; ``mean_duration_s`` over finished applications;
    ``mean_wait_s`` (the jobs frame's ``wait_time``, start - submission) over placed ones;
    ``makespan_s``: last event time.

    ``link_utilisation`` (Sec. V's "average link utilization")::

        sum_l carried_l / sum_l (capacity_l x busy_l)

    over the links l that carried traffic, where ``carried_l`` is the data
    (Gb) sent over l and ``busy_l`` the time during which at least one flow
    was sending on l, counted once however many applications share l.
    Three applications keeping one link full for 6 s give 6 / (1 x 6) = 1.
    """
    finished = jobs["status"] == "finished"
    busy = trace.link_busy > 0
    capacity = cluster.link_capacity
    utilisation = trace.link_used[busy].sum() / (capacity[busy] * trace.link_busy[busy]).sum() if busy.any() else 0.0
    placed = jobs["start_time"].notna()
    rows = [
        ("applications", len(jobs), "apps"),
        ("finished", int(finished.sum()), "apps"),
        ("waiting", int((jobs["status"] == "waiting").sum()), "apps"),
        ("mean_isolation", jobs.loc[placed, "mean_isolation"].mean() if placed.any() else np.nan, "share"),
        ("min_isolation", jobs.loc[placed, "min_isolation"].min() if placed.any() else np.nan, "share"),
        ("mean_duration_s", jobs.loc[finished, "duration"].mean() if finished.any() else np.nan, "s"),
        ("mean_wait_s", metrics.mean(jobs.loc[placed, "wait_time"]), "s"),
        ("link_utilisation", utilisation, "share"),
        ("makespan_s", trace.end_time, "s"),
    ]
    return summary_frame(rows)


ENGINE = EngineEntry(
    name=ENGINE_NAME,
    label="Network isolation",
    normalize_model=normalize_model,
    run=run,
    description="Container placement and access-link bandwidth allocation (Libra, DRF, HUG, per-flow).",
    statuses=("finished", "running", "waiting"),
)

#: Every network scheme takes the same parameters (a placement and an allocation, Sec. V).
SCHEME_SCHEMA = {
    "placement": Param("choice", "container placement", choices=PLACEMENTS),
    "allocation": Param("choice", "bandwidth allocation", choices=ALLOCATION_NAMES),
    "candidate_fraction": Param("number", "share of machines in Libra's candidate set (Sec. V-B4)", low=0,
                                high=1, low_open=True),
    "tabu_iterations": Param("integer", "bound on Libra's tabu search (Alg. 2, line 8)", low=0),
}

POLICIES = [
    PolicyEntry(ENGINE_NAME, "baseline", "Baseline (per-flow)", NetworkScheme,
                "Round-robin placement (YARN-like), per-flow fairness on every link.",
                {"placement": "round-robin", "allocation": "per-flow"}, SCHEME_SCHEMA, randomised=True),
    PolicyEntry(ENGINE_NAME, "drf", "DRF", NetworkScheme,
                "Round-robin placement, DRF: every application omega_i / B of its demand, B the busiest link "
                "(Eq. 3); leaves bandwidth idle.",
                {"placement": "round-robin", "allocation": "drf"}, SCHEME_SCHEMA, randomised=True),
    PolicyEntry(ENGINE_NAME, "hug", "HUG", NetworkScheme,
                "Round-robin placement, HUG: DRF then strategy-proof backfilling.",
                {"placement": "round-robin", "allocation": "hug"}, SCHEME_SCHEMA, randomised=True),
    PolicyEntry(ENGINE_NAME, "libra", "Libra", NetworkScheme,
                "LP + rounding + tabu placement on 5.86 % candidates; Alg. 3 allocation with backfill.",
                {"placement": "libra", "allocation": "libra"}, SCHEME_SCHEMA),
]

__all__ = [
    "ENGINE", "POLICIES", "NetworkScheme", "normalize_model", "run", "run_model",
    # presets, patterns and the readers of application lists (the Network page's forms)
    "APP_COLUMNS", "APP_TEXT_COLUMNS", "FIG1_CANDIDATE_FRACTION", "FIG6_SLOTS", "FIG6_VOLUME", "PATTERNS", "PRESETS",
    "apps_from_rows", "fig1_model", "fig6_model", "is_blank", "machine_names", "number_cell", "read_app_list",
]
