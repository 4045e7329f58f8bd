"""``calibrate``: which model setting makes a batch replay of a log reproduce the waits the log records.

A small grid over the knobs real sites need to close the gap between the
simulated and the recorded waits (issue "trust and decide", §1):
``estimates`` (``trace``: the users' requested times; ``perfect``),
``allocation`` (``cpus``; ``whole_nodes``), ``priorities`` (off; on: the
log's queues ranked by their recorded mean wait, shortest first,
:mod:`sched_engine.batch.queues`) and ``running_jobs_limits`` (running jobs
per user; 0 = no limit). Every combination runs once under ``policy`` on the
log (``trace``, ``jobs`` first jobs, ``machines`` or the header's cluster)
and is compared with the log (:func:`~sched_engine.analysis.baseline.compare_with_log`).

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

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..analysis.baseline import compare_with_log
from ..core import validate
from ..core.errors import ScenarioError
from ..registry import REGISTRY
from ..runner import normalize_scenario
from .batch import in_sweep
from .fields import check_fields, file_label, file_path, input_file
from .kind import SweepKind

KIND_NAME = "calibrate"
AXES = ("estimates", "allocation", "priorities", "running_jobs_limits")
DEFAULTS = {
    "trace": "hpc2n-excerpt.swf", "jobs": None, "machines": None, "policy": "easy",
    "estimates": ["trace", "perfect"], "allocation": ["cpus", "whole_nodes"], "priorities": [False, True],
    "running_jobs_limits": [0, 4, 16],
}
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
    if point["running_jobs_limit"]:
        model["user_limits"] = {"running_jobs": point["running_jobs_limit"]}
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
        "running_jobs_limits": validate.numbers(s["running_jobs_limits"], "running_jobs_limits", max_items=20,
                                                integer=True, minimum=0),
    }
    if normal["policy"] in ("cons", "ls") and any(normal["running_jobs_limits"]):
        raise ScenarioError("running_jobs_limits", "user limits need FCFS, FCFS-LB or EASY; use 0 (no limit)")
    first = points(normal)[0]
    try:
        normalize_scenario(scenario(first))   # the files and the header's cluster, checked once
    except ScenarioError as exc:
        raise in_sweep(exc) from None
    return normal


def inputs(s: dict) -> dict:
    """What the sweep reads, by content (part of its hash)."""
    model = normalize_scenario(scenario(points(s)[0])).model
    return {"trace": model["trace"]["sha256"], "clusters": model["clusters"]}


def count(s: dict) -> int:
    return int(np.prod([len(s[axis]) for axis in AXES]))


def points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("trace", "jobs", "machines", "policy")}
    return [{**common, "estimates": estimates, "allocation": allocation, "priorities": priorities,
             "running_jobs_limit": limit, "seed": 0}
            for estimates in s["estimates"] for allocation in s["allocation"] for priorities in s["priorities"]
            for limit in s["running_jobs_limits"]]


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
            "running_jobs_limit": point["running_jobs_limit"]}


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
    settings = ["estimates", "allocation", "priorities", "running_jobs_limit"]
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
        return (f"{row['estimates']} estimates, {row['allocation']}, queue priorities "
                f"{'on' if row['priorities'] else 'off'}, {limit}")

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
