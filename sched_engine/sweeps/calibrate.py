"""``calibrate``: which model setting makes a batch replay of a log reproduce the waits the log records.

A small grid over the knobs real sites need to close the gap between the
simulated and the recorded waits (issue "trust and decide", §1):
``estimates`` (``trace``: the users' requested times; ``perfect``),
``allocation`` (``cpus``; ``whole_nodes``), ``priorities`` (off; on: the
log's queues ranked by their recorded mean wait, shortest first,
:mod:`sched_engine.batch.queues`), per-user limits and the capacity. Every
combination runs once under ``policy`` on the log (``trace``, ``jobs``
first jobs, ``machines`` or the header's cluster) and is compared with the
log (:func:`~sched_engine.analysis.baseline.compare_with_log`).

The limits and the capacity start from what the log says, not from a blind
grid (:mod:`sched_engine.analysis.calibration_grid`): with
``running_jobs_limits: "from_log"`` (the default) the limits tried are no limit
and a quarter to twice (a factor of sqrt(2) apart) the most running jobs and
CPUs any one user had at once (each a pair: ``running_jobs_limits[i]`` running jobs and
``cpu_limits[i]`` CPUs per user); with ``capacities: "from_log"`` (the default)
the capacities are the hardware and, where the log used more, the audit's
capacity (its time-weighted p99.9 of CPUs in use, ``log_p999``) and its
peak (``log``). Normalising writes the values found into the spec, so the
sweep's hash, table and CSV say which were tried. Explicit values are
taken as given: ``running_jobs_limits`` a list of running jobs per user (0 =
no limit) with ``cpu_limits`` None (no CPU limit) or a list of CPUs per user
paired with it; ``capacities`` a list of ``hardware``, ``log``,
``log_p99``, ``log_p999``.

Metrics per point: ``recorded_mean_wait_s``, ``simulated_mean_wait_s``,
``mean_wait_error`` = |simulated / recorded mean wait − 1|,
``share_within_10min``, ``wait_rank_correlation`` (Spearman),
``compared_jobs``.

Ranking (:func:`rank`): each point is ranked on each of the three
measures of fit (``mean_wait_error`` ascending, ``share_within_10min`` and
``wait_rank_correlation`` descending; a missing correlation ranks last);
the settings are ordered by the mean of their three ranks, ties by
``mean_wait_error``. The *reference* is the point with the first value of
every list (by default the users' estimates, CPUs, no queue order, no
limit: the engine's plain replay); the summary says by how much the best
setting beats it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..analysis import calibration_grid
from ..analysis.baseline import compare_with_log
from ..core import validate
from ..core.errors import ScenarioError
from ..registry import REGISTRY
from ..runner import normalize_scenario
from .batch import in_sweep
from .fields import check_fields, file_label, file_path, input_file
from .kind import SweepKind

KIND_NAME = "calibrate"
AXES = ("estimates", "allocation", "priorities", "running_jobs_limits", "capacities")
#: The value of ``running_jobs_limits`` and ``capacities`` that takes them from the log (module docstring).
FROM_LOG = "from_log"
CAPACITIES = (calibration_grid.HARDWARE, "log", "log_p99", "log_p999")
#: Policies that take no user limits (sched_engine.batch.queues).
NO_LIMITS = ("cons", "ls")
DEFAULTS = {
    "trace": "hpc2n-excerpt.swf", "jobs": None, "machines": None, "policy": "easy",
    "estimates": ["trace", "perfect"], "allocation": ["cpus", "whole_nodes"], "priorities": [False, True],
    "running_jobs_limits": FROM_LOG, "cpu_limits": None, "capacities": FROM_LOG,
}
SETTINGS = ("estimates", "allocation", "priorities", "running_jobs_limit", "cpus_limit", "capacity")
CAPACITY_WORDS = {"hardware": "the hardware", "log": "the log's peak of CPUs", "log_p99": "the log's p99 of CPUs",
                  "log_p999": "the capacity the log used (its p99.9 of CPUs)"}
FIT = ("mean_wait_error", "share_within_10min", "wait_rank_correlation")
METRICS = ("mean_wait_error", "share_within_10min", "wait_rank_correlation", "simulated_mean_wait_s",
           "recorded_mean_wait_s", "compared_jobs")


def scenario(point: Mapping[str, Any]) -> dict:
    """The batch scenario of one point."""
    model: dict = {
        "trace": {"path": file_path(point["trace"]), "label": file_label(point["trace"]), "max_jobs": point["jobs"]},
        "estimates": point["estimates"],
        "allocation": point["allocation"],
    }
    if point["machines"]:
        model["machines_path"] = file_path(point["machines"])
    if point["priorities"]:
        model["queues"] = {"priority": "recorded_wait"}
    limits = {name: point[key] for name, key in (("running_jobs", "running_jobs_limit"), ("cpus", "cpus_limit"))
              if point.get(key)}
    if limits:
        model["user_limits"] = limits
    model = calibration_grid.capacity_model(model, point.get("capacity", calibration_grid.HARDWARE))
    return {"engine": "batch", "policy": point["policy"], "seed": 0, "model": model}


def normalize(spec: Mapping[str, Any]) -> dict:
    s = check_fields(spec, DEFAULTS)
    priorities = validate.items(s["priorities"], "priorities", max_items=2, what="true/false values")
    normal = {
        "kind": KIND_NAME,
        "trace": input_file(s["trace"], "trace"),
        "jobs": None if s["jobs"] is None else validate.whole(s["jobs"], "jobs", minimum=1),
        "machines": input_file(s["machines"], "machines") if s["machines"] else None,
        "policy": validate.choice(s["policy"], "policy", [p.name for p in REGISTRY.policies("batch")]),
        "estimates": validate.choices(s["estimates"], "estimates", ("trace", "perfect")),
        "allocation": validate.choices(s["allocation"], "allocation", ("cpus", "whole_nodes")),
        "priorities": validate.distinct([validate.boolean(v, f"priorities[{i}]") for i, v in enumerate(priorities)],
                                        "priorities"),
    }
    try:
        base = normalize_scenario(scenario({**normal, "estimates": normal["estimates"][0],
                                            "allocation": normal["allocation"][0], "priorities": False,
                                            "running_jobs_limit": 0}))   # the files and the header's cluster
        found = _findings(json.dumps(base.to_dict(), sort_keys=True)) if FROM_LOG in (s["running_jobs_limits"],
                                                                                       s["capacities"]) else None
    except ScenarioError as exc:
        raise in_sweep(exc) from None
    normal.update(_limits(s, found, normal["policy"] not in NO_LIMITS), capacities=_capacities(s["capacities"], found))
    if normal["policy"] in NO_LIMITS and any(normal["running_jobs_limits"]):
        raise ScenarioError("running_jobs_limits", "user limits need FCFS, FCFS-LB or EASY; use 0 (no limit)")
    return normal


@lru_cache(maxsize=8)
def _findings(scenario: str) -> calibration_grid.GridFindings:
    """The findings of a normalised scenario (JSON), read once per process: its files are named by content, so the
    same text is the same log (a form's point count asks again at every edit; a large log takes seconds)."""
    return calibration_grid.findings(json.loads(scenario))


def _limits(s: dict, found, limited: bool) -> dict:
    """``running_jobs_limits`` and ``cpu_limits`` (paired, or None: no CPU limit) of a spec (module docstring);
    ``limited``: whether the policy takes user limits (from the log, only no limit where it does not)."""
    if s["running_jobs_limits"] == FROM_LOG:
        if s["cpu_limits"] is not None:
            raise ScenarioError("cpu_limits", "leave it out when running_jobs_limits is \"from_log\": the log gives both")
        pairs = calibration_grid.limit_candidates(found) if limited else [(0, 0)]
        return {"running_jobs_limits": [jobs for jobs, _ in pairs], "cpu_limits": [cpus for _, cpus in pairs]}
    jobs = [validate.whole(v, f"running_jobs_limits[{i}]", minimum=0) for i, v in enumerate(
        validate.items(s["running_jobs_limits"], "running_jobs_limits", max_items=20, what="whole numbers"))]
    if s["cpu_limits"] is None:
        return {"running_jobs_limits": validate.distinct(jobs, "running_jobs_limits"), "cpu_limits": None}
    cpus = [validate.whole(v, f"cpu_limits[{i}]", minimum=0) for i, v in enumerate(
        validate.items(s["cpu_limits"], "cpu_limits", max_items=20, what="whole numbers"))]
    if len(cpus) != len(jobs):
        raise ScenarioError("cpu_limits", f"one per running-jobs limit ({len(jobs)}), got {len(cpus)}")
    validate.distinct(list(zip(jobs, cpus)), "running_jobs_limits")
    return {"running_jobs_limits": jobs, "cpu_limits": cpus}


def _capacities(value, found) -> list[str]:
    if value == FROM_LOG:
        return calibration_grid.capacity_candidates(found)
    return validate.choices(value, "capacities", CAPACITIES)


def inputs(s: dict) -> dict:
    """What the sweep reads, by content (part of its hash)."""
    model = normalize_scenario(scenario(points(s)[0])).model
    return {"trace": model["trace"]["sha256"], "clusters": model["clusters"]}


def count(s: dict) -> int:
    return int(np.prod([len(s[axis]) for axis in AXES]))


def points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("trace", "jobs", "machines", "policy")}
    cpus = s.get("cpu_limits") or [0] * len(s["running_jobs_limits"])
    return [{**common, "estimates": estimates, "allocation": allocation, "priorities": priorities,
             "running_jobs_limit": limit, "cpus_limit": cpu_limit, "capacity": capacity, "seed": 0}
            for estimates in s["estimates"] for allocation in s["allocation"] for priorities in s["priorities"]
            for limit, cpu_limit in zip(s["running_jobs_limits"], cpus) for capacity in s["capacities"]]


def run(point: Mapping[str, Any]) -> dict:
    """One setting replayed and compared with the log (the run records no pending reasons: not needed here)."""
    from ..batch import jobs_frame, simulate  # the engine, imported when a point runs

    try:
        normal = normalize_scenario(scenario(point))
        sim = simulate(normal.model, REGISTRY.create("batch", normal.policy, normal.policy_params),
                       np.random.default_rng(normal.seed), record_pending=False)
    except ScenarioError as exc:
        raise in_sweep(exc) from None
    jobs = jobs_frame(sim)
    values = dict(zip(*compare_with_log(jobs, jobs).summary[["metric", "value"]].to_numpy().T))
    recorded, simulated = float(values["recorded_mean_wait_s"]), float(values["simulated_mean_wait_s"])
    error = abs(simulated / recorded - 1) if recorded > 0 else float("nan")
    return {"mean_wait_error": error, "share_within_10min": float(values["share_within_10min"]),
            "wait_rank_correlation": float(values["wait_rank_correlation"]), "simulated_mean_wait_s": simulated,
            "recorded_mean_wait_s": recorded, "compared_jobs": float(values["compared_jobs"])}


def parameters(point: Mapping[str, Any]) -> dict:
    return {"estimates": point["estimates"], "allocation": point["allocation"], "priorities": point["priorities"],
            "running_jobs_limit": point["running_jobs_limit"], "cpus_limit": point.get("cpus_limit", 0),
            "capacity": point.get("capacity", calibration_grid.HARDWARE)}


def rank(table: pd.DataFrame) -> pd.DataFrame:
    """The points ordered by fit (see the module docstring): ``rank``, the settings, ``score``, the metrics,
    ``reference`` (True on the reference setting's row)."""
    if table.empty:
        return table
    ranks = pd.DataFrame({
        "error": table["mean_wait_error"].rank(method="min", ascending=True, na_option="bottom"),
        "within": table["share_within_10min"].rank(method="min", ascending=False, na_option="bottom"),
        "rho": table["wait_rank_correlation"].rank(method="min", ascending=False, na_option="bottom"),
    })
    ordered = table.assign(score=ranks.mean(axis=1), reference=table["point"] == table["point"].min())
    ordered = ordered.sort_values(["score", "mean_wait_error", "point"], kind="stable").reset_index(drop=True)
    ordered.insert(0, "rank", np.arange(1, len(ordered) + 1))
    settings = [name for name in SETTINGS if name in ordered.columns]   # tables of earlier versions lack some
    return ordered[["rank", *settings, "score", *METRICS, "reference", "point"]]


def verdict(ranked: pd.DataFrame) -> str:
    """The best setting and how much it beats the reference, in one sentence."""
    if ranked.empty:
        return "no settings ran"
    best, reference = ranked.iloc[0], ranked[ranked["reference"]].iloc[0]
    if not best["compared_jobs"] or not best["recorded_mean_wait_s"] > 0:
        return ("the log records no wait times (or only zero waits) to compare with: no setting can be "
                "judged against it")

    def setting(row) -> str:
        limit = (f"at most {int(row['running_jobs_limit'])} running jobs per user" if row["running_jobs_limit"]
                 else "no user limit")
        if row.get("cpus_limit"):
            limit += f" and {int(row['cpus_limit']):,} CPUs"
        capacity = row.get("capacity", calibration_grid.HARDWARE)
        where = "" if capacity == calibration_grid.HARDWARE else f", on {CAPACITY_WORDS.get(capacity, capacity)}"
        return (f"{row['estimates']} estimates, {row['allocation']}, queue priorities "
                f"{'on' if row['priorities'] else 'off'}, {limit}{where}")

    text = (f"best: {setting(best)} -- simulated mean wait {best['simulated_mean_wait_s']:,.0f} s vs the log's "
            f"{best['recorded_mean_wait_s']:,.0f} s (off by {best['mean_wait_error']:.0%}), "
            f"{best['share_within_10min']:.0%} within 10 min, Spearman {best['wait_rank_correlation']:.2f}")
    if best["reference"]:
        return text + "; the reference setting is already the best"
    return (text + f"; the reference ({setting(reference)}) is off by {reference['mean_wait_error']:.0%}, "
            f"{reference['share_within_10min']:.0%} within 10 min, Spearman {reference['wait_rank_correlation']:.2f}")


KIND = SweepKind(KIND_NAME, "Calibrate against the log", DEFAULTS,
                 {"jobs": 500, "allocation": ["cpus"], "running_jobs_limits": [0, 4]},
                 normalize, count, points, run, parameters, rank, fingerprint=inputs)
